// The op table's rows: every op with a kernel in the dispatch table is one line here, and nothing
// else lists ops. The OpKey enum, the op names, the OpInfo table (core/op_table.h), the C++ and
// Python functions of the plain unary ops, and the CPU and CUDA kernel registrations of the
// elementwise families are all expanded from these lists (the "X macro" idiom), so adding a row
// is how an op is added and a row cannot be half-added: a missing functor or formula is a compile
// error. docs/adding_an_op.md walks through one.
//
// Columns of the unary rows, X(name, api, dtype, autocast, grad, saves, backward, attrs, export):
//   api       plain: `Tensor name(const Tensor&)` is generated in C++ and bound in Python;
//             custom: the front function is written by hand (it takes attributes or checks more)
//   dtype     DTypeRule: which dtypes run and which dtype comes out
//   autocast  AutocastPolicy: the dtype the op runs in under autocast (Keep: its input's)
//   grad      diff: the backward is `name##_grad` (autograd/functions/unary_grads.cpp) applied
//             to what `saves` names; nodiff: no gradient flows through the op
//   saves     what the backward keeps alive: Input, Output (cheaper for exp, tanh, ...), Nothing
//   backward  the autograd node's name, as grad_fn shows it
//   attrs     the typed attributes (fields of UnaryAttrs) the op reads
//   export    the ONNX operator it exports to ("" until the exporter needs one)
#pragma once

// clang-format off
#define WICK_UNARY_OPS(X)                                                                         \
  X(neg,         plain,  Numeric,  Keep,    diff,   Nothing, "NegBackward",        "", "Neg")     \
  X(abs,         plain,  Numeric,  Keep,    diff,   Input,   "AbsBackward",        "", "Abs")     \
  X(square,      plain,  Numeric,  Keep,    diff,   Input,   "PowBackward",        "", "")        \
  X(exp,         plain,  Floating, Float32, diff,   Output,  "ExpBackward",        "", "Exp")     \
  X(expm1,       plain,  Floating, Float32, diff,   Output,  "Expm1Backward",      "", "")        \
  X(log,         plain,  Floating, Float32, diff,   Input,   "LogBackward",        "", "Log")     \
  X(log1p,       plain,  Floating, Float32, diff,   Input,   "Log1pBackward",      "", "")        \
  X(sqrt,        plain,  Floating, Keep,    diff,   Output,  "SqrtBackward",       "", "Sqrt")    \
  X(rsqrt,       plain,  Floating, Float32, diff,   Output,  "RsqrtBackward",      "", "")        \
  X(reciprocal,  plain,  Floating, Float32, diff,   Output,  "ReciprocalBackward", "", "Reciprocal")\
  X(sin,         plain,  Floating, Keep,    diff,   Input,   "SinBackward",        "", "Sin")     \
  X(cos,         plain,  Floating, Keep,    diff,   Input,   "CosBackward",        "", "Cos")     \
  X(tanh,        plain,  Floating, Keep,    diff,   Output,  "TanhBackward",       "", "Tanh")    \
  X(sigmoid,     plain,  Floating, Keep,    diff,   Output,  "SigmoidBackward",    "", "Sigmoid") \
  X(relu,        plain,  Numeric,  Keep,    diff,   Output,  "ReluBackward",       "", "Relu")    \
  X(gelu,        custom, Floating, Keep,    diff,   Input,   "GeluBackward",       "", "Gelu")    \
  X(gelu_tanh,   custom, Floating, Keep,    diff,   Input,   "GeluBackward",       "", "Gelu")    \
  X(erf,         plain,  Floating, Keep,    diff,   Input,   "ErfBackward",        "", "Erf")     \
  X(silu,        plain,  Floating, Keep,    diff,   Input,   "SiluBackward",       "", "")        \
  X(leaky_relu,  custom, Floating, Keep,    diff,   Input,   "LeakyReluBackward",                 \
    "negative_slope: float", "LeakyRelu")                                                         \
  X(clamp,       custom, Numeric,  Keep,    diff,   Input,   "ClampBackward",                     \
    "min: float, max: float", "Clip")                                                             \
  X(pow_scalar,  custom, Numeric,  Float32, diff,   Input,   "PowBackward",                       \
    "exponent: float", "Pow")                                                                     \
  X(tan,         plain,  Floating, Float32, diff,   Input,   "TanBackward",        "", "Tan")     \
  X(sinh,        plain,  Floating, Float32, diff,   Input,   "SinhBackward",       "", "Sinh")    \
  X(cosh,        plain,  Floating, Float32, diff,   Input,   "CoshBackward",       "", "Cosh")    \
  X(log2,        plain,  Floating, Float32, diff,   Input,   "Log2Backward",       "", "")        \
  X(log10,       plain,  Floating, Float32, diff,   Input,   "Log10Backward",      "", "")        \
  X(floor,       plain,  Numeric,  Keep,    diff,   Nothing, "FloorBackward",      "", "Floor")   \
  X(ceil,        plain,  Numeric,  Keep,    diff,   Nothing, "CeilBackward",       "", "Ceil")    \
  X(trunc,       plain,  Numeric,  Keep,    diff,   Nothing, "TruncBackward",      "", "")        \
  X(round,       plain,  Numeric,  Keep,    diff,   Nothing, "RoundBackward",      "", "Round")   \
  X(sign,        plain,  Numeric,  Keep,    diff,   Nothing, "SignBackward",       "", "Sign")    \
  X(elu,         custom, Floating, Keep,    diff,   Input,   "EluBackward",                       \
    "alpha: float", "Elu")                                                                        \
  X(selu,        plain,  Floating, Keep,    diff,   Input,   "EluBackward",        "", "Selu")    \
  X(softplus,    custom, Floating, Keep,    diff,   Input,   "SoftplusBackward",                  \
    "beta: float, threshold: float", "Softplus")                                                  \
  X(mish,        custom, Floating, Keep,    diff,   Input,   "MishBackward",       "", "Mish")    \
  X(hardtanh,    custom, Floating, Keep,    diff,   Input,   "HardtanhBackward",                  \
    "min: float, max: float", "Clip")                                                             \
  X(hardswish,   custom, Floating, Keep,    diff,   Input,   "HardswishBackward",  "", "HardSwish")\
  X(hardsigmoid, custom, Floating, Keep,    diff,   Input,   "HardsigmoidBackward","", "HardSigmoid")\
  X(isnan,       plain,  Bool,     Keep,    nodiff, Nothing, "",                   "", "IsNaN")   \
  X(isinf,       plain,  Bool,     Keep,    nodiff, Nothing, "",                   "", "IsInf")   \
  X(isfinite,    plain,  Bool,     Keep,    nodiff, Nothing, "",                   "", "")        \
  X(logical_not, plain,  Bool,     Keep,    nodiff, Nothing, "",                   "", "Not")

