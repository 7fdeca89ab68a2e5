// CPU kernels of scaled dot-product attention (core/kernels.h), blocked as FlashAttention is.
//
// Note [blocked attention]
// The explicit formula softmax(scale q k^T + mask) v materialises the L x S score matrix and the
// L x S probabilities, and its backward keeps the probabilities: O(L S) memory per head, 64 MiB of
// float32 for one head at L = S = 4096. These kernels never hold more than a tile of it:
//
// Forward: the queries are cut into tiles of kQueryTile rows, each tile a unit of parallel work,
// and each query tile walks the keys kKeyTile at a time. For every query row it keeps a running
// maximum m, a running sum l of exp(score - m) and an unnormalised output row acc. A new key tile
// with a larger maximum m' rescales l and acc by exp(m - m') before adding its own terms (the
// "online softmax"), so the result is exact, and every exponent is <= 0. At the end out = acc / l
// and logsumexp = m + log l, the only per-row statistic kept for the backward. With is_causal the
// key tiles wholly above the diagonal (first key > last query of the tile) are never visited.
//
// Backward: D_i = dO_i . O_i per query row; then, tile against tile (and only the tiles that can
// see each other), the probabilities are recomputed from the saved logsumexp,
// P_ij = exp(s_ij - lse_i), and
//   dV_j += P_ij dO_i,   dS_ij = P_ij (dO_i . v_j - D_i),   dQ_i += scale dS_ij k_j,
//   dK_j += scale dS_ij q_i.
// The work is split in two passes so that no two threads write one gradient row: one over key
// tiles (dK, dV), one over query tiles (dQ), each recomputing P. The scratch (D [B, L] and one
// tile's accumulators per thread) comes from the host allocator, so its statistics show the whole
// footprint, O(L + tile d) beyond the gradients (tests/cpp/test_attention.cpp measures it).
#include <cmath>
#include <limits>
#include <vector>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"
#include "core/ops.h"

