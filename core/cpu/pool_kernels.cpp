// CPU 2-D pooling: max (with the index of each maximum, for backward), average, and adaptive
// average. Inputs are contiguous [N, C, H, W]; every (n, c) plane is independent, so threads
// take whole planes and backward needs no atomics.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"
#include "core/pool_planes.h"

namespace wick::cpu {

namespace {

template <class F>
void for_each_plane(int64_t count, int64_t work_per_plane, const F& f) {
  parallel_for(count, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work_per_plane, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t p = begin; p < end; ++p) f(p);
               });
}

// The kernel taps [lo, hi) of a window starting at `start` that fall inside [0, size).
struct Taps {
  int64_t lo, hi;
};
Taps valid_taps(int64_t start, int64_t kernel, int64_t dilation, int64_t size) {
  int64_t lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  int64_t hi =
      start + (kernel - 1) * dilation < size ? kernel : (size - start + dilation - 1) / dilation;
  return {lo, std::max(lo, hi)};
}

// Max pooling without indices (Note [max pooling without indices] in core/ops/nn.cpp): per output
// row, the maximum down the window's rows for every input column (a loop the compiler vectorises
// along the row), then across each window's columns. A NaN anywhere in a window wins.
template <class T>
void max_pool2d_values(const T* x, T* y, const Planes& s, const Pool2dParams& p,
                       const std::vector<Taps>& row_taps, const std::vector<Taps>& col_taps) {
  using C = compute_t<T>;
  for_each_plane(s.count, s.oh * s.ow * p.kernel[0] * p.kernel[1], [&](int64_t plane) {
    const T* in = x + plane * s.h * s.w;
    T* out = y + plane * s.oh * s.ow;
    std::vector<C> column_max(static_cast<size_t>(s.w)), window_max(static_cast<size_t>(s.w));
    // Window starts x whose window lies inside the row.
    const int64_t whole = std::max<int64_t>(0, s.w - (p.kernel[1] - 1) * p.dilation[1]);
    for (int64_t oy = 0; oy < s.oh; ++oy) {
      const int64_t y0 = oy * p.stride[0] - p.padding[0];
      const Taps rows = row_taps[static_cast<size_t>(oy)];
      C* m = column_max.data();
      const T* first = in + (y0 + rows.lo * p.dilation[0]) * s.w;
      for (int64_t x = 0; x < s.w; ++x) m[x] = C(first[x]);
      for (int64_t i = rows.lo + 1; i < rows.hi; ++i) {
        const T* row = in + (y0 + i * p.dilation[0]) * s.w;
        for (int64_t x = 0; x < s.w; ++x) {
          C v = C(row[x]);
          m[x] = ((v > m[x]) | (v != v)) ? v : m[x];
        }
      }
      // Across the columns: for every start x, the maximum of the window's shifted copies of
      // the column maxima (vectorised loops, taps in the same order as below), then picked at
      // the stride. One output at a time, each window's taps were a short scalar loop:
      // ResNet-18's stem pool at batch 1 took 1.0 ms that way, 0.33-0.37 ms this way.
      C* h = window_max.data();
      for (int64_t x = 0; x < whole; ++x) h[x] = m[x];
      for (int64_t j = 1; j < p.kernel[1]; ++j) {
        const C* shifted = m + j * p.dilation[1];
        for (int64_t x = 0; x < whole; ++x) {
          C v = shifted[x];
          h[x] = ((v > h[x]) | (v != v)) ? v : h[x];
        }
      }
      for (int64_t ox = 0; ox < s.ow; ++ox) {
        const int64_t x0 = ox * p.stride[1] - p.padding[1];
        const Taps cols = col_taps[static_cast<size_t>(ox)];
        if (cols.lo == 0 && cols.hi == p.kernel[1]) {  // the whole window: x0 < whole
          out[oy * s.ow + ox] = T(h[x0]);
          continue;
        }
        C best = m[x0 + cols.lo * p.dilation[1]];
        for (int64_t j = cols.lo + 1; j < cols.hi; ++j) {
          C v = m[x0 + j * p.dilation[1]];
          best = ((v > best) | (v != v)) ? v : best;
        }
        out[oy * s.ow + ox] = T(best);
      }
    }
  });
}

