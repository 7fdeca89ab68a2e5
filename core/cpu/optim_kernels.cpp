// CPU kernels for the fused optimizer updates (core/kernels.h): one pass over a parameter, its
// gradient and its state, instead of the eight or so elementwise ops (and temporaries) the
// update takes when written with tensor ops. Parameters may have any strides; the formulas are
// core/optim_update.h's, shared with the CUDA kernels.
#include <cmath>
#include <utility>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"
#include "core/optim_update.h"

namespace wick {

double adam_step_count(const char* op, const Tensor& step) {
  const char* what = "step must be a float64 scalar on the CPU (the optimizer's state['step'])";
  check_value(step.defined(), op, what, "; got an undefined tensor");
  check_value(step.device().type == kCPU && step.dtype() == kFloat64 && step.numel() == 1, op, what,
              "; got ", dtype_name(step.dtype()), " of shape ", step.shape(), " on ",
              step.device().str());
  const double count = step.item<double>();
  check_value(count >= 1 && count == std::floor(count) && count < 9.007199254740992e15, op,
              "step must be a whole number >= 1 (it counts this update); got ", count);
  return count;
}

}  // namespace wick

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
                      const Tensor& step, const AdamStepParams& p) {
  const double count = adam_step_count("adam_step", step);
  visit_floating("adam_step", param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const AdamUpdate<C> update(p, count);
    update_elements<T>(
        [=](T& w, T& g, T& m, T& v) {
          C wc = C(w), mc = C(m), vc = C(v);
          update(wc, C(g), mc, vc);
          w = T(wc);
          m = T(mc);
          v = T(vc);
        },
        param, grad, exp_avg, exp_avg_sq);
  });
}

void sgd_step_kernel(Tensor& param, const Tensor& grad, Tensor& buffer, const SgdStepParams& p) {
  visit_floating("sgd_step", param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const SgdUpdate<C> update(p);
    if (p.momentum == 0) {
      update_elements<T>(
          [=](T& w, T& g) {
            C wc = C(w);
            update(wc, C(g));
            w = T(wc);
          },
          param, grad);
    } else if (p.first_step) {  // the buffer's memory is not read
      update_elements<T>(
          [=](T& w, T& g, T& b) {
            C wc = C(w), bc;
            update(wc, C(g), bc, true);
            w = T(wc);
            b = T(bc);
          },
          param, grad, buffer);
    } else {
      update_elements<T>(
          [=](T& w, T& g, T& b) {
            C wc = C(w), bc = C(b);
            update(wc, C(g), bc, false);
            w = T(wc);
            b = T(bc);
          },
          param, grad, buffer);
    }
  });
}

}  // namespace

void register_optim_kernels(KernelRegistry& r) {
  r.add<AdamStepKernel>(OpKey::adam_step, kCPU, adam_step_kernel);
  r.add<SgdStepKernel>(OpKey::sgd_step, kCPU, sgd_step_kernel);
}

}  // namespace wick::cpu
