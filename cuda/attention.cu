// Scaled dot-product attention on CUDA (core/kernels.h): a straightforward fused kernel, written
// for correctness rather than speed. Like the CPU kernel (Note [blocked attention] in
// core/cpu/attention_kernels.cpp) it never stores the L x S scores: only a tile of kKeyTile scores
// per block lives in shared memory, with an online softmax across tiles.
//
// Forward: one block per (query row, batch entry). The threads score a tile of keys, thread 0
// folds the tile into the running maximum and sum, and the threads then update the output row's
// accumulator (in shared memory, Ev values) feature by feature.
// Backward: two kernels, no atomics. One block per query row computes D_i = dO_i . O_i and dQ_i;
// then one block per key row computes dK_j and dV_j, reading D from the first kernel. Each
// recomputes P_ij = exp(s_ij - lse_i) from the saved log-sum-exp.
#include <limits>

#include "core/ops/factory.h"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

constexpr int kThreads = 128;
constexpr int kKeyTile = 128;  // one score per thread

struct Dims {
  int64_t B, L, S, E, Ev;
  int64_t mask_sb, mask_si, mask_sj;  // the [B, L, S] mask's strides (0 where it broadcasts)
  bool has_mask, causal;
};

template <class T, class C>
__device__ C score(const T* q, const T* k, const T* mask, const Dims& d, C scale, int64_t b,
                   int64_t i, int64_t j) {
  if (d.causal && j > i) return -std::numeric_limits<C>::infinity();
  const T* qi = q + (b * d.L + i) * d.E;
  const T* kj = k + (b * d.S + j) * d.E;
  C s = 0;
  for (int64_t e = 0; e < d.E; ++e) s += C(qi[e]) * C(kj[e]);
  s *= scale;
  if (d.has_mask) s += C(mask[b * d.mask_sb + i * d.mask_si + j * d.mask_sj]);
  return s;
}

template <class T>
__global__ void attention_forward(const T* q, const T* k, const T* v, const T* mask, T* out,
                                  compute_t<T>* lse, Dims d, compute_t<T> scale) {
  using C = compute_t<T>;
  extern __shared__ unsigned char smem[];
  C* acc = reinterpret_cast<C*>(smem);  // [Ev]
  __shared__ C p[kKeyTile];
  __shared__ C m, l, alpha;
  __shared__ bool skip;
  const int64_t i = blockIdx.x, b = blockIdx.y;
  const C neg_inf = -std::numeric_limits<C>::infinity();
  for (int64_t e = threadIdx.x; e < d.Ev; e += blockDim.x) acc[e] = 0;
  if (threadIdx.x == 0) m = neg_inf, l = 0;
  __syncthreads();
  const int64_t key_end = d.causal ? (i + 1 < d.S ? i + 1 : d.S) : d.S;
  for (int64_t j0 = 0; j0 < key_end; j0 += kKeyTile) {
    const int64_t n = key_end - j0 < kKeyTile ? key_end - j0 : kKeyTile;
    if (threadIdx.x < n) p[threadIdx.x] = score<T, C>(q, k, mask, d, scale, b, i, j0 + threadIdx.x);
    __syncthreads();
    if (threadIdx.x == 0) {
      C tile_max = neg_inf;
      for (int64_t t = 0; t < n; ++t) tile_max = p[t] > tile_max ? p[t] : tile_max;
      const C m_new = tile_max > m ? tile_max : m;
      skip = m_new == neg_inf;  // every key so far hidden
      if (!skip) {
        alpha = exp(m - m_new);
        C sum = 0;
        for (int64_t t = 0; t < n; ++t) sum += (p[t] = exp(p[t] - m_new));
        l = l * alpha + sum;
        m = m_new;
      }
    }
    __syncthreads();
    if (!skip) {
      for (int64_t e = threadIdx.x; e < d.Ev; e += blockDim.x) {
        C a = acc[e] * alpha;
        for (int64_t t = 0; t < n; ++t) a += p[t] * C(v[(b * d.S + j0 + t) * d.Ev + e]);
        acc[e] = a;
      }
    }
    __syncthreads();
  }
  T* oi = out + (b * d.L + i) * d.Ev;
  const C nan = std::numeric_limits<C>::quiet_NaN();
  for (int64_t e = threadIdx.x; e < d.Ev; e += blockDim.x) {
    oi[e] = T(m == neg_inf ? nan : acc[e] / l);
  }
  if (threadIdx.x == 0) lse[b * d.L + i] = m == neg_inf ? nan : m + log(l);
}

