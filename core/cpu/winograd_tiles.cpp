// Winograd F(2x2, 3x3) over blocks of 16 tiles (Note [Winograd over blocks of 16 tiles]).
#include "core/cpu/winograd_tiles.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <utility>

#include "core/cpu/block_table.h"
#include "core/cpu/loops.h"
#include "core/cpu/vec.h"
#include "core/cpu/winograd.h"

namespace wick::cpu {

namespace {

// 16 lanes whatever the build's vector width: a lane is a tile. On AVX-512 one register.
typedef float Tiles __attribute__((vector_size(16 * sizeof(float))));
constexpr int kLanes = 16;
constexpr int kPositions = 16;   // of the transformed 4x4 block, xi = 4 * row + column
constexpr int kTileVectors = 4;  // the product's register block: 6 channels x 4 x 16 tiles
constexpr int kOutBlock = 6;
constexpr int64_t kStepTiles = kLanes * kTileVectors;

inline Tiles load(const float* p) {
  Tiles v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, const Tiles& v) { std::memcpy(p, &v, sizeof v); }
inline Tiles splat(float x) { return Tiles{} + x; }

// Floats from one transform position's rows of V (or M) to the next. The transforms read or
// write all 16 positions of a tile at once; 16 streams a multiple of 4 KiB apart would share L1
// sets, so each position is padded by one cache line.
int64_t position_floats(int64_t channels, int64_t chunk_tiles) {
  return channels * chunk_tiles + kLanes;
}

struct Geometry {
  int64_t c, o, h, w;
  int64_t tiles_w() const { return w / 2; }
  int64_t tiles() const { return h / 2 * (w / 2); }
  // Rows of column-transformed values, by parity: padded rows 0, 2, ..., h and 1, 3, ..., h + 1.
  int64_t parity_floats() const { return (h / 2 + 1) * tiles_w(); }
};

// U[xi][c][o] = (G g G^T)[xi] for g = weight[o][c], the threads taking output channels (at 64 x 64
// channels, 4096 filters on every call).
void transform_weight(const float* weight, int64_t o_total, int64_t c_total, float* u) {
  parallel_for(o_total, 1, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      for (int64_t c = 0; c < c_total; ++c) {
        float filter[kPositions];
        winograd_filter(weight + (o * c_total + c) * 9, filter);
        for (int xi = 0; xi < kPositions; ++xi) u[(xi * c_total + c) * o_total + o] = filter[xi];
      }
    }
  });
}

// Lane shuffles with the indices fixed at compile time (__builtin_shufflevector: GCC 12 and
// Clang), so each is one permute: lane l of the result is lane index(l) of the pair (a, b).
template <class Index, size_t... L>
Tiles shuffle(const Tiles& a, const Tiles& b, std::index_sequence<L...>) {
  return __builtin_shufflevector(a, b, Index::at(L)...);
}
template <class Index>
Tiles shuffle(const Tiles& a, const Tiles& b) {
  return shuffle<Index>(a, b, std::make_index_sequence<kLanes>());
}
struct Evens {
  static constexpr int at(size_t l) { return static_cast<int>(2 * l); }
};
struct Odds {
  static constexpr int at(size_t l) { return static_cast<int>(2 * l + 1); }
};
// Each row of TW lanes moved one lane right, b's lane 0 entering at its start.
template <int TW>
struct ShiftIn {
  static constexpr int at(size_t l) { return l % TW == 0 ? kLanes : static_cast<int>(l) - 1; }
};
// ... one lane left, b's lane 0 entering at its end.
template <int TW>
struct ShiftOut {
  static constexpr int at(size_t l) { return l % TW == TW - 1 ? kLanes : static_cast<int>(l) + 1; }
};
// a and b interleaved, lanes from `first`: a[first], b[first], a[first + 1], ...
template <int First>
struct Interleave {
  static constexpr int at(size_t l) { return First + static_cast<int>(l / 2) + (l % 2) * kLanes; }
};

