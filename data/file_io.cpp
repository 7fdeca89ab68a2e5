#include "data/file_io.h"

#include <zlib.h>

#include <sys/stat.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "core/error.h"
#include "core/ops.h"

namespace wick::data {

namespace {

std::vector<uint8_t> read_raw(const std::string& path, const char* op) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  check_state(in.is_open(), op, "cannot open ", path, ": ", std::strerror(errno));
  std::streamoff size = in.tellg();
  check_state(size >= 0, op, "cannot tell the size of ", path);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  check_state(in.good() || (size == 0 && !in.bad()), op, "error while reading ", path);
  return bytes;
}

// Inflates every gzip member in `in` (gzip allows several back to back, as `cat a.gz b.gz` makes).
std::vector<uint8_t> gunzip(const std::vector<uint8_t>& in, const std::string& path,
                            const char* op) {
  check_state(in.size() <= std::numeric_limits<uInt>::max(), op, path,
              " is too large to decompress in one piece (", in.size(), " bytes)");
  z_stream stream;
  std::memset(&stream, 0, sizeof(stream));
  // 16 + MAX_WBITS: expect a gzip header and trailer; zlib checks the trailer's CRC-32 and length.
  check_state(inflateInit2(&stream, 16 + MAX_WBITS) == Z_OK, op, "zlib could not start for ", path);
  struct End {
    z_stream* s;
    ~End() { inflateEnd(s); }
  } end{&stream};
  stream.next_in = const_cast<Bytef*>(in.data());
  stream.avail_in = static_cast<uInt>(in.size());
  std::vector<uint8_t> out, chunk(1 << 16);
  while (true) {
    stream.next_out = chunk.data();
    stream.avail_out = static_cast<uInt>(chunk.size());
    int status = inflate(&stream, Z_NO_FLUSH);
    out.insert(out.end(), chunk.data(), chunk.data() + (chunk.size() - stream.avail_out));
    if (status == Z_OK) continue;
    if (status == Z_STREAM_END) {
      if (stream.avail_in == 0) return out;
      inflateReset(&stream);  // another member follows
      continue;
    }
    // Z_BUF_ERROR: no progress was possible, i.e. the input ended inside a compressed stream.
    check_state(status != Z_BUF_ERROR, op, path, " is a truncated gzip file: it ends inside the ",
                "compressed data, after ", out.size(), " decompressed bytes");
    throw std::runtime_error(error_message(
        op, path, " is not a valid gzip file: ", stream.msg ? stream.msg : zError(status)));
  }
}

}  // namespace

bool file_exists(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

Tensor image_from_bytes(const uint8_t* pixels, const Shape& shape) {
  Tensor image = empty(shape, kFloat32);
  float* out = image.data<float>();
  for (int64_t i = 0, n = image.numel(); i < n; ++i)
    out[i] = pixels[i] / 255.0f;  // as torchvision: exact k / 255
  return image;
}

std::vector<uint8_t> read_file(const std::string& path, const char* op) {
  std::vector<uint8_t> bytes = read_raw(path, op);
  if (bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) return gunzip(bytes, path, op);
  return bytes;
}

}  // namespace wick::data
