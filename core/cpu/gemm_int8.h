// The int8 GEMM under quantized_linear and quantized_conv2d: uint8 activations times int8 weights,
// accumulated exactly in int32, requantized to uint8 as each tile leaves the registers.
//
// Note [int8 GEMM]
// What is multiplied. The output is C[o, c] = sum_k W[o, k] X[c, k]: o runs over output channels
// (the weight's rows), c over output columns (a convolution's pixels, a linear layer's batch
// rows). A convolution's output row o is then contiguous in c (NCHW), so a tile is stored with
// plain vector stores.
//
// Why uint8 times int8. The instructions multiply unsigned bytes by signed bytes: AVX-512 VNNI's
// vpdpbusd (u8 x s8, four adjacent pairs summed into each int32 lane) and AMX's tdpbsud (s8 A
// tile times u8 B tile) / tdpbusd. Activations after ReLU are non-negative and an asymmetric
// uint8 range with a zero point uses all 256 levels; weights are roughly symmetric around 0, so
// int8 with zero point 0 fits them. Products accumulate in 32 bits directly, so the old
// vpmaddubsw route's int16 saturation cannot occur: |x w| <= 255 * 128, and the front functions
// allow K up to 32768, which keeps the sum and the zero-point correction below 2^31.
//
// The zero point. acc[o, c] = sum_k (X[c, k] - zx) W[o, k] = sum_k X W - zx * rowsum[o], with
// rowsum[o] = sum_k W[o, k] computed once when the weight is packed; so the inner loop multiplies
// the raw bytes and the correction is one multiply-subtract per output. Convolution padding is
// filled with zx, which the correction turns into exactly 0.
//
// Layouts. Depth (k) is padded with zeros to a multiple of 4 (VNNI, portable) or 64 (AMX's tile
// row of 64 bytes), in both operands; zero weights make the padding contribute nothing.
//   weight  row-major [rows rounded up to 16][padded depth]: VNNI broadcasts 4 bytes of a row,
//           AMX loads 16 rows x 64 bytes as its A tile.
//   columns panels of 16 columns; panel j is [padded depth / 4][16][4] bytes: for each group of
//           4 k, the 4 bytes of each of the 16 columns. That is one VNNI vector (16 int32 lanes
//           of 4 bytes) and exactly AMX's B-tile layout (16 rows of 64 bytes, "VNNI-packed").
//
// Tiles. VNNI keeps 8 rows x 32 columns (16 zmm accumulators of 16 int32, 2 column vectors and a
// broadcast); each k-group costs 2 loads, 8 broadcasts and 16 vpdpbusd. (24 accumulators would
// load less per product, but GCC 12 spilled them: gemm_int8_vnni.cpp.)
// AMX keeps 2 x 2 tiles of 16 x 16 int32 (tmm0-3), loads two weight tiles (16 x 64 bytes) and two
// column tiles (16 x 64 bytes) per 64-deep step: 4 tdpbsud = 65,536 multiply-adds per step. AMX
// needs the kernel's permission (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)) and is used
// only when it is granted, and (unless forced) only for dot products at least 64 deep: a CNN's
// first layer (K = 9) would be 86% zero padding in a 64-deep step, and runs on VNNI.
//
// Where the time goes. With AMX the products are cheap (16 x 16 x 64 multiply-adds per
// instruction) and the epilogue - a float32 division per output among a dozen vector operations -
// costs as much as the arithmetic at the MNIST CNN's conv2 (K = 288), so the int8 GEMM is
// epilogue- and packing-bound there; at K = 1024 and more it runs at 4-5x the fp32 GEMM.
//
// Fused requantization. The int32 tile never goes to memory (AMX stores its 1 KiB tile to an L1
// buffer, which the epilogue reads at once): each accumulator is corrected by the zero point,
// converted to float32, scaled, biased, divided, rounded and clamped to uint8 in registers, with
// exactly the float32 operations of requantize() below, in that order, so every backend gives the
// same bytes (the files are compiled with -ffp-contract=off so no FMA merges the multiply and the
// add; a Python lab reproduces it with NumPy float32).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wick::cpu {

enum class Int8Backend : uint8_t { kPortable, kAvx512Vnni, kAmx };
const char* int8_backend_name(Int8Backend backend);  // "portable", "avx512_vnni", "amx"
// Whether the processor and the operating system support it (AMX: the tile permission granted).
bool int8_backend_available(Int8Backend backend);
// The backend the next product (of dot products `depth` long) uses: $WICK_INT8_GEMM
// (portable|avx512_vnni|amx, read on every call) if set, else set_int8_backend's choice, else the
// fastest available one for that depth (AMX from 64 on). A named backend that is not available
// raises RuntimeError.
Int8Backend int8_backend(int64_t depth = 1 << 20);
void set_int8_backend(std::optional<Int8Backend> backend);  // nullopt: automatic
Int8Backend int8_backend_from_name(const char* op, const std::string& name);

