// CPU kernels for the fused optimizer updates (core/kernels.h): one pass over a parameter, its
// gradient and its state, instead of the eight or so elementwise ops (and temporaries) the
// update takes when written with tensor ops. Parameters may have any strides.
#include <cmath>
#include <utility>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"

namespace wick::cpu {

namespace {

// Calls update(x0[i], x1[i], ...) for every element of the operands (references to their
// storage type T). Runs where every operand is contiguous get a loop of plain pointers, which the
// compiler vectorises: through strided char pointers, with loads and stores it cannot prove apart,
// SGD's update of the MNIST MLP's weights took a sixth of its compiled training step.
template <class T, class Update, size_t... K>
void update_runs(const std::array<const Tensor*, sizeof...(K)>& operands, const Update& update,
                 std::index_sequence<K...>) {
  ElementwiseLoop<sizeof...(K)> loop(operands);
  loop.run([&](char** ptr, const int64_t* s, int64_t n) {
    if (((s[K] == int64_t(sizeof(T))) && ...)) {
      T* base[] = {reinterpret_cast<T*>(ptr[K])...};
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) update(base[K][i]...);
    } else {
      for (int64_t i = 0; i < n; ++i) update(*reinterpret_cast<T*>(ptr[K] + i * s[K])...);
    }
  });
}

template <class T, class Update, class... Operands>
void update_elements(const Update& update, const Operands&... operands) {
  update_runs<T>({&operands...}, update, std::index_sequence_for<Operands...>());
}

void adam_step_kernel(Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
                      const AdamStepParams& p) {
  visit_floating("adam_step", param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C b1 = C(p.beta1), b2 = C(p.beta2), eps = C(p.eps);
    // Decoupled (AdamW) decay scales the weight; coupled (Adam) decay adds wd * w to the
    // gradient.
    const bool decoupled = p.decoupled_weight_decay, has_wd = p.weight_decay != 0;
    const C wd = C(p.weight_decay), decay = C(1.0 - p.lr * p.weight_decay);
    const C step_size = C(p.lr / p.bias_correction1);
    const C bc2_sqrt = C(std::sqrt(p.bias_correction2));
    update_elements<T>(
        [=](T& w, T& g, T& m, T& v) {
          C wc = C(w), gc = C(g);
          if (has_wd) {
            if (decoupled) {
              wc *= decay;
            } else {
              gc += wd * wc;
            }
          }
          C mc = b1 * C(m) + (C(1) - b1) * gc;
          C vc = b2 * C(v) + (C(1) - b2) * gc * gc;
          m = T(mc);
          v = T(vc);
          w = T(wc - step_size * mc / (std::sqrt(vc) / bc2_sqrt + eps));
        },
        param, grad, exp_avg, exp_avg_sq);
  });
}

void sgd_step_kernel(Tensor& param, const Tensor& grad, Tensor& buffer, const SgdStepParams& p) {
  visit_floating("sgd_step", param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C lr = C(p.lr), momentum = C(p.momentum), keep = C(1.0 - p.dampening);
    const C wd = C(p.weight_decay);
    if (p.momentum == 0) {
      update_elements<T>(
          [=](T& w, T& g) {
            C wc = C(w);
            w = T(wc - lr * (C(g) + wd * wc));
          },
          param, grad);
      return;
    }
    const bool nesterov = p.nesterov;  // steps along d + momentum * b instead of b
    if (p.first_step) {  // the buffer starts as the first gradient; its memory is not read
      update_elements<T>(
          [=](T& w, T& g, T& b) {
            C wc = C(w), d = C(g) + wd * wc;
            b = T(d);
            w = T(wc - lr * (nesterov ? d + momentum * d : d));
          },
          param, grad, buffer);
      return;
    }
    update_elements<T>(
        [=](T& w, T& g, T& b) {
          C wc = C(w), d = C(g) + wd * wc;
          C bc = momentum * C(b) + keep * d;
          b = T(bc);
          w = T(wc - lr * (nesterov ? d + momentum * bc : bc));
        },
        param, grad, buffer);
  });
}

}  // namespace

void register_optim_kernels(KernelRegistry& r) {
  r.add<AdamStepKernel>(OpKey::adam_step, kCPU, adam_step_kernel);
  r.add<SgdStepKernel>(OpKey::sgd_step, kCPU, sgd_step_kernel);
}

}  // namespace wick::cpu