// Binary elementwise ops (BinaryKernel). Inputs are broadcast (NumPy rules) and promoted to one
// dtype (PyTorch rules) by the family's one front function, binary_op (core/ops/elementwise.cpp).
// Columns X(name, api, dtype, autocast, check, grad, reads_a, reads_b, backward, export):
//   api       plain: `Tensor name(const Tensor&, const Tensor&)` is generated in C++ and bound
//             in Python (other: Tensor); number: a `(const Tensor&, const Scalar&)` overload is
//             generated too, and the Python binding (which takes numbers, and is an operator's
//             fast path) is written in python/bind_tensor_ops.cpp; custom: only the tensor form
//             is generated (pow's number exponent is the pow_scalar row); internal: nothing is
//             generated (the activations' fused derivatives, called by their backward nodes)
//   check     BinaryCheck (core/op_table.h): the row's own refusal, run before the kernel
//   grad      diff: the backward is `name##_grad` (autograd/functions/binary_grads.cpp)
//   reads_a   what d(a) reads (A, B, Out, their unions, or None); reads_b: what d(b) reads.
//             The node saves only what the gradients it will compute read: mul keeps b for d(a)
//             and a for d(b), so `w * x` with only w requiring grad keeps x alone.
// remainder has the divisor's sign (Python's %), fmod the dividend's (C's fmod); div_floor is
// Python's // (floor_divide, div(rounding_mode='floor')) and div_trunc C's / (rounding_mode=
// 'trunc'); their gradients are zero, as in PyTorch. Integer division by zero raises
// ZeroDivisionError, as in PyTorch (Note [integer division by zero] in core/cpu/binary_kernels.cpp).
// The *_backward rows compute (grad, saved) -> grad_input.
#define WICK_BINARY_OPS(X)                                                                        \
  X(add,         number,   Promote,         Keep,    NoCheck,     diff,   None, None,             \
    "AddBackward", "Add")                                                                         \
  X(sub,         number,   Promote,         Keep,    NotBothBool, diff,   None, None,             \
    "SubBackward", "Sub")                                                                         \
  X(mul,         number,   Promote,         Keep,    NoCheck,     diff,   B,    A,                \
    "MulBackward", "Mul")                                                                         \
  X(div,         number,   PromoteFloating, Keep,    NoCheck,     diff,   B,    AB,               \
    "DivBackward", "Div")                                                                         \
  X(pow,         custom,   Promote,         Float32, IntPower,    diff,   AB,   AOut,             \
    "PowBackward", "Pow")                                                                         \
  X(maximum,     number,   Promote,         Keep,    NoCheck,     diff,   AB,   AB,               \
    "MaximumBackward", "Max")                                                                     \
  X(minimum,     number,   Promote,         Keep,    NoCheck,     diff,   AB,   AB,               \
    "MinimumBackward", "Min")                                                                     \
  X(eq,          number,   Compare,         Keep,    NoCheck,     nodiff, None, None, "", "Equal") \
  X(ne,          number,   Compare,         Keep,    NoCheck,     nodiff, None, None, "", "")     \
  X(lt,          number,   Compare,         Keep,    NoCheck,     nodiff, None, None, "", "Less") \
  X(le,          number,   Compare,         Keep,    NoCheck,     nodiff, None, None,             \
    "", "LessOrEqual")                                                                            \
  X(gt,          number,   Compare,         Keep,    NoCheck,     nodiff, None, None,             \
    "", "Greater")                                                                                \
  X(ge,          number,   Compare,         Keep,    NoCheck,     nodiff, None, None,             \
    "", "GreaterOrEqual")                                                                         \
  X(logical_and, number,   Compare,         Keep,    NoCheck,     nodiff, None, None, "", "And")  \
  X(logical_or,  number,   Compare,         Keep,    NoCheck,     nodiff, None, None, "", "Or")   \
  X(remainder,   number,   Promote,         Keep,    IntDivisor,  diff,   None, AB,               \
    "RemainderBackward", "Mod")                                                                   \
  X(fmod,        number,   Promote,         Keep,    IntDivisor,  diff,   None, AB,               \
    "FmodBackward", "Mod")                                                                        \
  X(div_floor,   number,   Promote,         Keep,    IntDivisor,  diff,   None, None,             \
    "DivBackward", "")                                                                            \
  X(div_trunc,   number,   Promote,         Keep,    IntDivisor,  diff,   None, None,             \
    "DivBackward", "")                                                                            \
  X(atan2,       plain,    PromoteFloating, Float32, NotBool,     diff,   AB,   AB,               \
    "Atan2Backward", "")                                                                          \
  X(hypot,       plain,    PromoteFloating, Keep,    NotBool,     diff,   AOut, BOut,             \
    "HypotBackward", "")                                                                          \
  X(logaddexp,   plain,    PromoteFloating, Float32, NotBool,     diff,   AB,   AB,               \
    "LogaddexpBackward", "")                                                                      \
  X(relu_backward,      internal, Floating, Keep,    NoCheck,     nodiff, None, None, "", "")     \
  X(gelu_backward,      internal, Floating, Keep,    NoCheck,     nodiff, None, None, "", "")     \
  X(gelu_tanh_backward, internal, Floating, Keep,    NoCheck,     nodiff, None, None, "", "")     \
  X(silu_backward,      internal, Floating, Keep,    NoCheck,     nodiff, None, None, "", "")     \
  X(sigmoid_backward,   internal, Floating, Keep,    NoCheck,     nodiff, None, None, "", "")     \
  X(tanh_backward,      internal, Floating, Keep,    NoCheck,     nodiff, None, None, "", "")