// The per-output-channel requantization (Note [int8 GEMM]).
struct Requantization {
  const float* multiplier;  // [rows] float(input_scale) * weight_scale[o], in float32
  const float* bias;        // [rows] or nullptr
  int32_t input_zero_point;
  float output_scale;
  int32_t output_zero_point;
  bool relu;
};

// One output: the reference definition every backend reproduces bit for bit. `sum` is
// sum_k X W over the raw bytes; `row_sum` = sum_k W[o, k]. Defined in gemm_int8.cpp, which is
// compiled without FMA contraction, so no caller's flags can change its rounding.
uint8_t requantize(int32_t sum, int32_t row_sum, int64_t o, const Requantization& rq);

// Depth rounded up to what the backend's inner step consumes (4 bytes, or 64 for AMX).
int64_t int8_padded_depth(int64_t depth, Int8Backend backend);
constexpr int64_t kInt8Panel = 16;  // columns per packed panel
inline int64_t int8_panels(int64_t cols) { return (cols + kInt8Panel - 1) / kInt8Panel; }

// An int8 weight [rows, depth] packed once for many products (one per image of a convolution).
class PackedInt8Weight {
 public:
  PackedInt8Weight(int64_t rows, int64_t depth, const int8_t* w, int64_t row_stride,
                   Int8Backend backend);
  int64_t rows() const { return rows_; }
  int64_t depth() const { return depth_; }
  int64_t padded_depth() const { return padded_depth_; }
  Int8Backend backend() const { return backend_; }
  const int8_t* data() const { return data_.data(); }
  const int32_t* row_sums() const { return row_sums_.data(); }

 private:
  int64_t rows_, depth_, padded_depth_;
  Int8Backend backend_;
  std::vector<int8_t> data_;       // [rows rounded up to 16][padded_depth], zero padded
  std::vector<int32_t> row_sums_;  // [rows rounded up to 16]
};

// Packs X given as [cols][depth] (x[c * ldx + k]: a linear layer's input rows) into
// int8_panels(cols) panels of padded_depth * 16 bytes; padding (past depth or cols) is 0.
void pack_int8_rows(int64_t cols, int64_t depth, const uint8_t* x, int64_t ldx,
                    int64_t padded_depth, uint8_t* dst);
// The same from X given as [depth][cols] (x[k * ldx + c]: an im2col matrix, or a 1x1
// convolution's input image).
void pack_int8_depth_major(int64_t cols, int64_t depth, const uint8_t* x, int64_t ldx,
                           int64_t padded_depth, uint8_t* dst);
// One group of 4 k of every panel (bytes 4g..4g+3 of each column) from 4 rows of `cols` bytes
// (nullptr: a row of zeros); what pack_int8_depth_major does for each g, for callers that build
// the rows on the fly.
void pack_int8_group(const uint8_t* const rows[4], int64_t cols, int64_t padded_depth, int64_t g,
                     uint8_t* dst);

// out[o * out_row_stride + c * out_col_stride] = requantize(sum_k W[o, k] X[c, k], ...) for every
// o < w.rows(), c < cols, with X packed by the functions above for w's padded depth. Runs on
// the calling thread's OpenMP team when called outside a parallel region and large enough.
void gemm_u8s8_requantize(const PackedInt8Weight& w, int64_t cols, const uint8_t* packed_x,
                          uint8_t* out, int64_t out_row_stride, int64_t out_col_stride,
                          const Requantization& rq);

// The backends' kernels over a block of whole panels: rows [o0, o1) (multiples of 16 apart from
// the end), panels [j0, j1). Called by gemm_u8s8_requantize; declared for the AMX file.
struct Int8Block {
  const PackedInt8Weight* w;
  const uint8_t* packed_x;
  int64_t cols;
  uint8_t* out;
  int64_t out_row_stride, out_col_stride;
  const Requantization* rq;
};
void gemm_int8_portable(const Int8Block& b, int64_t o0, int64_t o1, int64_t j0, int64_t j1);
void gemm_int8_vnni(const Int8Block& b, int64_t o0, int64_t o1, int64_t j0, int64_t j1);
void gemm_int8_amx(const Int8Block& b, int64_t o0, int64_t o1, int64_t j0, int64_t j1);
// Requests the AMX tile-data permission from the kernel once; false if refused or unsupported.
bool amx_permitted();

}  // namespace wick::cpu