namespace wick::cpu {

namespace {

constexpr int64_t kQueryTile = 64;
constexpr int64_t kKeyTile = 64;

// Per-thread scratch from the host allocator, `per_thread` elements of C for each thread.
template <class C>
Tensor scratch(int64_t per_thread) {
  static_assert(sizeof(C) <= sizeof(double));
  int64_t doubles = (per_thread * static_cast<int64_t>(sizeof(C)) + 7) / 8;
  return empty(Shape{max_threads(), std::max<int64_t>(doubles, 1)}, TensorOptions(kFloat64));
}

template <class C>
C* slot(const Tensor& t) {
  return reinterpret_cast<C*>(t.data<double>() + thread_slot() * t.size(1));
}

// Reads the additive mask, or 0 without one.
template <class T, class C>
struct MaskView {
  const T* data = nullptr;
  int64_t sb = 0, si = 0, sj = 0;
  explicit MaskView(const Tensor& mask) {
    if (!mask.defined()) return;
    data = static_cast<const T*>(mask.data_ptr());
    sb = mask.stride(0), si = mask.stride(1), sj = mask.stride(2);
  }
  C operator()(int64_t b, int64_t i, int64_t j) const {
    return data ? C(data[b * sb + i * si + j * sj]) : C(0);
  }
};

template <class T, class C>
C dot(const T* a, const T* b, int64_t n) {
  C s = 0;
  for (int64_t e = 0; e < n; ++e) s += C(a[e]) * C(b[e]);
  return s;
}

void attention_kernel(const Tensor& query, const Tensor& key, const Tensor& value,
                      const Tensor& attn_mask, Tensor& out, Tensor& logsumexp,
                      const AttentionParams& p) {
  const int64_t B = query.size(0), L = query.size(1), E = query.size(2);
  const int64_t S = key.size(1), Ev = value.size(2);
  const int64_t q_tiles = (L + kQueryTile - 1) / kQueryTile;
  visit_floating("scaled_dot_product_attention", query.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C scale = C(p.scale), neg_inf = -std::numeric_limits<C>::infinity();
    const T* q = static_cast<const T*>(query.data_ptr());
    const T* k = static_cast<const T*>(key.data_ptr());
    const T* v = static_cast<const T*>(value.data_ptr());
    T* o = out.data<T>();
    C* lse = static_cast<C*>(logsumexp.data_ptr());
    MaskView<T, C> mask(attn_mask);
    // Per thread: acc [kQueryTile, Ev], m and l [kQueryTile], scores [kKeyTile].
    Tensor buf = scratch<C>(kQueryTile * (Ev + 2) + kKeyTile);
    int64_t grain = std::max<int64_t>(1, kParallelGrain / (kQueryTile * std::max<int64_t>(S, 1)));
    parallel_for(B * q_tiles, grain, [&](int64_t begin, int64_t end) {
      C* acc = slot<C>(buf);
      C* m = acc + kQueryTile * Ev;
      C* l = m + kQueryTile;
      C* s = l + kQueryTile;
      for (int64_t unit = begin; unit < end; ++unit) {
        const int64_t b = unit / q_tiles, i0 = (unit % q_tiles) * kQueryTile;
        const int64_t i1 = std::min(L, i0 + kQueryTile);
        std::fill(acc, acc + (i1 - i0) * Ev, C(0));
        std::fill(m, m + (i1 - i0), neg_inf);
        std::fill(l, l + (i1 - i0), C(0));
        // Causal: no key after the tile's last query is visible to any row of it.
        const int64_t key_end = p.is_causal ? std::min(S, i1) : S;
        for (int64_t j0 = 0; j0 < key_end; j0 += kKeyTile) {
          const int64_t j1 = std::min(key_end, j0 + kKeyTile);
          for (int64_t i = i0; i < i1; ++i) {
            const T* qi = q + (b * L + i) * E;
            C tile_max = neg_inf;
            for (int64_t j = j0; j < j1; ++j) {
              C x = (p.is_causal && j > i)
                        ? neg_inf
                        : scale * dot<T, C>(qi, k + (b * S + j) * E, E) + mask(b, i, j);
              s[j - j0] = x;
              tile_max = std::max(tile_max, x);
            }
            const int64_t r = i - i0;
            const C m_new = std::max(m[r], tile_max);
            if (m_new == neg_inf) continue;          // every key so far hidden: nothing to add
            const C alpha = std::exp(m[r] - m_new);  // 0 on the first visible tile
            C* a = acc + r * Ev;
            if (alpha != C(1)) {
              l[r] *= alpha;
              for (int64_t e = 0; e < Ev; ++e) a[e] *= alpha;
            }
            for (int64_t j = j0; j < j1; ++j) {
              const C pj = std::exp(s[j - j0] - m_new);
              if (pj == C(0)) continue;
              l[r] += pj;
              const T* vj = v + (b * S + j) * Ev;
              for (int64_t e = 0; e < Ev; ++e) a[e] += pj * C(vj[e]);
            }
            m[r] = m_new;
          }
        }
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t r = i - i0;
          T* oi = o + (b * L + i) * Ev;
          if (m[r] == neg_inf) {  // no visible key: the explicit softmax is 0/0 here
            const C nan = std::numeric_limits<C>::quiet_NaN();
            for (int64_t e = 0; e < Ev; ++e) oi[e] = T(nan);
            lse[b * L + i] = nan;
            continue;
          }
          const C inv = C(1) / l[r];
          for (int64_t e = 0; e < Ev; ++e) oi[e] = T(acc[r * Ev + e] * inv);
          lse[b * L + i] = m[r] + std::log(l[r]);
        }
      }
    });
  });
}

