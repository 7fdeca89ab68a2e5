#include "data/image_decode.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "core/error.h"
#include "core/ops.h"
#include "data/file_io.h"

#ifdef WICK_HAVE_PNG
#include <png.h>
#endif
#ifdef WICK_HAVE_JPEG
#include <jpeglib.h>
#endif

namespace wick::data {

namespace {

constexpr const char* kOp = "decode_image";
// Decoded pixels are bounded before anything is allocated: a header may claim any size.
constexpr uint64_t kMaxPixels = uint64_t{1} << 28;

#ifdef WICK_HAVE_PNG
Tensor decode_png(const std::vector<uint8_t>& bytes, ImageMode mode, const std::string& name) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  // The simplified API reports errors in image.message and returns 0; no longjmp reaches us.
  struct Free {
    png_image* i;
    ~Free() { png_image_free(i); }
  } free_on_exit{&image};
  check_state(png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()) != 0, kOp, name,
              ": not a readable PNG: ", image.message);
  check_state(uint64_t{image.width} * image.height <= kMaxPixels, kOp, name, ": PNG claims ",
              image.width, "x", image.height, " pixels, more than ", kMaxPixels);
  image.format = mode == ImageMode::kGray ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  std::vector<uint8_t> pixels(PNG_IMAGE_SIZE(image));
  check_state(png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr) != 0, kOp, name,
              ": corrupt PNG: ", image.message);
  auto channels = static_cast<int64_t>(mode);
  int64_t h = image.height, w = image.width;
  // HWC bytes to CHW floats.
  Tensor out = empty(Shape{channels, h, w}, kFloat32);
  float* dst = out.data<float>();
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < h * w; ++i) dst[c * h * w + i] = pixels[i * channels + c] / 255.0f;
  return out;
}
#endif

#ifdef WICK_HAVE_JPEG
// libjpeg reports errors by calling error_exit, which must not return: it longjmps back here.
// Nothing with a destructor lives between setjmp and the longjmp (the pixels are a jpeg-managed
// buffer or allocated before setjmp), so skipping destructors is safe.
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr info) {
  auto* error = reinterpret_cast<JpegError*>(info->err);
  (*info->err->format_message)(info, error->message);
  std::longjmp(error->jump, 1);
}

// A warning is an error here (libjpeg-turbo's TJFLAG_STOPONWARNING, Pillow's default for truncated
// files): libjpeg would pad a scan that ends early with grey - a silent wrong image - and keep
// decoding, so a 300-byte file whose header claims 84 Mpixels cost seconds of work (a fuzzer
// timeout) for a picture that is not in it.
void jpeg_warning_is_error(j_common_ptr info, int level) {
  if (level < 0) jpeg_error_exit(info);  // -1: a warning; 0 and up: trace messages
}

Tensor decode_jpeg(const std::vector<uint8_t>& bytes, ImageMode mode, const std::string& name) {
  jpeg_decompress_struct info;
  JpegError error;
  info.err = jpeg_std_error(&error.mgr);
  error.mgr.error_exit = jpeg_error_exit;
  error.mgr.emit_message = jpeg_warning_is_error;
  std::vector<uint8_t> pixels;
  int64_t h = 0, w = 0;
  const auto channels = static_cast<int64_t>(mode);
  bool too_big = false;
  if (setjmp(error.jump) != 0) {
    jpeg_destroy_decompress(&info);
    throw std::runtime_error(error_message(kOp, name, ": corrupt JPEG: ", error.message));
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  info.out_color_space = mode == ImageMode::kGray ? JCS_GRAYSCALE : JCS_RGB;
  h = info.image_height;
  w = info.image_width;
  too_big = static_cast<uint64_t>(h) * static_cast<uint64_t>(w) > kMaxPixels;
  if (!too_big) {
    jpeg_start_decompress(&info);
    pixels.resize(static_cast<size_t>(h * w * channels));
    while (info.output_scanline < info.output_height) {
      JSAMPROW row = pixels.data() + static_cast<size_t>(info.output_scanline) * w * channels;
      jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
  }
  jpeg_destroy_decompress(&info);
  check_state(!too_big, kOp, name, ": JPEG claims ", w, "x", h, " pixels, more than ", kMaxPixels);
  Tensor out = empty(Shape{channels, h, w}, kFloat32);
  float* dst = out.data<float>();
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < h * w; ++i) dst[c * h * w + i] = pixels[i * channels + c] / 255.0f;
  return out;
}
#endif

bool is_png(const std::vector<uint8_t>& b) {
  static const uint8_t kMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  return b.size() >= 8 && std::memcmp(b.data(), kMagic, 8) == 0;
}

bool is_jpeg(const std::vector<uint8_t>& b) {
  return b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF;
}

}  // namespace

bool has_png() {
#ifdef WICK_HAVE_PNG
  return true;
#else
  return false;
#endif
}

bool has_jpeg() {
#ifdef WICK_HAVE_JPEG
  return true;
#else
  return false;
#endif
}

Tensor decode_image(const std::vector<uint8_t>& bytes, ImageMode mode, const std::string& name) {
  (void)mode;  // unused when wick is built without both libraries
  if (is_png(bytes)) {
#ifdef WICK_HAVE_PNG
    return decode_png(bytes, mode, name);
#else
    throw std::runtime_error(error_message(kOp, name, ": wick was built without libpng"));
#endif
  }
  if (is_jpeg(bytes)) {
#ifdef WICK_HAVE_JPEG
    return decode_jpeg(bytes, mode, name);
#else
    throw std::runtime_error(error_message(kOp, name, ": wick was built without libjpeg"));
#endif
  }
  throw std::runtime_error(
      error_message(kOp, name, ": neither a PNG nor a JPEG file (", bytes.size(), " bytes)"));
}

}  // namespace wick::data
