// 16-bit floating-point storage types.
//
// Half is IEEE 754 binary16 (1 sign, 5 exponent, 10 mantissa bits); BFloat16 is the top half of a
// float32 (1 sign, 8 exponent, 7 mantissa bits). Both are storage formats: arithmetic converts to
// float, computes there, and rounds back. Conversions from float round to nearest, ties to even,
// exactly as the hardware instructions (F16C, AVX512-BF16, CUDA's __float2half_rn) do, so a value
// converted on the CPU and on a GPU gives the same bits.
#pragma once

#include <cstdint>
#include <cstring>

// Note [hardware half conversion]
// With F16C (x86 since 2012; -march=native turns it on) float <-> binary16 is one instruction,
// against a dozen branchy integer steps in software: fp16 autocast on the CPU converts every
// GEMM operand, so this decides its speed. The portable functions stay for GPUs' host-device code
// and other processors, and give the same bits for every input (NaN payloads included:
// tests/cpp/test_core.cpp compares them bit for bit), so translation units built with and without
// F16C agree.
#if defined(__F16C__) && !defined(__CUDA_ARCH__) && !defined(__CUDACC__)
#include <immintrin.h>
#define WICK_HAS_F16C 1
#endif

#ifdef __CUDACC__
#define WICK_HOST_DEVICE __host__ __device__
#else
#define WICK_HOST_DEVICE
#endif

namespace wick {

WICK_HOST_DEVICE inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

WICK_HOST_DEVICE inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// float -> binary16, round to nearest even. Overflow gives infinity; NaN stays NaN (quiet).
WICK_HOST_DEVICE inline uint16_t float_to_half_bits_portable(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    // NaN: quiet, keeping the payload's top bits (as F16C and CUDA do).
    uint32_t nan = abs > 0x7f800000u ? 0x0200u | ((abs >> 13) & 0x3ffu) : 0u;
    return static_cast<uint16_t>(sign | 0x7c00u | nan);
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {
    // Subnormal half (|f| < 2^-14): add 0.5 so the FPU's own round-to-nearest-even aligns the
    // mantissa at the half's subnormal step 2^-24, then take the low bits.
    float shifted = bits_float(abs) + 0.5f;
    return static_cast<uint16_t>(sign | (float_bits(shifted) - 0x3f000000u));
  }
  uint32_t mantissa_odd = (abs >> 13) & 1u;
  abs += 0xc8000fffu + mantissa_odd;  // rebias exponent (127 -> 15) and round half to even
  return static_cast<uint16_t>(sign | (abs >> 13));
}

WICK_HOST_DEVICE inline float half_bits_to_float_portable(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) {  // inf, or NaN made quiet
    return bits_float(sign | 0x7f800000u | (mant << 13) | (mant != 0 ? 0x400000u : 0u));
  }
  if (exp == 0) {                                                         // zero or subnormal
    float magnitude = static_cast<float>(mant) * 5.9604644775390625e-8f;  // mant * 2^-24
    return sign ? -magnitude : magnitude;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

WICK_HOST_DEVICE inline uint16_t float_to_half_bits(float f) {
#ifdef WICK_HAS_F16C
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
#else
  return float_to_half_bits_portable(f);
#endif
}

WICK_HOST_DEVICE inline float half_bits_to_float(uint16_t h) {
#ifdef WICK_HAS_F16C
  return _cvtsh_ss(h);
#else
  return half_bits_to_float_portable(h);
#endif
}

// float -> bfloat16, round to nearest even; NaN stays NaN.
WICK_HOST_DEVICE inline uint16_t float_to_bfloat16_bits(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

WICK_HOST_DEVICE inline float bfloat16_bits_to_float(uint16_t b) {
  return bits_float(static_cast<uint32_t>(b) << 16);
}

struct Half {
  uint16_t bits = 0;
  Half() = default;
  WICK_HOST_DEVICE Half(float f) : bits(float_to_half_bits(f)) {}  // NOLINT: implicit like float
  WICK_HOST_DEVICE operator float() const { return half_bits_to_float(bits); }
  WICK_HOST_DEVICE static Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  WICK_HOST_DEVICE BFloat16(float f) : bits(float_to_bfloat16_bits(f)) {}  // NOLINT
  WICK_HOST_DEVICE operator float() const { return bfloat16_bits_to_float(bits); }
  WICK_HOST_DEVICE static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

}  // namespace wick
