// Autograd from first principles: a small network learns to separate two interleaved spirals,
// using nothing but tensors, wick's ops and backward(). The parameters, the forward pass, the
// loss and the SGD-with-momentum step are all written out here; later examples use nn/ and
// optimizers that package exactly these steps.
//
//   ./build/examples/fit_spirals [--epochs N] [--lr X] [--hidden H] [--seed S]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "examples/common/cli.h"
#include "wick.h"

using namespace wick;

namespace {

struct Options {
  int epochs = 500;
  double lr = 0.05;
  double momentum = 0.9;
  int64_t hidden = 64;
  uint64_t seed = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help") {
      std::printf("usage: fit_spirals [--epochs N] [--lr X] [--hidden H] [--seed S]\n");
      std::exit(0);
    }
    if (i + 1 >= argc) throw std::invalid_argument("[fit_spirals] missing value for " + flag);
    std::string value = argv[++i];
    // Checked conversions (examples/common/cli.h): "12abc", -3 epochs or lr=nan exit 2.
    if (flag == "--epochs") {
      o.epochs =
          static_cast<int>(examples::parse_integer("fit_spirals", "epochs", value, 1, 1000000));
    } else if (flag == "--lr") {
      o.lr = examples::parse_real("fit_spirals", "lr", value, 0, 1e6);
    } else if (flag == "--hidden") {
      o.hidden = examples::parse_integer("fit_spirals", "hidden", value, 1, 1 << 16);
    } else if (flag == "--seed") {
      o.seed = static_cast<uint64_t>(examples::parse_integer("fit_spirals", "seed", value, 0));
    } else {
      throw std::invalid_argument("[fit_spirals] unknown flag " + flag);
    }
  }
  return o;
}

// Two spirals of n points each, with a little noise: x is [2n, 2], labels are 0 or 1.
void make_spirals(int64_t n, Tensor& x, Tensor& labels) {
  Tensor t = linspace(0.25, 3.5 * M_PI, n);  // angle along the spiral
  Tensor noise = randn({2, 2 * n}) * 0.08;
  Tensor r = t / (3.5 * M_PI);
  Tensor xs = cat({r * cos(t), -(r * cos(t))});
  Tensor ys = cat({r * sin(t), -(r * sin(t))});
  x = stack({xs + noise[0], ys + noise[1]}, 1);
  labels = cat({zeros({n}, kInt64), ones({n}, kInt64)});
}

}  // namespace

int main(int argc, char** argv) try {
  Options opt = parse(argc, argv);
  manual_seed(opt.seed);
  Tensor x, labels;
  make_spirals(500, x, labels);
  Tensor target = one_hot(labels, 2).to(kFloat32);

  // Parameters of 2 -> hidden -> hidden -> 2, initialised like PyTorch's nn.Linear (uniform in
  // +-1/sqrt(fan_in)).
  auto uniform = [](Shape shape, int64_t fan_in) {
    double bound = 1 / std::sqrt(static_cast<double>(fan_in));
    return ((rand(shape) * 2.0 - 1.0) * bound).detach().requires_grad_();
  };
  int64_t h = opt.hidden;
  Tensor w1 = uniform({2, h}, 2), b1 = uniform({h}, 2);
  Tensor w2 = uniform({h, h}, h), b2 = uniform({h}, h);
  Tensor w3 = uniform({h, 2}, h), b3 = uniform({2}, h);
  TensorList params = {w1, b1, w2, b2, w3, b3};
  TensorList velocity;
  for (const Tensor& p : params) velocity.push_back(zeros_like(p));
  Tensor inputs = x * 3.0;  // spread the points over the units' sensitive range
  std::printf("fit_spirals: %lld points, hidden %lld, lr %g, %d epochs\n",
              static_cast<long long>(x.size(0)), static_cast<long long>(opt.hidden), opt.lr,
              opt.epochs);
  auto start = std::chrono::steady_clock::now();
  double first_loss = 0, loss_value = 0, accuracy = 0;
  for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
    Tensor hidden = relu(matmul(relu(matmul(inputs, w1) + b1), w2) + b2);
    Tensor logits = matmul(hidden, w3) + b3;
    // Cross-entropy written out: -mean(sum(target * log_softmax(logits))).
    Tensor loss = -(target * log_softmax(logits, 1)).sum({1}).mean();
    for (Tensor& p : params) p.set_grad(Tensor());
    loss.backward();
    {
      NoGradGuard no_grad;  // the update itself is not part of the graph
      for (size_t i = 0; i < params.size(); ++i) {
        velocity[i].mul_(opt.momentum).add_(params[i].grad());  // v = momentum v + g
        params[i].sub_(velocity[i] * opt.lr);                   // p = p - lr v
      }
    }
    loss_value = loss.item<double>();
    if (epoch == 1) first_loss = loss_value;
    accuracy = (logits.argmax(1) == labels).to(kFloat32).mean().item<double>();
    int every = std::max(1, opt.epochs / 10);
    if (epoch == 1 || epoch % every == 0 || epoch == opt.epochs) {
      int filled = 30 * epoch / opt.epochs;
      std::printf("[%-30s] epoch %4d/%d  loss %.4f  accuracy %5.1f%%\n",
                  std::string(filled, '#').c_str(), epoch, opt.epochs, loss_value, 100 * accuracy);
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("summary: loss %.4f -> %.4f, training accuracy %.1f%%, %.2f s (%.0f steps/s)\n",
              first_loss, loss_value, 100 * accuracy, seconds, opt.epochs / seconds);
  return loss_value < first_loss ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return examples::exit_status(e);
}
