// Parameter initialisation (torch.nn.init), in place and without recording autograd history.
//
// fan_in / fan_out of a weight [out, in, k...] are in * prod(k) and out * prod(k). Kaiming
// (He et al. 2015) keeps activations' variance constant through ReLU layers:
// std = gain / sqrt(fan); Xavier (Glorot & Bengio 2010) balances forward and backward:
// std = gain * sqrt(2 / (fan_in + fan_out)). A uniform distribution with the same std has
// bound sqrt(3) * std.
#pragma once

#include <string>

#include "core/generator.h"
#include "core/tensor.h"

namespace wick::nn::init {

enum class FanMode { FanIn, FanOut };

// The recommended gain for a nonlinearity: "linear", "conv2d", "sigmoid" -> 1, "tanh" -> 5/3,
// "relu" -> sqrt(2), "leaky_relu" -> sqrt(2 / (1 + param^2)), "selu" -> 3/4.
double calculate_gain(const std::string& nonlinearity, double param = 0.01);
// {fan_in, fan_out} of a tensor with at least 2 dims.
std::pair<int64_t, int64_t> fan_in_and_fan_out(const Tensor& tensor);

Tensor& uniform_(Tensor& tensor, double low = 0.0, double high = 1.0,
                 Generator& generator = default_generator());
Tensor& normal_(Tensor& tensor, double mean = 0.0, double std = 1.0,
                Generator& generator = default_generator());
Tensor& constant_(Tensor& tensor, double value);
Tensor& zeros_(Tensor& tensor);
Tensor& ones_(Tensor& tensor);
Tensor& xavier_uniform_(Tensor& tensor, double gain = 1.0,
                        Generator& generator = default_generator());
Tensor& xavier_normal_(Tensor& tensor, double gain = 1.0,
                       Generator& generator = default_generator());
Tensor& kaiming_uniform_(Tensor& tensor, double a = 0.0, FanMode mode = FanMode::FanIn,
                         const std::string& nonlinearity = "leaky_relu",
                         Generator& generator = default_generator());
Tensor& kaiming_normal_(Tensor& tensor, double a = 0.0, FanMode mode = FanMode::FanIn,
                        const std::string& nonlinearity = "leaky_relu",
                        Generator& generator = default_generator());

// PyTorch's reset_parameters for Linear and the convolutions: kaiming_uniform_(a=sqrt(5)) on the
// weight, which is uniform in +-1/sqrt(fan_in), and the same bound for the bias (if defined). A
// zero-element weight is left as it is and, with no inputs, the bias bound is 0.
void fan_in_uniform_(Tensor& weight, Tensor& bias);

}  // namespace wick::nn::init