void max_pool2d_kernel(const Tensor& input, Tensor& out, Tensor& indices, const Pool2dParams& p) {
  Planes s = planes(input, out);
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* x = static_cast<const T*>(input.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    const int64_t dh = p.dilation[0], dw = p.dilation[1];
    // Window clipping depends only on the output position, so it is computed once per row and
    // column here rather than once per output (integer division is not cheap).
    std::vector<Taps> row_taps(s.oh), col_taps(s.ow);
    for (int64_t oy = 0; oy < s.oh; ++oy) {
      row_taps[oy] = valid_taps(oy * p.stride[0] - p.padding[0], p.kernel[0], dh, s.h);
    }
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      col_taps[ox] = valid_taps(ox * p.stride[1] - p.padding[1], p.kernel[1], dw, s.w);
    }
    if (!indices.defined()) return max_pool2d_values(x, y, s, p, row_taps, col_taps);
    int64_t* idx = indices.data<int64_t>();
    for_each_plane(s.count, s.oh * s.ow * p.kernel[0] * p.kernel[1], [&](int64_t plane) {
      const T* in = x + plane * s.h * s.w;
      T* out_plane = y + plane * s.oh * s.ow;
      int64_t* idx_plane = idx + plane * s.oh * s.ow;
      for (int64_t oy = 0; oy < s.oh; ++oy) {
        const int64_t y0 = oy * p.stride[0] - p.padding[0];
        const Taps rows = row_taps[oy];
        for (int64_t ox = 0; ox < s.ow; ++ox) {
          const int64_t x0 = ox * p.stride[1] - p.padding[1];
          const Taps cols = col_taps[ox];
          int64_t best_at = (y0 + rows.lo * dh) * s.w + x0 + cols.lo * dw;
          C best = C(in[best_at]);
          for (int64_t i = rows.lo; i < rows.hi; ++i) {
            const int64_t row = (y0 + i * dh) * s.w + x0;
            for (int64_t j = cols.lo; j < cols.hi; ++j) {
              // Branch-free (compiled to conditional moves): which tap holds the maximum is
              // data-dependent, so a branch here mispredicts about half the time.
              C v = C(in[row + j * dw]);
              bool take = (v > best) | (v != v);  // a NaN wins, as in PyTorch
              best = take ? v : best;
              best_at = take ? row + j * dw : best_at;
            }
          }
          out_plane[oy * s.ow + ox] = T(best);
          idx_plane[oy * s.ow + ox] = best_at;
        }
      }
    });
  };
  // uint8: quantized activations. max commutes with the monotone map q -> scale (q - zero_point),
  // so pooling the bytes is exact (core/ops/quantized.h); no gradient flows through them.
  if (input.dtype() == kUInt8) return run(TypeTag<uint8_t>{});
  visit_floating("max_pool2d", input.dtype(), run);
}

void max_pool2d_backward_kernel(const Tensor& grad_out, const Tensor& indices, Tensor& grad_input,
                                const Pool2dParams&) {
  Planes s = planes(grad_input, grad_out);
  visit_floating("max_pool2d_backward", grad_out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* dy = static_cast<const T*>(grad_out.data_ptr());
    const int64_t* idx = indices.data<int64_t>();
    T* dx = static_cast<T*>(grad_input.data_ptr());
    for_each_plane(s.count, s.h * s.w, [&](int64_t plane) {
      T* in = dx + plane * s.h * s.w;
      std::fill(in, in + s.h * s.w, T(0));
      for (int64_t o = plane * s.oh * s.ow; o < (plane + 1) * s.oh * s.ow; ++o) {
        in[idx[o]] = T(C(in[idx[o]]) + C(dy[o]));
      }
    });
  });
}

// The window of output (oy, ox) and the number it divides by, PyTorch's rules: the window is
// clipped to the padded input to size the divisor (count_include_pad), then to the real input.
struct AvgWindow {
  int64_t y0, y1, x0, x1;
  int64_t divisor;
};