void attention_backward_kernel(const Tensor& grad_out, const Tensor& query, const Tensor& key,
                               const Tensor& value, const Tensor& attn_mask, const Tensor& out,
                               const Tensor& logsumexp, Tensor& grad_query, Tensor& grad_key,
                               Tensor& grad_value, const AttentionParams& p) {
  const int64_t B = query.size(0), L = query.size(1), E = query.size(2);
  const int64_t S = key.size(1), Ev = value.size(2);
  const int64_t q_tiles = (L + kQueryTile - 1) / kQueryTile;
  const int64_t k_tiles = (S + kKeyTile - 1) / kKeyTile;
  visit_floating("scaled_dot_product_attention_backward", query.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C scale = C(p.scale);
    const T* q = static_cast<const T*>(query.data_ptr());
    const T* k = static_cast<const T*>(key.data_ptr());
    const T* v = static_cast<const T*>(value.data_ptr());
    const T* o = static_cast<const T*>(out.data_ptr());
    const T* go = static_cast<const T*>(grad_out.data_ptr());
    const C* lse = static_cast<const C*>(logsumexp.data_ptr());
    T* gq = grad_query.data<T>();
    T* gk = grad_key.data<T>();
    T* gv = grad_value.data<T>();
    MaskView<T, C> mask(attn_mask);
    // D [B, L] (the log-sum-exp's dtype is the compute type), then per thread the accumulators
    // of one tile: dK and dV [kKeyTile, E + Ev], or dQ [kQueryTile, E].
    Tensor d_rows = empty(logsumexp.shape(), TensorOptions(logsumexp.dtype()));
    C* D = static_cast<C*>(d_rows.data_ptr());
    Tensor buf = scratch<C>(std::max(kKeyTile * (E + Ev), kQueryTile * E));
    parallel_for(B * L, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(Ev, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t r = begin; r < end; ++r)
                     D[r] = dot<T, C>(go + r * Ev, o + r * Ev, Ev);
                 });
    // P_ij recomputed from the log-sum-exp; 0 for a hidden key.
    auto prob = [&](int64_t b, int64_t i, int64_t j) {
      return std::exp(scale * dot<T, C>(q + (b * L + i) * E, k + (b * S + j) * E, E) +
                      mask(b, i, j) - lse[b * L + i]);
    };
    // dK and dV: each key tile is one unit of work and owns its rows.
    parallel_for(B * k_tiles, 1, [&](int64_t begin, int64_t end) {
      C* dk = slot<C>(buf);
      C* dv = dk + kKeyTile * E;
      for (int64_t unit = begin; unit < end; ++unit) {
        const int64_t b = unit / k_tiles, j0 = (unit % k_tiles) * kKeyTile;
        const int64_t j1 = std::min(S, j0 + kKeyTile);
        std::fill(dk, dk + (j1 - j0) * E, C(0));
        std::fill(dv, dv + (j1 - j0) * Ev, C(0));
        // Causal: queries before the tile's first key see none of it.
        for (int64_t i = p.is_causal ? j0 : 0; i < L; ++i) {
          const T* qi = q + (b * L + i) * E;
          const T* goi = go + (b * L + i) * Ev;
          const int64_t j_end = p.is_causal ? std::min(j1, i + 1) : j1;
          for (int64_t j = j0; j < j_end; ++j) {
            const C pij = prob(b, i, j);
            if (pij == C(0)) continue;  // a hidden key (or one too small to matter)
            C* dvj = dv + (j - j0) * Ev;
            for (int64_t e = 0; e < Ev; ++e) dvj[e] += pij * C(goi[e]);
            const C ds = scale * pij * (dot<T, C>(goi, v + (b * S + j) * Ev, Ev) - D[b * L + i]);
            C* dkj = dk + (j - j0) * E;
            for (int64_t e = 0; e < E; ++e) dkj[e] += ds * C(qi[e]);
          }
        }
        for (int64_t x = 0; x < (j1 - j0) * E; ++x) gk[(b * S + j0) * E + x] = T(dk[x]);
        for (int64_t x = 0; x < (j1 - j0) * Ev; ++x) gv[(b * S + j0) * Ev + x] = T(dv[x]);
      }
    });
    // dQ: each query tile is one unit of work and owns its rows. The probabilities are computed
    // a second time rather than shared, so no two threads ever write one gradient row.
    parallel_for(B * q_tiles, 1, [&](int64_t begin, int64_t end) {
      C* dq = slot<C>(buf);
      for (int64_t unit = begin; unit < end; ++unit) {
        const int64_t b = unit / q_tiles, i0 = (unit % q_tiles) * kQueryTile;
        const int64_t i1 = std::min(L, i0 + kQueryTile);
        std::fill(dq, dq + (i1 - i0) * E, C(0));
        const int64_t key_end = p.is_causal ? std::min(S, i1) : S;
        for (int64_t j0 = 0; j0 < key_end; j0 += kKeyTile) {
          const int64_t j1 = std::min(key_end, j0 + kKeyTile);
          for (int64_t i = i0; i < i1; ++i) {
            const T* goi = go + (b * L + i) * Ev;
            C* dqi = dq + (i - i0) * E;
            const int64_t j_end = p.is_causal ? std::min(j1, i + 1) : j1;
            for (int64_t j = j0; j < j_end; ++j) {
              const C pij = prob(b, i, j);
              if (pij == C(0)) continue;
              const T* kj = k + (b * S + j) * E;
              const C ds = scale * pij * (dot<T, C>(goi, v + (b * S + j) * Ev, Ev) - D[b * L + i]);
              for (int64_t e = 0; e < E; ++e) dqi[e] += ds * C(kj[e]);
            }
          }
        }
        for (int64_t x = 0; x < (i1 - i0) * E; ++x) gq[(b * L + i0) * E + x] = T(dq[x]);
      }
    });
  });
}

}  // namespace

void register_attention_kernels(KernelRegistry& r) {
  r.add<AttentionKernel>(OpKey::scaled_dot_product_attention, kCPU, attention_kernel);
  r.add<AttentionBackwardKernel>(OpKey::scaled_dot_product_attention_backward, kCPU,
                                 attention_backward_kernel);
}

}  // namespace wick::cpu