template <int TW>
void transform_columns(const float* channel, const Geometry& s, float* rq) {
  const int64_t tw = s.tiles_w(), parity = s.parity_floats();
  for (int q = 0; q < 4; ++q) {  // padded rows 0 and h + 1
    std::fill(rq + q * 2 * parity, rq + q * 2 * parity + tw, 0.0f);
    float* last = rq + (q * 2 + (s.h + 1) % 2) * parity + (s.h + 1) / 2 * tw;
    std::fill(last, last + tw, 0.0f);
  }
  constexpr int kRows = TW < kLanes ? kLanes / TW : 1;
  for (int64_t i = 0; i < s.h * s.w; i += 2 * kLanes) {
    const float* x = channel + i;
    const int64_t y = i / s.w + 1, x0 = i % s.w;  // padded row, input column
    const Tiles a = load(x), b = load(x + kLanes);
    const Tiles d1 = shuffle<Evens>(a, b), d2 = shuffle<Odds>(a, b);
    Tiles left{}, right{};
    if (TW == kLanes) {
      left = splat(x0 > 0 ? x[-1] : 0.0f);
      right = splat(x0 + 2 * kLanes < s.w ? x[2 * kLanes] : 0.0f);
    }
    // d0 = padded column 2 tx (input 2 tx - 1): zero, or `left`, at the start of each row;
    // d3 = padded column 2 tx + 3 (input 2 tx + 2): zero, or `right`, at the end of each row.
    const Tiles d0 = shuffle<ShiftIn<TW>>(d2, left), d3 = shuffle<ShiftOut<TW>>(d1, right);
    const Tiles r[4] = {d0 - d2, d1 + d2, d2 - d1, d1 - d3};
    for (int q = 0; q < 4; ++q) {
      for (int k = 0; k < kRows; ++k) {
        float* row = rq + (q * 2 + (y + k) % 2) * parity + (y + k) / 2 * tw + x0 / 2;
        std::memcpy(row, reinterpret_cast<const float*>(&r[q]) + k * TW, TW * sizeof(float));
      }
    }
  }
}

// transform_columns for images `w` wide: tiles per vector row 4 (w = 8), 8 (16) or 16.
auto columns_for_width(int64_t w) {
  return w == 8 ? transform_columns<4> : w == 16 ? transform_columns<8> : transform_columns<kLanes>;
}

// V[xi][c][first + t] = (B^T d B)[xi] for the image's tiles t, from the rows of
// transform_columns: padded rows 2 ty + r of 16 consecutive tiles are 16 consecutive floats.
void transform_rows(const float* rq, const Geometry& s, int64_t c, int64_t chunk_tiles,
                    int64_t first, float* v) {
  const int64_t tw = s.tiles_w(), parity = s.parity_floats();
  const int64_t position = position_floats(s.c, chunk_tiles);
  for (int64_t t0 = 0; t0 < s.tiles(); t0 += kLanes) {
    for (int q = 0; q < 4; ++q) {
      const float* even = rq + (q * 2) * parity + t0;
      const float* odd = even + parity;
      const Tiles r0 = load(even), r1 = load(odd), r2 = load(even + tw), r3 = load(odd + tw);
      float* dst = v + q * position + c * chunk_tiles + first + t0;
      store(dst, r0 - r2);
      store(dst + 4 * position, r1 + r2);
      store(dst + 8 * position, r2 - r1);
      store(dst + 12 * position, r1 - r3);
    }
  }
}

// M[xi][o0 + a][t0 + 16 j] = sum_c U[xi][c][o0 + a] * V[xi][c][t0 + 16 j].
template <int NO, int NT>
void product_block(const float* __restrict u, const float* __restrict v, int64_t c_total,
                   int64_t o_total, int64_t chunk_tiles, float* __restrict m) {
  Tiles acc[NO][NT];
  for (int a = 0; a < NO; ++a)
    for (int j = 0; j < NT; ++j) acc[a][j] = Tiles{};
  for (int64_t c = 0; c < c_total; ++c, u += o_total, v += chunk_tiles) {
    Tiles x[NT];
    for (int j = 0; j < NT; ++j) x[j] = load(v + j * kLanes);
    for (int a = 0; a < NO; ++a) {
      const float weight = u[a];
      for (int j = 0; j < NT; ++j) acc[a][j] += weight * x[j];
    }
  }
  for (int a = 0; a < NO; ++a)
    for (int j = 0; j < NT; ++j) store(m + a * chunk_tiles + j * kLanes, acc[a][j]);
}

