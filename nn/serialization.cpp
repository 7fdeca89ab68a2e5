// safetensors reading and writing: the JSON header (through nlohmann::json), the checks a file must
// pass before any byte of it is trusted, and the atomic write. The format is described in
// nn/serialization.h.
#include "nn/serialization.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factory.h"

namespace wick {

namespace {

// Note [safetensors byte order]
// safetensors data is little-endian, and so is every machine wick runs on (x86-64, AArch64, CUDA
// hosts), so tensor bytes are copied as they are. A big-endian port would byte-swap here.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors I/O assumes a little-endian host");

using Metadata = std::map<std::string, std::string>;
using nlohmann::json;

constexpr const char* kSave = "save_safetensors";
constexpr const char* kLoad = "load_safetensors";
constexpr const char* kMetadataKey = "__metadata__";
// The reference implementation refuses headers over 100 MB; so do we, before allocating one.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// A valid header nests three deep (object > tensor entry > shape array) and its arrays are shapes
// and offset pairs. Refusing much deeper nesting or much longer arrays while parsing keeps a
// corrupt header from building a tree many times its size in memory.
constexpr int kMaxJsonDepth = 8;
constexpr size_t kMaxJsonArray = 64;
constexpr uint64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

struct DTypeName {
  const char* name;
  DType dtype;
};
constexpr DTypeName kDTypeNames[] = {
    {"F64", kFloat64}, {"F32", kFloat32}, {"F16", kFloat16}, {"BF16", kBFloat16}, {"I64", kInt64},
    {"I32", kInt32},   {"U8", kUInt8},    {"I8", kInt8},     {"BOOL", kBool},
};

const char* safetensors_dtype_name(DType dtype) {
  for (const DTypeName& d : kDTypeNames) {
    if (d.dtype == dtype) return d.name;
  }
  throw TypeError(error_message(kSave, "no safetensors name for dtype ", dtype));
}

// A name from a file, quoted and cut short: a corrupt header can hold megabyte-long keys.
std::string quoted(const std::string& s) {
  constexpr size_t kMax = 80;
  return "'" + (s.size() <= kMax ? s : s.substr(0, kMax) + "...") + "'";
}

// A JSON value from a file, written out and cut short.
std::string snippet(const json& value) {
  std::string s = value.dump();
  return s.size() <= 80 ? s : s.substr(0, 80) + "...";
}

// Errors that are the file's fault (std::invalid_argument), and those of the operating system.
template <class... Parts>
[[noreturn]] void bad_file(const std::string& path, const Parts&... parts) {
  throw std::invalid_argument(escape_non_utf8(error_message(kLoad, path, ": ", parts...)));
}

// `err` is passed as errno, read before anything else can change it.
template <class... Parts>
[[noreturn]] void os_error(const char* op, const std::string& path, int err,
                           const Parts&... parts) {
  throw FileError(
      escape_non_utf8(error_message(op, path, ": ", parts..., ": ", std::strerror(err))), err,
      path);
}

// A file descriptor, closed when it goes out of scope.
struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { close(); }
  int close() { return fd < 0 ? 0 : ::close(std::exchange(fd, -1)); }
};

// One tensor's header entry; offsets are relative to the start of the data buffer.
struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// ---------------------------------------------------------------------------------------------
// Saving

// The header JSON, laid out as the reference writer lays it out ("__metadata__" first, then each
// tensor's dtype, shape and data_offsets), padded with spaces to a multiple of 8 bytes so that the
// data buffer starts aligned. Tensors' bytes follow in the same (sorted) order as their names.
std::string make_header(const std::string& path, const StateDict& tensors,
                        const Metadata& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    check_value(name != kMetadataKey, kSave, path, ": \"", kMetadataKey,
                "\" is reserved by the format and cannot name a tensor");
    check_value(t.defined(), kSave, path, ": tensor ", quoted(name), " is undefined");
    uint64_t nbytes = t.nbytes();
    nlohmann::ordered_json info = nlohmann::ordered_json::object();
    info["dtype"] = safetensors_dtype_name(t.dtype());
    info["shape"] = t.shape().vec();
    info["data_offsets"] = {offset, offset + nbytes};
    header[name] = std::move(info);
    offset += nbytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception&) {
    throw_value_error(kSave, path, ": a tensor name or metadata string is not valid UTF-8");
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

// A tensor's bytes as the file stores them: contiguous and on the CPU (a copy only when needed).
Tensor contiguous_cpu(const Tensor& t) {
  NoGradGuard no_grad;
  Tensor c = t.detach();
  if (!c.device().is_cpu()) c = c.cpu();
  return c.contiguous();
}

// Note [atomic checkpoint writes]
// A training run overwrites its checkpoint every epoch. If the process died or the disk filled
// half-way through writing over the old file, the only copy would be lost. So the new file is
// written under a temporary name in the same directory (rename is atomic only within one file
// system), flushed with fsync, and only then renamed over the target: anyone opening the path sees
// the old file or the complete new one, never a mix. On any error the temporary file is removed.
// The directory is synced after the rename so the new name itself survives a power cut.
class TempFile {
 public:
  explicit TempFile(const std::string& target) : target_(target) {
    // A directory cannot be replaced by a file; say so before leaving a temporary file beside it.
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      os_error(kSave, target_, EISDIR, "cannot write");
    }
    static std::atomic<uint64_t> counter{0};
    for (int attempt = 0; file_.fd < 0; ++attempt) {
      path_ = target + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
      file_.fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (file_.fd < 0 && (errno != EEXIST || attempt == 100)) {
        os_error(kSave, target_, errno, "cannot create temporary file ", path_);
      }
    }
  }
  ~TempFile() {
    file_.close();
    if (!committed_) ::unlink(path_.c_str());
  }

  void write(const void* data, size_t nbytes) {
    const char* p = static_cast<const char*>(data);
    while (nbytes > 0) {
      ssize_t n = ::write(file_.fd, p, nbytes);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) os_error(kSave, target_, n < 0 ? errno : EIO, "cannot write ", path_);
      p += n;
      nbytes -= static_cast<size_t>(n);
    }
  }