AvgWindow avg_window(const Planes& s, const Pool2dParams& p, int64_t oy, int64_t ox) {
  int64_t y0 = oy * p.stride[0] - p.padding[0], x0 = ox * p.stride[1] - p.padding[1];
  int64_t y1 = std::min(y0 + p.kernel[0], s.h + p.padding[0]);
  int64_t x1 = std::min(x0 + p.kernel[1], s.w + p.padding[1]);
  int64_t padded_size = (y1 - y0) * (x1 - x0);
  y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
  y1 = std::min(y1, s.h), x1 = std::min(x1, s.w);
  int64_t divisor = p.count_include_pad ? padded_size : (y1 - y0) * (x1 - x0);
  return {y0, y1, x0, x1, std::max<int64_t>(divisor, 1)};
}

// Adaptive pooling: output cell o of `out` cells over `in` inputs spans
// [floor(o * in / out), ceil((o + 1) * in / out)).
AvgWindow adaptive_window(const Planes& s, int64_t oy, int64_t ox) {
  int64_t y0 = oy * s.h / s.oh, y1 = ((oy + 1) * s.h + s.oh - 1) / s.oh;
  int64_t x0 = ox * s.w / s.ow, x1 = ((ox + 1) * s.w + s.ow - 1) / s.ow;
  return {y0, y1, x0, x1, (y1 - y0) * (x1 - x0)};
}

template <bool kAdaptive>
void avg_pool2d_kernel(const Tensor& input, Tensor& out, const Pool2dParams& p) {
  Planes s = planes(input, out);
  visit_floating("avg_pool2d", input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(input.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    for_each_plane(s.count, s.h * s.w, [&](int64_t plane) {
      const T* in = x + plane * s.h * s.w;
      for (int64_t oy = 0; oy < s.oh; ++oy) {
        for (int64_t ox = 0; ox < s.ow; ++ox) {
          AvgWindow win = kAdaptive ? adaptive_window(s, oy, ox) : avg_window(s, p, oy, ox);
          accumulate_t<T> sum = 0;
          for (int64_t iy = win.y0; iy < win.y1; ++iy) {
            for (int64_t ix = win.x0; ix < win.x1; ++ix) sum += in[iy * s.w + ix];
          }
          y[plane * s.oh * s.ow + oy * s.ow + ox] = T(sum / static_cast<double>(win.divisor));
        }
      }
    });
  });
}

template <bool kAdaptive>
void avg_pool2d_backward_kernel(const Tensor& grad_out, Tensor& grad_input, const Pool2dParams& p) {
  Planes s = planes(grad_input, grad_out);
  visit_floating("avg_pool2d_backward", grad_out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* dy = static_cast<const T*>(grad_out.data_ptr());
    T* dx = static_cast<T*>(grad_input.data_ptr());
    for_each_plane(s.count, s.h * s.w, [&](int64_t plane) {
      T* in = dx + plane * s.h * s.w;
      std::fill(in, in + s.h * s.w, T(0));
      for (int64_t oy = 0; oy < s.oh; ++oy) {
        for (int64_t ox = 0; ox < s.ow; ++ox) {
          AvgWindow win = kAdaptive ? adaptive_window(s, oy, ox) : avg_window(s, p, oy, ox);
          C share = C(dy[plane * s.oh * s.ow + oy * s.ow + ox]) / C(win.divisor);
          for (int64_t iy = win.y0; iy < win.y1; ++iy) {
            for (int64_t ix = win.x0; ix < win.x1; ++ix) {
              in[iy * s.w + ix] = T(C(in[iy * s.w + ix]) + share);
            }
          }
        }
      }
    });
  });
}

}  // namespace

void register_pool_kernels(KernelRegistry& r) {
  r.add<MaxPool2dKernel>(OpKey::max_pool2d, kCPU, max_pool2d_kernel);
  r.add<MaxPool2dBackwardKernel>(OpKey::max_pool2d_backward, kCPU, max_pool2d_backward_kernel);
  r.add<AvgPool2dKernel>(OpKey::avg_pool2d, kCPU, avg_pool2d_kernel<false>);
  r.add<AvgPool2dBackwardKernel>(OpKey::avg_pool2d_backward, kCPU,
                                 avg_pool2d_backward_kernel<false>);
  r.add<AvgPool2dKernel>(OpKey::adaptive_avg_pool2d, kCPU, avg_pool2d_kernel<true>);
  r.add<AvgPool2dBackwardKernel>(OpKey::adaptive_avg_pool2d_backward, kCPU,
                                 avg_pool2d_backward_kernel<true>);
}

}  // namespace wick::cpu