template <int NO, int NT>
struct ProductBlock {
  static constexpr auto fn = &product_block<NO, NT>;
};
constexpr auto kProductBlocks = block_table<ProductBlock, kOutBlock, kTileVectors>();

// Over the first `tiles` columns of V and M, whose rows are `chunk_tiles` long.
void products(const float* u, const float* v, const Geometry& s, int64_t chunk_tiles, int64_t tiles,
              float* m) {
  for (int xi = 0; xi < kPositions; ++xi) {
    const float* uxi = u + xi * s.c * s.o;
    const float* vxi = v + xi * position_floats(s.c, chunk_tiles);
    float* mxi = m + xi * position_floats(s.o, chunk_tiles);
    // A step's V (C x 64 tiles) stays in L1 while every block of output channels reads it.
    for (int64_t t0 = 0; t0 < tiles; t0 += kStepTiles) {
      const int nt = static_cast<int>(std::min<int64_t>(kStepTiles, tiles - t0) / kLanes);
      for (int64_t o0 = 0; o0 < s.o; o0 += kOutBlock) {
        const int no = static_cast<int>(std::min<int64_t>(kOutBlock, s.o - o0));
        kProductBlocks[no - 1][nt - 1](uxi + o0, vxi + t0, s.c, s.o, chunk_tiles,
                                       mxi + o0 * chunk_tiles + t0);
      }
    }
  }
}

// out[o][2 ty + i][2 tx + j] = (A^T m A)[i][j] + bias for the image's tiles, m[xi] read from
// M[xi][o][first + t].
template <int TW>
void transform_output(const float* m, const Geometry& s, int64_t chunk_tiles, int64_t first,
                      const float* bias, float* image_out) {
  const int64_t tw = s.tiles_w(), position = position_floats(s.o, chunk_tiles);
  for (int64_t o = 0; o < s.o; ++o) {
    const Tiles b = splat(bias != nullptr ? bias[o] : 0.0f);
    float* plane = image_out + o * s.h * s.w;
    for (int64_t t0 = 0; t0 < s.tiles(); t0 += kLanes) {
      const float* src = m + o * chunk_tiles + first + t0;
      Tiles p[kPositions];
      for (int xi = 0; xi < kPositions; ++xi) p[xi] = load(src + xi * position);
      Tiles s0[4], s1[4];  // A^T m, over the block's rows
      for (int k = 0; k < 4; ++k) {
        s0[k] = p[k] + p[4 + k] + p[8 + k];
        s1[k] = p[4 + k] - p[8 + k] - p[12 + k];
      }
      const Tiles y[2][2] = {{s0[0] + s0[1] + s0[2] + b, s0[1] - s0[2] - s0[3] + b},
                             {s1[0] + s1[1] + s1[2] + b, s1[1] - s1[2] - s1[3] + b}};
      const int64_t ty = t0 / tw, tx = t0 % tw;
      for (int i = 0; i < 2; ++i) {
        // The 16 tiles' two columns interleaved: 32 outputs, 2 tw to a row of tiles.
        float row[2 * kLanes];
        store(row, shuffle<Interleave<0>>(y[i][0], y[i][1]));
        store(row + kLanes, shuffle<Interleave<kLanes / 2>>(y[i][0], y[i][1]));
        if (TW == kLanes) {
          std::memcpy(plane + (2 * ty + i) * s.w + 2 * tx, row, sizeof row);
          continue;
        }
        for (int k = 0; k < kLanes / TW; ++k)
          std::memcpy(plane + (2 * (ty + k) + i) * s.w, row + k * 2 * TW, 2 * TW * sizeof(float));
      }
    }
  }
}

// The weight gradient (Note [Winograd's weight gradient over tiles]).