  // fsync, close and rename over the target (Note [atomic checkpoint writes]).
  void commit() {
    if (::fsync(file_.fd) != 0) os_error(kSave, target_, errno, "cannot sync ", path_);
    if (file_.close() != 0) os_error(kSave, target_, errno, "cannot close ", path_);
    if (::rename(path_.c_str(), target_.c_str()) != 0) {
      os_error(kSave, target_, errno, "cannot rename ", path_, " over it");
    }
    committed_ = true;
    // Best effort: the file is complete and in place; a failed directory sync only weakens its
    // durability across a power cut, which is not worth failing a finished save for.
    size_t slash = target_.rfind('/');
    Fd dir;
    dir.fd = ::open(slash == std::string::npos ? "." : target_.substr(0, slash + 1).c_str(),
                    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir.fd >= 0) ::fsync(dir.fd);
  }

 private:
  std::string target_;
  std::string path_;
  Fd file_;
  bool committed_ = false;
};

// ---------------------------------------------------------------------------------------------
// Loading

// An open file read at explicit offsets; every read must be complete.
class InputFile {
 public:
  explicit InputFile(const std::string& path) : path_(path) {
    file_.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file_.fd < 0) os_error(kLoad, path, errno, "cannot open");
    struct stat st {};
    if (::fstat(file_.fd, &st) != 0) os_error(kLoad, path, errno, "cannot stat");
    if (S_ISDIR(st.st_mode)) os_error(kLoad, path, EISDIR, "cannot read");
    if (!S_ISREG(st.st_mode)) {
      throw std::runtime_error(escape_non_utf8(error_message(kLoad, path, ": not a regular file")));
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }

  uint64_t size() const { return size_; }

  void read_at(uint64_t offset, void* data, size_t nbytes, const std::string& what) {
    char* p = static_cast<char*>(data);
    while (nbytes > 0) {
      ssize_t n = ::pread(file_.fd, p, nbytes, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) os_error(kLoad, path_, errno, "cannot read ", what);
      if (n == 0) bad_file(path_, "file ended at byte ", offset, " while reading ", what);
      p += n;
      offset += static_cast<uint64_t>(n);
      nbytes -= static_cast<size_t>(n);
    }
  }

 private:
  std::string path_;
  Fd file_;
  uint64_t size_ = 0;
};

// Parses the header text, refusing what nlohmann::json would otherwise accept: a duplicate key (it
// keeps the last one silently; a file with two tensors of one name is corrupt), and nesting or
// arrays far beyond any safetensors header (see kMaxJsonDepth).
json parse_header(const std::string& path, const std::string& text) {
  if (text.empty() || text[0] != '{') bad_file(path, "header does not start with '{'");
  struct Open {
    bool is_array;
    size_t count = 0;
    std::set<std::string> keys;
  };
  std::vector<Open> open;  // the containers being parsed, innermost last
  auto check = [&](int depth, json::parse_event_t event, json& parsed) {
    using Event = json::parse_event_t;
    if (depth > kMaxJsonDepth) bad_file(path, "header nests deeper than a safetensors header can");
    bool starts_value =
        event == Event::value || event == Event::object_start || event == Event::array_start;
    if (starts_value && !open.empty() && open.back().is_array &&
        ++open.back().count > kMaxJsonArray) {
      bad_file(path, "header has an array longer than ", kMaxJsonArray,
               " elements, which no safetensors header needs");
    }
    if (event == Event::object_start || event == Event::array_start) {
      open.push_back(Open{event == Event::array_start, 0, {}});
    } else if (event == Event::object_end || event == Event::array_end) {
      open.pop_back();
    } else if (event == Event::key) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (!open.back().keys.insert(key).second) {
        bad_file(path, "header has the key ", quoted(key), " twice in one object");
      }
    }
    return true;
  };
  // nlohmann::json stops at a NUL byte as if the input ended there; valid JSON never holds a raw
  // one (control characters in strings must be escaped), so one is corruption.
  size_t nul = text.find('\0');
  if (nul != std::string::npos) {
    bad_file(path, "header is not valid JSON: it holds a NUL byte at offset ", nul);
  }
  try {
    return json::parse(text, check);
  } catch (const json::exception& e) {
    bad_file(path, "header is not valid JSON: ", e.what());
  }
}