// Every other op with a kernel: X(name, kernel, inputs, attrs, dtype, autocast, backward, export)
//   kernel    the kernel signature (core/kernels.h) devices register for it
//   inputs    the tensor arguments, in order; attrs: the typed attributes
//   backward  the autograd node's name, as grad_fn shows it ("" for none: no gradient, or the op
//             is itself a backward); the node reads it from here
#define WICK_KERNEL_OPS(X)                                                                        \
  X(where,        WhereKernel,     "condition, input, other", "",                                 \
    Promote,  Keep, "WhereBackward", "Where")                                                     \
  X(sum,          ReduceKernel,    "input", "dims: int[], keepdim: bool",                         \
    SumLike,  Keep, "SumBackward", "ReduceSum")                                                   \
  X(amax,         ReduceKernel,    "input", "dims: int[], keepdim: bool",                         \
    Same,     Keep, "AmaxBackward", "ReduceMax")                                                  \
  X(amin,         ReduceKernel,    "input", "dims: int[], keepdim: bool",                         \
    Same,     Keep, "AminBackward", "ReduceMin")                                                  \
  X(max_dim,      ArgReduceKernel, "input", "dim: int, keepdim: bool",                            \
    Same,     Keep, "MaxBackward", "")                                                            \
  X(min_dim,      ArgReduceKernel, "input", "dim: int, keepdim: bool",                            \
    Same,     Keep, "MinBackward", "")                                                            \
  X(copy,         CopyKernel,      "src", "dtype: dtype",                                         \
    Any,      Keep, "ToCopyBackward", "Cast")                                                     \
  X(fill,         FillKernel,      "", "value: scalar",                                           \
    Any,      Keep, "", "")                                                                       \
  X(arange,       ArangeKernel,    "", "start: float, step: float",                               \
    Any,      Keep, "", "Range")                                                                  \
  X(uniform,      RandomKernel,    "", "low: float, high: float",                                 \
    Floating, Keep, "", "RandomUniform")                                                          \
  X(normal,       RandomKernel,    "", "mean: float, std: float",                                 \
    Floating, Keep, "", "RandomNormal")                                                           \
  X(bmm,          BmmKernel,       "input, mat2", "",                                             \
    Promote,  LowerPrecision, "BmmBackward", "MatMul")                                            \
  X(index_select, IndexKernel,     "input, index", "dim: int",                                    \
    Same,     Keep, "IndexSelectBackward", "Gather")                                              \
  X(gather,       IndexKernel,     "input, index", "dim: int",                                    \
    Same,     Keep, "GatherBackward", "GatherElements")                                           \
  X(scatter_add,  ScatterAddKernel, "self, index, src", "dim: int",                               \
    Same,     Keep, "ScatterAddBackward", "ScatterElements")                                      \
  X(softmax,      SoftmaxKernel,   "input", "dim: int",                                           \
    Floating, Float32, "SoftmaxBackward", "Softmax")                                              \
  X(log_softmax,  SoftmaxKernel,   "input", "dim: int",                                           \
    Floating, Float32, "LogSoftmaxBackward", "LogSoftmax")                                        \
  X(conv2d,       Conv2dKernel,    "input, weight, bias",                                         \
    "stride: int[2], padding: int[2], dilation: int[2], groups: int",                             \
    Floating, LowerPrecision, "Conv2dBackward", "Conv")                                            \
  X(conv2d_backward, Conv2dBackwardKernel, "grad_output, input, weight",                          \
    "stride: int[2], padding: int[2], dilation: int[2], groups: int",                             \
    Floating, Keep, "", "")                                                                       \
  X(max_pool2d,   MaxPool2dKernel, "input",                                                       \
    "kernel: int[2], stride: int[2], padding: int[2], dilation: int[2], ceil_mode: bool",         \
    Floating, Keep, "MaxPool2dBackward", "MaxPool")                                                \
  X(max_pool2d_backward, MaxPool2dBackwardKernel, "grad_output, indices",                         \
    "kernel: int[2], stride: int[2], padding: int[2], dilation: int[2], ceil_mode: bool",         \
    Floating, Keep, "", "")                                                                       \
  X(avg_pool2d,   AvgPool2dKernel, "input",                                                       \
    "kernel: int[2], stride: int[2], padding: int[2], ceil_mode: bool, count_include_pad: bool",  \
    Floating, Keep, "AvgPool2dBackward", "AveragePool")                                            \
  X(avg_pool2d_backward, AvgPool2dBackwardKernel, "grad_output",                                  \
    "kernel: int[2], stride: int[2], padding: int[2], ceil_mode: bool, count_include_pad: bool",  \
    Floating, Keep, "", "")                                                                       \
  X(adaptive_avg_pool2d, AvgPool2dKernel, "input", "output_size: int[2]",                         \
    Floating, Keep, "AdaptiveAvgPool2dBackward", "GlobalAveragePool")                              \
  X(adaptive_avg_pool2d_backward, AvgPool2dBackwardKernel, "grad_output", "output_size: int[2]",  \
    Floating, Keep, "", "")                                                                       \
  X(batch_norm,   BatchNormKernel,                                                                \
    "input, weight, bias, running_mean, running_var, residual",                                   \
    "training: bool, momentum: float, eps: float, relu: bool",                                    \
    Floating, Float32, "BatchNormBackward", "BatchNormalization")                                  \
  X(batch_norm_backward, BatchNormBackwardKernel,                                                 \
    "grad_output, input, weight, save_mean, save_invstd, bias, residual",                         \
    "training: bool, momentum: float, eps: float, relu: bool",                                    \
    Floating, Keep, "", "")                                                                       \
  X(cumsum,       ScanKernel,      "input", "dim: int",                                           \
    SumLike,  Keep, "CumsumBackward", "CumSum")                                                   \
  X(cumprod,      ScanKernel,      "input", "dim: int",                                           \
    SumLike,  Keep, "CumprodBackward", "")                                                        \
  X(sort,         SortKernel,      "input", "dim: int, descending: bool",                         \
    Same,     Keep, "", "")                                                                       \
  X(adam_step,    AdamStepKernel,  "param, grad, exp_avg, exp_avg_sq, step",                      \
    "lr: float, beta1: float, beta2: float, eps: float, weight_decay: float, "                    \
    "decoupled_weight_decay: bool",                                                               \
    Floating, Keep, "", "")                                                                       \
  X(sgd_step,     SgdStepKernel,   "param, grad, momentum_buffer",                                \
    "lr: float, momentum: float, dampening: float, weight_decay: float, nesterov: bool, "         \
    "first_step: bool",                                                                           \
    Floating, Keep, "", "")                                                                       \
  /* rnn: the fused pointwise step of LSTM and GRU (core/ops/rnn.cpp) */                          \
  X(lstm_cell,    LstmCellKernel,  "igates, hgates, cx", "",                                      \
    Floating, Keep, "LstmCellBackward", "")                                                       \
  X(lstm_cell_backward, LstmCellBackwardKernel, "grad_hy, grad_cy, workspace, cx, cy", "",        \
    Floating, Keep, "", "")                                                                       \
  X(gru_cell,     GruCellKernel,   "igates, hgates, hx", "",                                      \
    Floating, Keep, "GruCellBackward", "")                                                        \
  X(gru_cell_backward, GruCellBackwardKernel, "grad_hy, workspace, hx", "",                       \
    Floating, Keep, "", "")                                                                       \
  /* attention: FlashAttention's blocked softmax (core/cpu/attention_kernels.cpp) */              \
  X(scaled_dot_product_attention, AttentionKernel, "query, key, value, attn_mask",                \
    "scale: float, is_causal: bool",                                                              \
    Floating, LowerPrecision, "ScaledDotProductAttentionBackward", "")                            \
  X(scaled_dot_product_attention_backward, AttentionBackwardKernel,                               \
    "grad_output, query, key, value, attn_mask, output, logsumexp",                               \
    "scale: float, is_causal: bool",                                                              \
    Floating, Keep, "", "")                                                                       \
  /* quantized: int8 inference (Note [int8 GEMM]); export as QDQ around Gemm / Conv          */   \
  X(quantize_per_tensor, QuantizeKernel, "input", "scale: float, zero_point: int",                \
    Any,      Keep, "", "QuantizeLinear")                                                         \
  X(dequantize,   QuantizeKernel,  "input", "scale: float, zero_point: int",                      \
    Floating, Keep, "", "DequantizeLinear")                                                       \
  X(quantized_linear, QuantizedLinearKernel, "input, weight, weight_scale, bias",                 \
    "input_scale: float, input_zero_point: int, output_scale: float, output_zero_point: int, "    \
    "relu: bool",                                                                                 \
    Same,     Keep, "", "Gemm")                                                                   \
  X(quantized_conv2d, QuantizedConv2dKernel, "input, weight, weight_scale, bias",                 \
    "stride: int[2], padding: int[2], dilation: int[2], groups: int, input_scale: float, "        \
    "input_zero_point: int, output_scale: float, output_zero_point: int, relu: bool",             \
    Same,     Keep, "", "Conv")
// clang-format on

// Helpers for expanding a row only when a column has a given value.
#define WICK_IF_plain(...) __VA_ARGS__
#define WICK_IF_custom(...)
#define WICK_IF_diff(...) __VA_ARGS__
#define WICK_IF_nodiff(...)
// Binary rows: which functions a row's api column generates.
#define WICK_IF_TENSOR_plain(...) __VA_ARGS__
#define WICK_IF_TENSOR_number(...) __VA_ARGS__
#define WICK_IF_TENSOR_custom(...) __VA_ARGS__
#define WICK_IF_TENSOR_internal(...)
#define WICK_IF_SCALAR_plain(...)
#define WICK_IF_SCALAR_number(...) __VA_ARGS__
#define WICK_IF_SCALAR_custom(...)
#define WICK_IF_SCALAR_internal(...)