// One image's dY, [O][H*W], as [H*W][O]: 16 x 16 blocks transposed in registers by four rounds
// of interleaving rows k and k + 8 (a perfect shuffle; after four, row k holds column k).
void transpose_channels(const float* dy, int64_t o_total, int64_t positions, float* dyt) {
  for (int64_t o0 = 0; o0 < o_total; o0 += kLanes) {
    for (int64_t p0 = 0; p0 < positions; p0 += kLanes) {
      Tiles rows[kLanes], next[kLanes];
      for (int k = 0; k < kLanes; ++k) rows[k] = load(dy + (o0 + k) * positions + p0);
      for (int round = 0; round < 4; ++round) {
        for (int k = 0; k < kLanes / 2; ++k) {
          next[2 * k] = shuffle<Interleave<0>>(rows[k], rows[k + kLanes / 2]);
          next[2 * k + 1] = shuffle<Interleave<kLanes / 2>>(rows[k], rows[k + kLanes / 2]);
        }
        std::copy(next, next + kLanes, rows);
      }
      for (int k = 0; k < kLanes; ++k) store(dyt + (p0 + k) * o_total + o0, rows[k]);
    }
  }
}

// N[xi][first + t][o] = (A dy A^T)[xi] for the image's tiles t, 16 output channels to a vector,
// from dyt = dY^T [H*W][O]. A's rows are (1, 0), (1, 1), (1, -1), (0, -1).
void transform_grad(const float* dyt, const Geometry& s, int64_t chunk_tiles, int64_t first,
                    float* n) {
  const int64_t tw = s.tiles_w(), position = position_floats(s.o, chunk_tiles);
  for (int64_t t = 0; t < s.tiles(); ++t) {
    const float* top = dyt + (2 * (t / tw) * s.w + 2 * (t % tw)) * s.o;
    const float* bottom = top + s.w * s.o;
    float* dst = n + (first + t) * s.o;
    for (int64_t o = 0; o < s.o; o += kLanes) {
      const Tiles d[2][2] = {{load(top + o), load(top + s.o + o)},
                             {load(bottom + o), load(bottom + s.o + o)}};
      Tiles e[2][4];  // dy A^T
      for (int i = 0; i < 2; ++i)
        e[i][0] = d[i][0], e[i][1] = d[i][0] + d[i][1], e[i][2] = d[i][0] - d[i][1],
        e[i][3] = -d[i][1];
      for (int k = 0; k < 4; ++k) {
        store(dst + k * position + o, e[0][k]);
        store(dst + (4 + k) * position + o, e[0][k] + e[1][k]);
        store(dst + (8 + k) * position + o, e[0][k] - e[1][k]);
        store(dst + (12 + k) * position + o, -e[1][k]);
      }
    }
  }
}

// dU[c0 + a][o0 + 16 j] += sum_t V[c0 + a][t] * N[t][o0 + 16 j] at one position xi: each value of
// V broadcast once for up to 64 output channels, the sums kept in registers over all tiles.
template <int NC, int NO>
void grad_product_block(const float* __restrict v, const float* __restrict n, int64_t chunk_tiles,
                        int64_t o_total, int64_t tiles, float* __restrict du) {
  Tiles acc[NC][NO];
  for (int a = 0; a < NC; ++a)
    for (int j = 0; j < NO; ++j) acc[a][j] = Tiles{};
  for (int64_t t = 0; t < tiles; ++t, n += o_total) {
    Tiles g[NO];
    for (int j = 0; j < NO; ++j) g[j] = load(n + j * kLanes);
    for (int a = 0; a < NC; ++a) {
      const float x = v[a * chunk_tiles + t];
      for (int j = 0; j < NO; ++j) acc[a][j] += x * g[j];
    }
  }
  for (int a = 0; a < NC; ++a)
    for (int j = 0; j < NO; ++j)
      store(du + a * o_total + j * kLanes, load(du + a * o_total + j * kLanes) + acc[a][j]);
}

template <int NC, int NO>
struct GradProductBlock {
  static constexpr auto fn = &grad_product_block<NC, NO>;
};
constexpr int kGradInBlock = 6;
constexpr auto kGradProductBlocks = block_table<GradProductBlock, kGradInBlock, kTileVectors>();

