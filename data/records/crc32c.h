// CRC-32C (Castagnoli), the checksum TFRecord, LevelDB and iSCSI use, and TFRecord's "masked" form.
//
// Why Castagnoli and not zlib's CRC-32: its polynomial (0x1EDC6F41) detects more error patterns in
// short messages and x86 computes it in hardware (SSE4.2's crc32 instruction). Why masked: a CRC
// over bytes that themselves hold a CRC is weak, so TFRecord stores rotate_right(crc, 15) +
// 0xa282ead8 instead of the raw value (tensorflow/tsl/lib/hash/crc32c.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace wick::data {

// CRC-32C of `size` bytes at `data`, continuing from `crc` (the value of the bytes before; 0 for
// the first piece), so crc32c(ab) == crc32c_extend(crc32c(a), b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);
inline uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }
// The same by table lookups whatever the processor has; crc32c_extend uses SSE4.2 where it can,
// and the tests check that the two agree.
uint32_t crc32c_extend_tables(uint32_t crc, const void* data, size_t size);

inline uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t unmask_crc(uint32_t masked) {
  uint32_t rotated = masked - 0xa282ead8u;
  return (rotated >> 17) | (rotated << 15);
}

}  // namespace wick::data