// A JSON number that is a non-negative integer, or an error naming what it was for.
uint64_t unsigned_value(const std::string& path, const std::string& name, const char* field,
                        const json& value) {
  if (!value.is_number_unsigned()) {
    bad_file(path, "tensor ", quoted(name), ": ", field, " holds ", snippet(value),
             ", not a non-negative integer");
  }
  return value.get<uint64_t>();
}

const json& field(const std::string& path, const std::string& name, const json& info,
                  const char* key) {
  auto it = info.find(key);
  if (it == info.end()) bad_file(path, "tensor ", quoted(name), " has no \"", key, "\"");
  return *it;
}

// One tensor's entry, checked on its own: a known dtype, a shape wick can hold, and offsets whose
// span is exactly the shape's bytes and lies inside the data buffer.
Entry parse_entry(const std::string& path, const std::string& name, const json& info,
                  uint64_t data_size) {
  if (!info.is_object()) bad_file(path, "entry ", quoted(name), " is not an object");
  Entry e;
  e.name = name;

  const json& dtype = field(path, name, info, "dtype");
  if (!dtype.is_string()) bad_file(path, "tensor ", quoted(name), ": dtype is not a string");
  const auto& dtype_name = dtype.get_ref<const std::string&>();
  auto known = std::find_if(std::begin(kDTypeNames), std::end(kDTypeNames),
                            [&](const DTypeName& d) { return dtype_name == d.name; });
  check_type(known != std::end(kDTypeNames), kLoad, path, ": tensor ", quoted(name), " has dtype ",
             quoted(dtype_name),
             ", which wick does not support (it has F64, F32, F16, BF16, I64, I32, U8, BOOL)");
  e.dtype = known->dtype;

  const json& shape = field(path, name, info, "shape");
  if (!shape.is_array()) bad_file(path, "tensor ", quoted(name), ": shape is not an array");
  if (shape.size() > static_cast<size_t>(kMaxDims)) {
    bad_file(path, "tensor ", quoted(name), " has ", shape.size(),
             " dimensions; wick supports at most ", kMaxDims,
             " (see Note [fixed-capacity shapes])");
  }
  // Every dimension and the byte count must fit in int64, or wick's numel and strides would
  // overflow. Zero dimensions are left out of the product so that a huge dimension beside a zero
  // still cannot overflow the partial products that numel() computes.
  uint64_t nonzero_bytes = element_size(e.dtype);
  bool has_zero = false;
  for (const json& d : shape) {
    uint64_t size = unsigned_value(path, name, "shape", d);
    if (size == 0) has_zero = true;
    if (size > kMaxInt64 ||
        (size != 0 && __builtin_mul_overflow(nonzero_bytes, size, &nonzero_bytes)) ||
        nonzero_bytes > kMaxInt64) {
      bad_file(path, "tensor ", quoted(name), " has shape ", snippet(shape),
               ", too large to exist");
    }
    e.shape.push_back(static_cast<int64_t>(size));
  }
  uint64_t nbytes = has_zero ? 0 : nonzero_bytes;

  const json& offsets = field(path, name, info, "data_offsets");
  if (!offsets.is_array() || offsets.size() != 2) {
    bad_file(path, "tensor ", quoted(name), ": data_offsets is ", snippet(offsets),
             ", not [begin, end]");
  }
  e.begin = unsigned_value(path, name, "data_offsets", offsets[0]);
  e.end = unsigned_value(path, name, "data_offsets", offsets[1]);
  if (e.end < e.begin) {
    bad_file(path, "tensor ", quoted(name), ": data_offsets ", snippet(offsets),
             " end before they begin");
  }
  if (e.end > data_size) {
    bad_file(path, "tensor ", quoted(name), ": data_offsets ", snippet(offsets),
             " lie outside the ", data_size, "-byte data buffer");
  }
  if (e.end - e.begin != nbytes) {
    bad_file(path, "tensor ", quoted(name), " has shape ", snippet(shape), " and dtype ",
             dtype_name, " (", nbytes, " bytes) but data_offsets ", snippet(offsets), " span ",
             e.end - e.begin, " bytes");
  }
  return e;
}