// dU[xi][c][o] += sum over the step's tiles of V[xi][c][t] * N[xi][t][o].
void grad_products(const float* v, const float* n, const Geometry& s, int64_t chunk_tiles,
                   int64_t tiles, float* du) {
  for (int xi = 0; xi < kPositions; ++xi) {
    const float* vxi = v + xi * position_floats(s.c, chunk_tiles);
    const float* nxi = n + xi * position_floats(s.o, chunk_tiles);
    float* duxi = du + xi * s.c * s.o;
    for (int64_t c0 = 0; c0 < s.c; c0 += kGradInBlock) {
      const int nc = static_cast<int>(std::min<int64_t>(kGradInBlock, s.c - c0));
      for (int64_t o0 = 0; o0 < s.o; o0 += kStepTiles) {
        const int no = static_cast<int>(std::min<int64_t>(kStepTiles, s.o - o0) / kLanes);
        kGradProductBlocks[nc - 1][no - 1](vxi + c0 * chunk_tiles, nxi + o0, chunk_tiles, s.o,
                                           tiles, duxi + c0 * s.o + o0);
      }
    }
  }
}

// dW[o][c] = G^T dU[c][o] G, G's columns being (1, 1/2, 1/2, 0), (0, 1/2, -1/2, 0), (0, 1/2, 1/2,
// 1) (winograd_filter's G).
void weight_from_transform(const float* du, int64_t o, int64_t c_total, int64_t o_total,
                           float* dw) {
  for (int64_t c = 0; c < c_total; ++c) {
    double m[4][4];
    for (int xi = 0; xi < kPositions; ++xi)
      m[xi / 4][xi % 4] = du[(xi * c_total + c) * o_total + o];
    double h[3][4];  // G^T m
    for (int k = 0; k < 4; ++k) {
      h[0][k] = m[0][k] + 0.5 * (m[1][k] + m[2][k]);
      h[1][k] = 0.5 * (m[1][k] - m[2][k]);
      h[2][k] = 0.5 * (m[1][k] + m[2][k]) + m[3][k];
    }
    float* g = dw + (o * c_total + c) * 9;
    for (int r = 0; r < 3; ++r) {
      g[r * 3] = float(h[r][0] + 0.5 * (h[r][1] + h[r][2]));
      g[r * 3 + 1] = float(0.5 * (h[r][1] - h[r][2]));
      g[r * 3 + 2] = float(0.5 * (h[r][1] + h[r][2]) + h[r][3]);
    }
  }
}

std::atomic<bool> tiles_enabled{true};

struct WeightTransform;
struct TileBuffers;
struct GradBuffers;

}  // namespace

bool winograd_tiles_enabled() { return tiles_enabled.load(std::memory_order_relaxed); }
void set_winograd_tiles_enabled(bool enabled) { tiles_enabled.store(enabled); }

bool winograd_tiles_fits(const Shape& weight, const Conv2dParams& p, int64_t n, int64_t h,
                         int64_t w) {
  const bool rows_of_tiles = w == 8 || w == 16 || (w > 0 && w % 32 == 0);
  return weight.size() == 4 && weight[2] == 3 && weight[3] == 3 && p.stride[0] == 1 &&
         p.stride[1] == 1 && p.dilation[0] == 1 && p.dilation[1] == 1 && p.padding[0] == 1 &&
         p.padding[1] == 1 && p.groups == 1 && h > 0 && h % 2 == 0 && rows_of_tiles &&
         h / 2 * (w / 2) % kLanes == 0 && n >= max_threads();
}