// dQ_i = scale sum_j P_ij (dO_i . v_j - D_i) k_j, with D_i = dO_i . O_i (written to D).
template <class T>
__global__ void attention_backward_query(const T* go, const T* q, const T* k, const T* v,
                                         const T* mask, const T* out, const compute_t<T>* lse,
                                         compute_t<T>* D, T* gq, Dims d, compute_t<T> scale) {
  using C = compute_t<T>;
  extern __shared__ unsigned char smem[];
  C* dq = reinterpret_cast<C*>(smem);  // [E]
  __shared__ C ds[kKeyTile];
  __shared__ C Di;
  const int64_t i = blockIdx.x, b = blockIdx.y;
  const T* goi = go + (b * d.L + i) * d.Ev;
  if (threadIdx.x == 0) {
    C s = 0;
    const T* oi = out + (b * d.L + i) * d.Ev;
    for (int64_t e = 0; e < d.Ev; ++e) s += C(goi[e]) * C(oi[e]);
    Di = s;
    D[b * d.L + i] = s;
  }
  for (int64_t e = threadIdx.x; e < d.E; e += blockDim.x) dq[e] = 0;
  __syncthreads();
  const C lse_i = lse[b * d.L + i];
  const int64_t key_end = d.causal ? (i + 1 < d.S ? i + 1 : d.S) : d.S;
  for (int64_t j0 = 0; j0 < key_end; j0 += kKeyTile) {
    const int64_t n = key_end - j0 < kKeyTile ? key_end - j0 : kKeyTile;
    if (threadIdx.x < n) {
      const int64_t j = j0 + threadIdx.x;
      const C pij = exp(score<T, C>(q, k, mask, d, scale, b, i, j) - lse_i);
      C dp = 0;
      for (int64_t e = 0; e < d.Ev; ++e) dp += C(goi[e]) * C(v[(b * d.S + j) * d.Ev + e]);
      ds[threadIdx.x] = pij * (dp - Di);
    }
    __syncthreads();
    for (int64_t e = threadIdx.x; e < d.E; e += blockDim.x) {
      C a = dq[e];
      for (int64_t t = 0; t < n; ++t) a += ds[t] * C(k[(b * d.S + j0 + t) * d.E + e]);
      dq[e] = a;
    }
    __syncthreads();
  }
  for (int64_t e = threadIdx.x; e < d.E; e += blockDim.x) {
    gq[(b * d.L + i) * d.E + e] = T(dq[e] * scale);
  }
}

// dV_j = sum_i P_ij dO_i and dK_j = scale sum_i P_ij (dO_i . v_j - D_i) q_i.
template <class T>
__global__ void attention_backward_key(const T* go, const T* q, const T* k, const T* v,
                                       const T* mask, const compute_t<T>* lse,
                                       const compute_t<T>* D, T* gk, T* gv, Dims d,
                                       compute_t<T> scale) {
  using C = compute_t<T>;
  extern __shared__ unsigned char smem[];
  C* dk = reinterpret_cast<C*>(smem);  // [E]
  C* dv = dk + d.E;                    // [Ev]
  __shared__ C p[kThreads], ds[kThreads];
  const int64_t j = blockIdx.x, b = blockIdx.y;
  for (int64_t e = threadIdx.x; e < d.E; e += blockDim.x) dk[e] = 0;
  for (int64_t e = threadIdx.x; e < d.Ev; e += blockDim.x) dv[e] = 0;
  __syncthreads();
  const int64_t query_begin = d.causal ? j : 0;  // earlier queries cannot see key j
  for (int64_t i0 = query_begin; i0 < d.L; i0 += kThreads) {
    const int64_t n = d.L - i0 < kThreads ? d.L - i0 : kThreads;
    if (threadIdx.x < n) {
      const int64_t i = i0 + threadIdx.x;
      const C pij = exp(score<T, C>(q, k, mask, d, scale, b, i, j) - lse[b * d.L + i]);
      const T* goi = go + (b * d.L + i) * d.Ev;
      C dp = 0;
      for (int64_t e = 0; e < d.Ev; ++e) dp += C(goi[e]) * C(v[(b * d.S + j) * d.Ev + e]);
      p[threadIdx.x] = pij;
      ds[threadIdx.x] = pij * (dp - D[b * d.L + i]);
    }
    __syncthreads();
    for (int64_t e = threadIdx.x; e < d.E; e += blockDim.x) {
      C a = dk[e];
      for (int64_t t = 0; t < n; ++t) a += ds[t] * C(q[(b * d.L + i0 + t) * d.E + e]);
      dk[e] = a;
    }
    for (int64_t e = threadIdx.x; e < d.Ev; e += blockDim.x) {
      C a = dv[e];
      for (int64_t t = 0; t < n; ++t) a += p[t] * C(go[(b * d.L + i0 + t) * d.Ev + e]);
      dv[e] = a;
    }
    __syncthreads();
  }
  for (int64_t e = threadIdx.x; e < d.E; e += blockDim.x) {
    gk[(b * d.S + j) * d.E + e] = T(dk[e] * scale);
  }
  for (int64_t e = threadIdx.x; e < d.Ev; e += blockDim.x) {
    gv[(b * d.S + j) * d.Ev + e] = T(dv[e]);
  }
}