Metadata parse_metadata(const std::string& path, const json& value) {
  Metadata metadata;
  if (value.is_null()) return metadata;  // the reference reads null as "no metadata"
  if (!value.is_object()) bad_file(path, "__metadata__ is not an object of strings");
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) {
      bad_file(path, "__metadata__ value of ", quoted(key), " is ", snippet(v), ", not a string");
    }
    metadata.emplace(key, v.get<std::string>());
  }
  return metadata;
}

// Tensors must tile the data buffer exactly: sorted by offset, each begins where the previous one
// ended, and the last ends at the buffer's end. This is the reference implementation's rule; it
// rules out overlapping tensors (two names sharing bytes) and bytes that belong to no tensor.
void check_coverage(const std::string& path, std::vector<const Entry*> entries,
                    uint64_t data_size) {
  std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : entries) {
    if (e->begin < covered) {
      bad_file(path, "tensor ", quoted(e->name), " (bytes ", e->begin, "..", e->end,
               ") overlaps tensor ", quoted(previous->name), " (bytes ", previous->begin, "..",
               previous->end, ")");
    }
    if (e->begin > covered) {
      bad_file(path, "bytes ", covered, "..", e->begin, " of the data buffer belong to no tensor ",
               "(safetensors stores tensors back to back)");
    }
    covered = e->end;
    previous = e;
  }
  if (covered != data_size) {
    bad_file(path, "bytes ", covered, "..", data_size, " of the data buffer belong to no tensor ",
             "(safetensors stores tensors back to back)");
  }
}

}  // namespace

std::string escape_non_utf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = bytes[i];
    // The length of the sequence `c` starts, and the smallest and largest second byte allowed
    // (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool valid = len > 0 && i + len <= n;
    for (size_t k = 1; valid && k < len; ++k) {
      unsigned char b = bytes[i + k];
      valid = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (valid) {
      out.append(text, i, len);
      i += len;
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    }
  }
  return out;
}

void save_safetensors(const std::string& path, const StateDict& tensors, const Metadata& metadata) {
  // Everything that can be checked is checked before a file is created.
  std::string header = make_header(path, tensors, metadata);
  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(header.size() >> (8 * i));

  TempFile file(path);
  file.write(length, sizeof(length));
  file.write(header.data(), header.size());
  for (const auto& [name, t] : tensors) {
    Tensor c = contiguous_cpu(t);
    if (c.nbytes() > 0) file.write(c.data_ptr(), c.nbytes());
  }
  file.commit();
}

SafetensorsFile load_safetensors(const std::string& path) {
  InputFile file(path);
  if (file.size() < 8) {
    bad_file(path, "file is ", file.size(), " bytes, too short for the 8-byte header length");
  }
  unsigned char length[8];
  file.read_at(0, length, sizeof(length), "the header length");
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= static_cast<uint64_t>(length[i]) << (8 * i);
  if (header_size > kMaxHeaderBytes) {
    bad_file(path, "header length ", header_size, " exceeds the ", kMaxHeaderBytes,
             "-byte limit (is this a safetensors file?)");
  }
  if (header_size > file.size() - 8) {
    bad_file(path, "header length ", header_size, " runs past the end of the file (",
             file.size() - 8, " bytes follow the length)");
  }
  std::string text(header_size, '\0');
  file.read_at(8, text.data(), text.size(), "the header");
  json header = parse_header(path, text);  // an object: it starts with '{' and parsed

  // Check the whole header before allocating any tensor.
  const uint64_t data_start = 8 + header_size;
  const uint64_t data_size = file.size() - data_start;
  SafetensorsFile result;
  std::vector<Entry> entries;
  for (const auto& [key, value] : header.items()) {
    if (key == kMetadataKey) {
      result.metadata = parse_metadata(path, value);
    } else {
      entries.push_back(parse_entry(path, key, value, data_size));
    }
  }
  std::vector<const Entry*> order;
  for (const Entry& e : entries) order.push_back(&e);
  check_coverage(path, order, data_size);

  for (const Entry& e : entries) {
    Tensor t = empty(e.shape, e.dtype);
    if (t.nbytes() > 0) {
      file.read_at(data_start + e.begin, t.data_ptr(), t.nbytes(), "tensor " + quoted(e.name));
    }
    if (e.dtype == kBool) {
      // Any byte but 0 and 1 is not a bool, and reading it as one is undefined behaviour.
      const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (bytes[i] > 1) {
          bad_file(path, "BOOL tensor ", quoted(e.name), " holds byte ", int(bytes[i]),
                   " at element ", i, "; a bool is 0 or 1");
        }
      }
    }
    result.tensors.emplace(e.name, std::move(t));
  }
  return result;
}

}  // namespace wick