void conv2d_winograd_tiles(const float* weight, int64_t o, int64_t c, const float* input, int64_t n,
                           int64_t h, int64_t w, const float* bias, float* out) {
  const Geometry s{c, o, h, w};
  const auto columns = columns_for_width(w);
  const auto output = w == 8    ? transform_output<4>
                      : w == 16 ? transform_output<8>
                                : transform_output<kLanes>;
  float* u = thread_scratch<WeightTransform>(static_cast<size_t>(kPositions * c * o));
  transform_weight(weight, o, c, u);
  // Whole images per step, at least one product block's worth of tiles.
  const int64_t images_per_step = std::max<int64_t>(1, kStepTiles / s.tiles());
  const int64_t steps = (n + images_per_step - 1) / images_per_step;
  const int64_t step_tiles = images_per_step * s.tiles();
  const int64_t v_floats = kPositions * position_floats(c, step_tiles);
  const int64_t m_floats = kPositions * position_floats(o, step_tiles);
  const int64_t per_thread = v_floats + m_floats + 8 * s.parity_floats();
  const int threads = max_threads();
  float* buffers = thread_scratch<TileBuffers>(static_cast<size_t>(threads * per_thread));
  const int64_t image_in = c * h * w, image_out = o * h * w;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int64_t step = 0; step < steps; ++step) {
    float* v = buffers + thread_slot() * per_thread;
    float* m = v + v_floats;
    float* rq = m + m_floats;
    const int64_t n0 = step * images_per_step, images = std::min(images_per_step, n - n0);
    for (int64_t k = 0; k < images; ++k) {
      for (int64_t ch = 0; ch < c; ++ch) {
        columns(input + (n0 + k) * image_in + ch * h * w, s, rq);
        transform_rows(rq, s, ch, step_tiles, k * s.tiles(), v);
      }
    }
    products(u, v, s, step_tiles, images * s.tiles(), m);
    for (int64_t k = 0; k < images; ++k)
      output(m, s, step_tiles, k * s.tiles(), bias, out + (n0 + k) * image_out);
  }
}

bool winograd_tiles_weight_grad_fits(const Shape& weight, const Conv2dParams& params, int64_t n,
                                     int64_t h, int64_t w) {
  return winograd_tiles_fits(weight, params, n, h, w) && weight[0] % kLanes == 0;
}

void conv2d_winograd_tiles_weight_grad(const float* input, int64_t n, int64_t c, int64_t h,
                                       int64_t w, const float* grad_out, int64_t o,
                                       float* grad_weight) {
  const Geometry s{c, o, h, w};
  const auto columns = columns_for_width(w);
  const int64_t images_per_step = std::max<int64_t>(1, kStepTiles / s.tiles());
  const int64_t steps = (n + images_per_step - 1) / images_per_step;
  const int64_t step_tiles = images_per_step * s.tiles();
  const int64_t v_floats = kPositions * position_floats(c, step_tiles);
  const int64_t n_floats = kPositions * position_floats(o, step_tiles);
  const int64_t du_floats = kPositions * c * o;
  const int64_t per_thread = du_floats + v_floats + n_floats + o * h * w + 8 * s.parity_floats();
  const int threads = max_threads();
  float* buffers = thread_scratch<GradBuffers>(static_cast<size_t>(threads * per_thread));
  for (int t = 0; t < threads; ++t)
    std::fill(buffers + t * per_thread, buffers + t * per_thread + du_floats, 0.0f);
  const int64_t image_in = c * h * w, image_out = o * h * w;
  // A fixed block of steps per thread, so that every run adds the same numbers in the same order.
  parallel_for(steps, 1, [&](int64_t first, int64_t last) {
    float* du = buffers + thread_slot() * per_thread;
    float* v = du + du_floats;
    float* nt = v + v_floats;
    float* dyt = nt + n_floats;
    float* rq = dyt + image_out;
    for (int64_t step = first; step < last; ++step) {
      const int64_t n0 = step * images_per_step, images = std::min(images_per_step, n - n0);
      for (int64_t k = 0; k < images; ++k) {
        for (int64_t ch = 0; ch < c; ++ch) {
          columns(input + (n0 + k) * image_in + ch * h * w, s, rq);
          transform_rows(rq, s, ch, step_tiles, k * s.tiles(), v);
        }
        transpose_channels(grad_out + (n0 + k) * image_out, o, h * w, dyt);
        transform_grad(dyt, s, step_tiles, k * s.tiles(), nt);
      }
      grad_products(v, nt, s, step_tiles, images * s.tiles(), du);
    }
  });
  for (int t = 1; t < threads; ++t) {
    const float* part = buffers + t * per_thread;
    for (int64_t i = 0; i < du_floats; ++i) buffers[i] += part[i];
  }
  parallel_for(o, 1, [&](int64_t o0, int64_t o1) {
    for (int64_t k = o0; k < o1; ++k) weight_from_transform(buffers, k, c, o, grad_weight);
  });
}

}  // namespace wick::cpu