Dims dims_of(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal) {
  Dims d{q.size(0), q.size(1), k.size(1), q.size(2), v.size(2), 0, 0, 0, mask.defined(), causal};
  if (mask.defined())
    d.mask_sb = mask.stride(0), d.mask_si = mask.stride(1), d.mask_sj = mask.stride(2);
  return d;
}

void check_grid(const char* op, const Dims& d) {
  check_value(d.L < (int64_t(1) << 31) && d.S < (int64_t(1) << 31) && d.B < 65536, op,
              "too large for the CUDA kernel's grid: batch x heads ", d.B, ", L ", d.L, ", S ",
              d.S);
}

void attention(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& mask,
               Tensor& out, Tensor& logsumexp, const AttentionParams& params) {
  Dims d = dims_of(query, key, value, mask, params.is_causal);
  check_grid("scaled_dot_product_attention", d);
  if (d.B == 0 || d.L == 0) return;
  LaunchContext ctx(out);
  visit_floating("scaled_dot_product_attention", query.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    dim3 grid(static_cast<unsigned>(d.L), static_cast<unsigned>(d.B));
    attention_forward<T><<<grid, kThreads, d.Ev * sizeof(C), ctx.stream()>>>(
        static_cast<const T*>(query.data_ptr()), static_cast<const T*>(key.data_ptr()),
        static_cast<const T*>(value.data_ptr()),
        mask.defined() ? static_cast<const T*>(mask.data_ptr()) : nullptr,
        static_cast<T*>(out.data_ptr()), static_cast<C*>(logsumexp.data_ptr()), d, C(params.scale));
    WICK_KERNEL_CHECK();
  });
}

void attention_backward(const Tensor& grad_out, const Tensor& query, const Tensor& key,
                        const Tensor& value, const Tensor& mask, const Tensor& out,
                        const Tensor& logsumexp, Tensor& grad_query, Tensor& grad_key,
                        Tensor& grad_value, const AttentionParams& params) {
  Dims d = dims_of(query, key, value, mask, params.is_causal);
  check_grid("scaled_dot_product_attention_backward", d);
  if (d.B == 0) return;
  LaunchContext ctx(grad_query);
  // D_i, written by the first kernel and read by the second: O(B L), like the log-sum-exp.
  Tensor D = empty(logsumexp.shape(), options_of(logsumexp));
  visit_floating("scaled_dot_product_attention_backward", query.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* go = static_cast<const T*>(grad_out.data_ptr());
    const T* q = static_cast<const T*>(query.data_ptr());
    const T* k = static_cast<const T*>(key.data_ptr());
    const T* v = static_cast<const T*>(value.data_ptr());
    const T* m = mask.defined() ? static_cast<const T*>(mask.data_ptr()) : nullptr;
    const C* lse = static_cast<const C*>(logsumexp.data_ptr());
    C* Dp = static_cast<C*>(D.data_ptr());
    if (d.L > 0) {
      attention_backward_query<T><<<dim3(d.L, d.B), kThreads, d.E * sizeof(C), ctx.stream()>>>(
          go, q, k, v, m, static_cast<const T*>(out.data_ptr()), lse, Dp,
          static_cast<T*>(grad_query.data_ptr()), d, C(params.scale));
      WICK_KERNEL_CHECK();
    }
    if (d.S > 0) {
      attention_backward_key<T>
          <<<dim3(d.S, d.B), kThreads, (d.E + d.Ev) * sizeof(C), ctx.stream()>>>(
              go, q, k, v, m, lse, Dp, static_cast<T*>(grad_key.data_ptr()),
              static_cast<T*>(grad_value.data_ptr()), d, C(params.scale));
      WICK_KERNEL_CHECK();
    }
  });
}

}  // namespace

void register_attention_kernels(KernelRegistry& r) {
  r.add<AttentionKernel>(OpKey::scaled_dot_product_attention, kCUDA, attention);
  r.add<AttentionBackwardKernel>(OpKey::scaled_dot_product_attention_backward, kCUDA,
                                 attention_backward);
}

}  // namespace wick::cuda
