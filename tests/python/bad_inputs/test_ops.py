"""Bad inputs to tensor ops: creation, shapes and views, indexing, elementwise math and dtypes,
reductions, matmul, nn.functional, losses, layer constructors and autograd misuse.

Each row is one distinct mistake with the exception PyTorch 1.13 raises for it (wick's type where
wick's documented rule differs: a bad value is a ValueError and a bad index an IndexError, see
core/error.h), the op the message must name and the values it must quote. Rows marked "crash" or
"silent" used to segfault or return a wrong answer."""

import wick
import wick.nn as nn
import wick.nn.functional as F

from bad_inputs.corpus import Bad, check, parametrize

W = wick
BIG = 2**62


def _undefined():
    return W.Tensor.__new__(W.Tensor)


def _replace_data_then_backward():
    w = W.ones(3, requires_grad=True)
    loss = (w * 2).sum()
    w.data = W.ones(5)
    loss.backward()


def _backward_twice():
    a = W.ones(3, requires_grad=True)
    y = (a * a).sum()
    y.backward()
    y.backward()


def _saved_then_modified():
    a = W.ones(3, requires_grad=True)
    b = a * 2
    y = b * b
    b.add_(1)
    y.sum().backward()


def _setitem(x, key, value):
    x[key] = value


def _shifted(op):
    x = W.arange(4.0)
    return getattr(x[1:], op)(x[:-1])


def _set_grad(shape):
    x = W.ones(3, requires_grad=True)
    x.grad = W.ones(*shape)


CREATION = [
    Bad("zeros_negative", lambda: W.zeros(2, -3), ValueError, "zeros", ["-3"]),
    Bad("empty_overflow", lambda: W.empty(BIG, 4), RuntimeError, "empty", ["overflow"]),  # crash
    Bad("empty_overflow_3d", lambda: W.empty(2**31, 2**31, 4), RuntimeError, "empty",
        ["2147483648"]),
    Bad("full_overflow", lambda: W.full((2**40, 2**40), 1.0), RuntimeError, "full",
        ["1099511627776"]),
    Bad("ones_float_size", lambda: W.ones(2.5), TypeError, "ones", ["float"]),
    Bad("zeros_string_size", lambda: W.zeros("abc"), TypeError, "zeros", ["str"]),
    Bad("arange_step_zero", lambda: W.arange(0, 10, 0), ValueError, "arange", ["nonzero"]),
    Bad("arange_sign", lambda: W.arange(0, 10, -1), ValueError, "arange", ["step=-1"]),
    Bad("arange_inf", lambda: W.arange(0, float("inf")), ValueError, "arange", ["inf"]),
    Bad("arange_nan", lambda: W.arange(0, float("nan")), ValueError, "arange", ["nan"]),
    Bad("arange_1e20", lambda: W.arange(0, 1e20), RuntimeError, "arange",
        ["too many elements", "1e+20"]),
    Bad("arange_2_62", lambda: W.arange(2**62), RuntimeError, "arange", ["overflow"]),  # crash
    Bad("linspace_negative", lambda: W.linspace(0, 1, -2), ValueError, "linspace", ["-2"]),
    Bad("linspace_huge", lambda: W.linspace(0, 1, 2**62), RuntimeError, "linspace",
        ["overflow"]),  # crash
    Bad("eye_negative", lambda: W.eye(-2), ValueError, "eye", ["-2"]),
    Bad("eye_huge", lambda: W.eye(2**31), RuntimeError, "eye", ["2147483648"]),  # crash
    Bad("eye_huge_m", lambda: W.eye(2, 2**62), RuntimeError, "eye", ["overflow"]),
    Bad("tensor_ragged", lambda: W.tensor([[1, 2], [3]]), ValueError, "tensor", ["2", "1"]),
    Bad("randint_low_high", lambda: W.randint(5, 5, (2,)), ValueError, "randint",
        ["low=5", "high=5"]),
    Bad("rand_int_dtype", lambda: W.rand(2, dtype=W.int64), TypeError, "rand", ["int64"]),
    Bad("randn_int_dtype", lambda: W.randn(2, dtype=W.int32), TypeError, "randn", ["int32"]),
    Bad("full_bad_fill", lambda: W.full((2,), "x"), TypeError, "fill_value", ["str"]),
]

VIEWS = [
    Bad("reshape_neg2", lambda: W.ones(3).reshape(-2, 3), ValueError, "reshape", ["-2"]),
    Bad("reshape_numel", lambda: W.ones(6).reshape(4, 2), ValueError, "reshape",
        ["(4, 2)", "6"]),
    Bad("reshape_two_minus_one", lambda: W.ones(6).reshape(-1, -1), ValueError, "reshape",
        ["-1"]),
    Bad("reshape_overflow", lambda: W.ones(3).reshape(BIG, 4), RuntimeError, "reshape",
        ["4611686018427387904"]),  # silent
    Bad("reshape_minus_one_zero", lambda: W.ones(0).reshape(-1, 0), ValueError, "reshape",
        ["(-1, 0)"]),
    Bad("view_noncontiguous", lambda: W.ones(2, 3).t().view(6), ValueError, "view",
        ["(3, 2)"]),
    Bad("view_numel", lambda: W.ones(6).view(5), ValueError, "view", ["(5,)", "6"]),
    Bad("permute_count", lambda: W.ones(2, 3).permute(0), ValueError, "permute", ["2"]),
    Bad("permute_repeat", lambda: W.ones(2, 3).permute(0, 0), ValueError, "permute", ["0"]),
    Bad("transpose_dim", lambda: W.ones(2, 3).transpose(0, 5), IndexError, "transpose", ["5"]),
    Bad("squeeze_dim", lambda: W.ones(2, 3).squeeze(4), IndexError, "squeeze", ["4"]),
    Bad("unsqueeze_dim", lambda: W.ones(2, 3).unsqueeze(5), IndexError, "unsqueeze", ["5"]),
    Bad("expand_fewer", lambda: W.ones(2, 3).expand(3), ValueError, "expand", ["(3,)"]),
    Bad("expand_incompatible", lambda: W.ones(2).expand(3, 3), ValueError, "expand",
        ["(2,)", "(3, 3)"]),
    Bad("expand_overflow", lambda: W.ones(1).expand(BIG, 4), RuntimeError, "expand",
        ["overflow"]),  # silent
    Bad("expand_negative_lead", lambda: W.ones(2).expand(-1, 2), ValueError, "expand", ["-1"]),
    Bad("narrow_length_overflow", lambda: W.ones(3).narrow(0, 1, 2**63 - 1), RuntimeError,
        "narrow", ["9223372036854775807", "(3)"]),  # silent
    Bad("narrow_start", lambda: W.ones(3).narrow(0, 5, 1), IndexError, "narrow", ["5"]),
    Bad("narrow_negative_length", lambda: W.ones(3).narrow(0, 0, -1), RuntimeError, "narrow",
        ["-1"]),
    Bad("narrow_dim", lambda: W.ones(3).narrow(2, 0, 1), IndexError, "narrow", ["2"]),
    Bad("as_strided_huge_stride", lambda: W.ones(3).as_strided((2,), (BIG,)),
        (IndexError, RuntimeError),
        "as_strided", ["4611686018427387904"]),  # silent
    Bad("as_strided_outside", lambda: W.ones(3).as_strided((2,), (3,)), (IndexError,
                                                                          RuntimeError),
        "as_strided", ["(3,)", "3 elements"]),
    Bad("as_strided_offset", lambda: W.ones(3).as_strided((2,), (1,), 2),
        (IndexError, RuntimeError), "as_strided", ["offset 2"]),
    Bad("as_strided_negative", lambda: W.ones(3).as_strided((2,), (-1,)), ValueError,
        "as_strided", ["-1"]),
    Bad("as_strided_lengths", lambda: W.ones(3).as_strided((2, 1), (1,)), ValueError,
        "as_strided", ["(2, 1)"]),
    Bad("flatten_order", lambda: W.ones(2, 3, 4).flatten(2, 1), ValueError, "flatten",
        ["2", "1"]),
    Bad("split_zero", lambda: W.ones(4).split(0), ValueError, "split", ["0"]),
    Bad("chunk_zero", lambda: W.ones(4).chunk(0), ValueError, "chunk", ["0"]),
    Bad("cat_empty", lambda: W.cat([]), ValueError, "cat", ["non-empty"]),
    Bad("cat_zero_dim", lambda: W.cat([W.tensor(1.0), W.tensor(2.0)]), ValueError, "cat",
        ["zero-dimensional"]),
    Bad("cat_sizes", lambda: W.cat([W.ones(2, 3), W.ones(2, 4)]), ValueError, "cat",
        ["(2, 4)", "(2, 3)"]),
    Bad("cat_ndims", lambda: W.cat([W.ones(2, 3), W.ones(3)]), ValueError, "cat", ["1", "2"]),
    Bad("cat_dim", lambda: W.cat([W.ones(2), W.ones(2)], 3), IndexError, "cat", ["3"]),
    Bad("cat_overflow", lambda: W.cat([W.ones(1).expand(BIG), W.ones(1).expand(BIG)]),
        RuntimeError, "cat", ["4611686018427387904"]),  # crash
    Bad("stack_shapes", lambda: W.stack([W.ones(2), W.ones(3)]), ValueError, "stack",
        ["(3,)", "(2,)"]),
    Bad("stack_empty", lambda: W.stack([]), ValueError, "stack", ["non-empty"]),
    Bad("stack_overflow", lambda: W.stack([W.ones(1).expand(2**63 - 1)] * 2), RuntimeError,
        "stack", ["9223372036854775807"]),  # crash
    Bad("contiguous_huge", lambda: W.ones(1, 1).expand(2**31, 2**31).contiguous(),
        RuntimeError, "contiguous", ["2147483648"]),  # crash
    Bad("size_dim", lambda: W.ones(2, 3).size(5), IndexError, "size", ["5"]),
    Bad("stride_dim", lambda: W.ones(2, 3).stride(-4), IndexError, "stride", ["-4"]),
    Bad("broadcast_overflow", lambda: W.ones(1, 1).expand(BIG, 1) + W.ones(1, 1).expand(1, BIG),
        RuntimeError, "add", ["4611686018427387904"]),  # crash
    Bad("repeat_fewer", lambda: W.ones(2, 3).repeat(2), ValueError, "repeat", ["smaller"]),
    Bad("repeat_overflow", lambda: W.ones(4).repeat(BIG), RuntimeError, "repeat",
        ["4611686018427387904"]),
]

INDEXING = [
    Bad("index_int_oob", lambda: W.ones(3)[5], IndexError, "select", ["5", "3"]),
    Bad("index_negative_oob", lambda: W.ones(3)[-5], IndexError, "select", ["-5"]),
    Bad("index_step_zero", lambda: W.ones(3)[::0], ValueError, "index",
        ["slice step cannot be zero", "slice(None, None, 0)"]),
    Bad("index_negative_step", lambda: W.ones(3)[::-1], ValueError, "index",
        ["slice(None, None, -1)"]),
    Bad("index_float", lambda: W.ones(3)[1.5], (IndexError, TypeError), "index", ["float"]),
    Bad("index_too_many", lambda: W.ones(3)[0, 0], IndexError, "index", ["1"]),
    Bad("index_list_oob", lambda: W.ones(3)[[5]], IndexError, "index", ["5"]),
    Bad("index_tensor_float", lambda: W.ones(3)[W.tensor([0.5])], (IndexError, TypeError),
        "index", ["float32"]),
    Bad("index_bool_mask_shape", lambda: W.ones(3)[W.tensor([True, False])], IndexError,
        "index", ["(2,)", "(3,)"]),
    Bad("index_select_minus_one", lambda: W.ones(3).index_select(0, W.tensor([-1])),
        IndexError, "index_select", ["-1"]),
    Bad("index_select_oob", lambda: W.ones(3).index_select(0, W.tensor([3])), IndexError,
        "index_select", ["3"]),
    Bad("index_select_2d", lambda: W.ones(3).index_select(0, W.tensor([[0]])),
        (IndexError, ValueError), "index_select", ["(1, 1)"]),
    Bad("index_select_float", lambda: W.ones(3).index_select(0, W.tensor([0.0])),
        (TypeError, RuntimeError), "index_select", ["float32"]),
    Bad("index_select_dim", lambda: W.ones(3).index_select(1, W.tensor([0])), IndexError,
        "index_select", ["1"]),
    # PyTorch raises RuntimeError for these; wick's rule makes a bad index an IndexError.
    Bad("gather_minus_one", lambda: W.ones(3).gather(0, W.tensor([-1])), IndexError, "gather",
        ["-1"]),
    Bad("gather_oob", lambda: W.ones(3).gather(0, W.tensor([3])), IndexError, "gather", ["3"]),
    Bad("gather_ndim", lambda: W.ones(3, 2).gather(0, W.tensor([0])), (ValueError,
                                                                       RuntimeError),
        "gather", ["1", "2"]),
    Bad("gather_bigger", lambda: W.ones(2, 2).gather(0, W.zeros(2, 3, dtype=W.int64)),
        (ValueError, RuntimeError), "gather", ["(2, 3)"]),
    Bad("scatter_add_minus_one", lambda: W.zeros(3).scatter_add(0, W.tensor([-1]), W.ones(1)),
        IndexError, "scatter_add", ["-1"]),
    Bad("scatter_add_oob", lambda: W.zeros(3).scatter_add(0, W.tensor([7]), W.ones(1)),
        IndexError, "scatter_add", ["7"]),
    Bad("scatter_add_dtype",
        lambda: W.zeros(3).scatter_add(0, W.tensor([0]), W.ones(1, dtype=W.float64)),
        (TypeError, RuntimeError), "scatter_add", ["float64"]),
    Bad("select_zero_dim", lambda: W.tensor(1.0).select(0, 0), IndexError, "select", ["0-d"]),
    Bad("select_oob", lambda: W.ones(3).select(0, 3), IndexError, "select", ["3"]),
    Bad("setitem_oob", lambda: _setitem(W.ones(3), 5, 1.0), IndexError, "select", ["5"]),
    Bad("setitem_shape", lambda: _setitem(W.ones(3), slice(None), W.ones(4)),
        (ValueError, RuntimeError), "setitem", ["(4,)", "(3,)"]),
    Bad("one_hot_negative", lambda: F.one_hot(W.tensor([-1]), 3), (IndexError, RuntimeError),
        "one_hot", ["-1"]),
    Bad("one_hot_too_big", lambda: F.one_hot(W.tensor([3]), 3), (IndexError, RuntimeError),
        "one_hot", ["3"]),
    Bad("one_hot_overflow", lambda: F.one_hot(W.tensor([1]), 2**61), RuntimeError, "one_hot",
        ["2305843009213693952"]),  # crash
    Bad("one_hot_float", lambda: F.one_hot(W.tensor([1.0]), 3), (TypeError, RuntimeError),
        "one_hot", ["float32"]),
    Bad("masked_fill_mask_shape", lambda: W.ones(3).masked_fill(W.ones(2, dtype=W.bool), 0),
        (ValueError, RuntimeError), "masked_fill", ["(2,)", "(3,)"]),
]

ELEMENTWISE = [
    Bad("add_shapes", lambda: W.ones(2, 3) + W.ones(4), (ValueError, RuntimeError), "add",
        ["(2, 3)", "(4,)"]),
    Bad("mul_shapes", lambda: W.ones(2, 3) * W.ones(3, 2), (ValueError, RuntimeError), "mul",
        ["(2, 3)", "(3, 2)"]),
    Bad("eq_shapes", lambda: W.ones(2) == W.ones(3), (ValueError, RuntimeError), "eq",
        ["(2,)", "(3,)"]),
    Bad("maximum_shapes", lambda: W.maximum(W.ones(2), W.ones(3)), (ValueError, RuntimeError),
        "maximum", ["(2,)", "(3,)"]),
    Bad("where_shapes", lambda: W.where(W.ones(2, dtype=W.bool), W.ones(3), W.ones(2)),
        (ValueError, RuntimeError), "where", ["(3,)"]),
    Bad("int_pow_negative", lambda: W.tensor([2]) ** -1, RuntimeError, "pow",
        ["Integers to negative integer powers", "-1"]),  # silent
    Bad("int_pow_method", lambda: W.tensor([2]).pow(-2), RuntimeError, "pow", ["-2"]),
    Bad("int_pow_negative_tensor", lambda: W.tensor([2]) ** W.tensor([-3]), RuntimeError, "pow",
        ["-3"]),  # silent (PyTorch returns 0 here; wick raises, as for a scalar exponent)
    Bad("add_inplace_overlap", lambda: _shifted("add_"), RuntimeError, "add_",
        ["some elements of the input tensor and the written-to tensor"]),  # silent
    Bad("sub_inplace_overlap", lambda: _shifted("sub_"), RuntimeError, "sub_",
        ["refer to a single memory location"]),
    Bad("mul_inplace_overlap", lambda: _shifted("mul_"), RuntimeError, "mul_",
        ["refer to a single memory location"]),
    Bad("copy_overlap_transpose", lambda: (lambda x: x.copy_(x.t()))(W.ones(2, 2)),
        RuntimeError, "copy_", ["single memory location"]),
    Bad("copy_overlap_shift", lambda: _shifted("copy_"), RuntimeError, "copy_",
        ["single memory location"]),
    Bad("add_inplace_no_fit", lambda: W.ones(3).add_(W.ones(2, 3)), (ValueError, RuntimeError),
        "add_", ["(2, 3)", "(3,)"]),
    Bad("add_inplace_expanded", lambda: W.ones(1).expand(3).add_(W.ones(3)),
        (ValueError, RuntimeError), "add_", ["(3,)", "strides (0,)"]),
    Bad("add_inplace_float_into_int", lambda: W.ones(3, dtype=W.int64).add_(W.ones(3)),
        (TypeError, RuntimeError), "add_", ["int64"]),
    Bad("requires_grad_int", lambda: W.ones(3, dtype=W.int64).requires_grad_(),
        (TypeError, RuntimeError), "requires_grad_", ["int64"]),
    Bad("inplace_leaf", lambda: W.ones(3, requires_grad=True).add_(W.ones(3)), RuntimeError,
        "add_",
        ["leaf"]),
    Bad("clamp_none", lambda: W.ones(3).clamp(), (ValueError, RuntimeError), "clamp",
        ["min or max"]),
    Bad("add_string", lambda: W.ones(2) + "a", TypeError, "+", ["str"]),
    Bad("sub_bool", lambda: W.tensor([True]) - W.tensor([False]), (TypeError, RuntimeError),
        "sub", ["bool"]),
]

REDUCTIONS = [
    Bad("sum_dim", lambda: W.ones(2, 3).sum(5), IndexError, "sum", ["5"]),
    Bad("sum_dim_repeat", lambda: W.ones(2, 3).sum((0, 0)), (ValueError, RuntimeError), "sum",
        ["0"]),
    Bad("mean_int", lambda: W.ones(3, dtype=W.int64).mean(), (TypeError, RuntimeError), "mean",
        ["int64"]),
    Bad("max_dim", lambda: W.ones(2, 3).max(5), IndexError, "max", ["5"]),
    Bad("max_empty", lambda: W.ones(0).max(), (IndexError, RuntimeError), "max", ["(0,)"]),
    Bad("min_empty", lambda: W.ones(0).min(), (IndexError, RuntimeError), "min", ["(0,)"]),
    Bad("argmax_dim", lambda: W.ones(2, 3).argmax(3), IndexError, "argmax", ["3"]),
    Bad("argmax_empty", lambda: W.ones(0).argmax(), IndexError, "argmax", ["(0,)"]),
    Bad("var_dim", lambda: W.ones(2, 3).var(7), IndexError, "var", ["7"]),
    Bad("logsumexp_dim", lambda: W.ones(2, 3).logsumexp(4), IndexError, "logsumexp", ["4"]),
    Bad("softmax_dim", lambda: W.ones(2, 3).softmax(2), IndexError, "softmax", ["2"]),
    Bad("log_softmax_dim", lambda: W.ones(2, 3).log_softmax(-3), IndexError, "log_softmax",
        ["-3"]),
    Bad("amax_dim", lambda: W.ones(2, 3).amax(4), IndexError, "amax", ["4"]),
    Bad("all_dim", lambda: W.ones(2, 3).all(4), IndexError, "all", ["4"]),
]

MATMUL = [
    Bad("matmul_inner", lambda: W.ones(2, 3) @ W.ones(4, 5), (ValueError, RuntimeError),
        "matmul", ["(2, 3) @ (4, 5)"]),
    Bad("matmul_zero_dim", lambda: W.tensor(1.0) @ W.ones(2), (ValueError, RuntimeError),
        "matmul", ["()"]),
    Bad("matmul_dtype", lambda: W.ones(2, 3) @ W.ones(3, 2, dtype=W.float64),
        (TypeError, RuntimeError), "matmul", ["float64"]),
    Bad("matmul_batch", lambda: W.ones(2, 2, 3) @ W.ones(3, 3, 2), (ValueError, RuntimeError),
        "matmul", ["(2,)", "(3,)"]),
    Bad("mm_not_2d", lambda: W.mm(W.ones(3), W.ones(3, 2)), (ValueError, RuntimeError), "mm",
        ["(3,)"]),
    Bad("mm_inner", lambda: W.mm(W.ones(2, 3), W.ones(2, 3)), (ValueError, RuntimeError), "mm",
        ["(2, 3) @ (2, 3)"]),
    Bad("bmm_not_3d", lambda: W.bmm(W.ones(2, 3), W.ones(3, 2)), (ValueError, RuntimeError),
        "bmm", ["(2, 3)"]),
    Bad("bmm_batch", lambda: W.bmm(W.ones(2, 2, 3), W.ones(3, 3, 2)), (ValueError, RuntimeError),
        "bmm", ["(2, 2, 3)", "(3, 3, 2)"]),
    Bad("bmm_inner", lambda: W.bmm(W.ones(2, 2, 3), W.ones(2, 4, 2)), (ValueError, RuntimeError),
        "bmm", ["(2, 4, 2)"]),
    Bad("linear_weight_shape", lambda: F.linear(W.ones(2, 3), W.ones(4, 5)),
        (ValueError, RuntimeError), "linear", ["(2, 3)", "(4, 5)"]),
    Bad("linear_bias_shape", lambda: F.linear(W.ones(2, 3), W.ones(4, 3), W.ones(5)),
        (ValueError, RuntimeError), "linear", ["(5,)"]),
]

FUNCTIONAL = [
    Bad("conv2d_weight_dims", lambda: F.conv2d(W.ones(1, 1, 4, 4), W.ones(1, 1, 3)),
        (ValueError, RuntimeError), "conv2d", ["(1, 1, 3)"]),
    Bad("conv2d_channels", lambda: F.conv2d(W.ones(1, 2, 4, 4), W.ones(1, 3, 3, 3)),
        (ValueError, RuntimeError), "conv2d", ["(1, 2, 4, 4)", "(1, 3, 3, 3)"]),
    Bad("conv2d_groups", lambda: F.conv2d(W.ones(1, 3, 4, 4), W.ones(2, 1, 3, 3), groups=2),
        (ValueError, RuntimeError), "conv2d", ["groups=2"]),
    Bad("conv2d_stride_zero", lambda: F.conv2d(W.ones(1, 1, 4, 4), W.ones(1, 1, 3, 3), stride=0),
        (ValueError, RuntimeError), "conv2d", ["stride (0, 0)"]),
    Bad("conv2d_padding_negative",
        lambda: F.conv2d(W.ones(1, 1, 4, 4), W.ones(1, 1, 3, 3), padding=-1),
        (ValueError, RuntimeError), "conv2d", ["padding (-1, -1)"]),
    Bad("conv2d_kernel_too_big", lambda: F.conv2d(W.ones(1, 1, 2, 2), W.ones(1, 1, 3, 3)),
        (ValueError, RuntimeError), "conv2d", ["(2, 2)", "(3, 3)"]),
    Bad("conv2d_input_dims", lambda: F.conv2d(W.ones(4, 4), W.ones(1, 1, 3, 3)),
        (ValueError, RuntimeError), "conv2d", ["(4, 4)"]),
    Bad("conv2d_bias", lambda: F.conv2d(W.ones(1, 1, 4, 4), W.ones(2, 1, 3, 3), W.ones(3)),
        (ValueError, RuntimeError), "conv2d", ["(3,)"]),
    Bad("conv2d_huge_padding",
        lambda: F.conv2d(W.ones(1, 1, 4, 4), W.ones(1, 1, 3, 3), padding=BIG),
        RuntimeError, "conv2d", ["overflow"]),
    Bad("max_pool2d_stride_zero", lambda: F.max_pool2d(W.ones(1, 1, 4, 4), 2, stride=0),
        (ValueError, RuntimeError), "max_pool2d", ["stride should not be zero"]),  # silent
    Bad("avg_pool2d_stride_zero", lambda: F.avg_pool2d(W.ones(1, 1, 4, 4), 2, stride=0),
        (ValueError, RuntimeError), "avg_pool2d", ["stride should not be zero"]),  # silent
    Bad("max_pool2d_kernel_zero", lambda: F.max_pool2d(W.ones(1, 1, 4, 4), 0),
        (ValueError, RuntimeError), "max_pool2d", ["kernel (0, 0)"]),
    Bad("max_pool2d_padding", lambda: F.max_pool2d(W.ones(1, 1, 4, 4), 2, padding=2),
        (ValueError, RuntimeError), "max_pool2d", ["padding 2"]),
    Bad("max_pool2d_huge_kernel", lambda: F.max_pool2d(W.ones(1, 1, 4, 4), BIG, 1),
        (ValueError, RuntimeError), "max_pool2d", ["4611686018427387904"]),  # crash
    Bad("max_pool2d_huge_dilation", lambda: F.max_pool2d(W.ones(1, 1, 4, 4), 3, 1, 0, BIG),
        RuntimeError, "max_pool2d", ["overflow"]),  # crash
    Bad("max_pool2d_too_small", lambda: F.max_pool2d(W.ones(1, 1, 2, 2), 3),
        (ValueError, RuntimeError), "max_pool2d", ["(2, 2)"]),
    Bad("max_pool2d_dims", lambda: F.max_pool2d(W.ones(4, 4), 2), (ValueError, RuntimeError),
        "max_pool2d", ["(4, 4)"]),
    Bad("adaptive_pool_zero", lambda: F.adaptive_avg_pool2d(W.ones(1, 1, 4, 4), -1),
        (ValueError, RuntimeError), "adaptive_avg_pool2d", ["-1"]),
    Bad("adaptive_pool_huge", lambda: F.adaptive_avg_pool2d(W.ones(1, 1, 2, 2), 2**31),
        RuntimeError, "adaptive_avg_pool2d", ["2147483648"]),  # crash
    Bad("adaptive_pool_empty_input", lambda: F.adaptive_avg_pool2d(W.ones(1, 1, 0, 4), 2),
        (ValueError, RuntimeError), "adaptive_avg_pool2d", ["(1, 1, 0, 4)"]),
    Bad("embedding_minus_one", lambda: F.embedding(W.tensor([-1]), W.ones(3, 2)), IndexError,
        "embedding", ["index out of range", "-1"]),  # silent
    Bad("embedding_oob", lambda: F.embedding(W.tensor([3]), W.ones(3, 2)), IndexError,
        "embedding", ["3"]),
    Bad("embedding_float", lambda: F.embedding(W.tensor([0.0]), W.ones(3, 2)),
        (TypeError, RuntimeError), "embedding", ["float32"]),
    Bad("embedding_weight_1d", lambda: F.embedding(W.tensor([0]), W.ones(3)),
        (ValueError, RuntimeError), "embedding", ["(3,)"]),
    Bad("embedding_padding_idx", lambda: F.embedding(W.tensor([0]), W.ones(3, 2), padding_idx=5),
        (AssertionError, ValueError), "embedding", ["5", "(3)"]),  # silent
    Bad("embedding_padding_idx_negative",
        lambda: F.embedding(W.tensor([0]), W.ones(3, 2), padding_idx=-5),
        (AssertionError, ValueError), "embedding", ["-5"]),
    Bad("batch_norm_channels", lambda: F.batch_norm(W.ones(2, 3), W.zeros(4), W.ones(4)),
        (ValueError, RuntimeError), "batch_norm", ["(3,)", "(4,)"]),
    Bad("batch_norm_one_value", lambda: F.batch_norm(W.ones(1, 3), None, None, training=True),
        ValueError, "batch_norm", ["(1, 3)"]),
    Bad("batch_norm_eval_no_stats", lambda: F.batch_norm(W.ones(2, 3), None, None),
        (ValueError, RuntimeError), "batch_norm", ["running_mean"]),
    Bad("dropout_p", lambda: F.dropout(W.ones(3), p=1.5), ValueError, "dropout", ["1.5"]),
    Bad("dropout_p_negative", lambda: F.dropout(W.ones(3), p=-0.1), ValueError, "dropout",
        ["-0.1"]),
    Bad("layer_norm_shape", lambda: F.layer_norm(W.ones(2, 3), (4,)), (ValueError, RuntimeError),
        "layer_norm", ["(2, 3)"]),
]

LOSSES = [
    Bad("ce_prob_target_shape", lambda: F.cross_entropy(W.ones(2, 3), W.ones(2, 4)),
        RuntimeError, "cross_entropy", ["(2, 3)", "(2, 4)"]),  # silent
    Bad("ce_weight_length",
        lambda: F.cross_entropy(W.ones(2, 3), W.tensor([1, 0]), weight=W.ones(2)),
        RuntimeError, "cross_entropy", ["3 classes", "(2,)"]),  # silent
    Bad("ce_weight_2d",
        lambda: F.cross_entropy(W.ones(2, 3), W.tensor([1, 0]), weight=W.ones(3, 1)),
        RuntimeError, "cross_entropy", ["(3, 1)"]),
    Bad("ce_prob_weight_length",
        lambda: F.cross_entropy(W.ones(2, 3), W.ones(2, 3) / 3, weight=W.ones(2)),
        RuntimeError, "cross_entropy", ["(2,)"]),
    Bad("ce_weight_minus_one",
        lambda: F.cross_entropy(W.ones(2, 3), W.tensor([-1, 0]), weight=W.ones(3)),
        IndexError, "cross_entropy", ["Target -1"]),  # silent
    Bad("ce_weight_target_oob",
        lambda: F.cross_entropy(W.ones(2, 3), W.tensor([5, 0]), weight=W.ones(3)),
        IndexError, "cross_entropy", ["Target 5"]),
    Bad("ce_minus_one", lambda: F.cross_entropy(W.ones(2, 3), W.tensor([-1, 0])), IndexError,
        "cross_entropy", ["-1"]),
    Bad("ce_target_oob", lambda: F.cross_entropy(W.ones(2, 3), W.tensor([3, 0])), IndexError,
        "cross_entropy", ["3"]),
    Bad("ce_target_shape", lambda: F.cross_entropy(W.ones(2, 3), W.tensor([1, 0, 1])),
        ValueError, "cross_entropy", ["(3,)"]),
    Bad("ce_label_smoothing",
        lambda: F.cross_entropy(W.ones(2, 3), W.tensor([1, 0]), label_smoothing=2.0),
        (ValueError, RuntimeError), "cross_entropy", ["2"]),
    Bad("ce_reduction", lambda: F.cross_entropy(W.ones(2, 3), W.tensor([1, 0]), reduction="avg"),
        ValueError, "reduction", ["avg"]),
    Bad("ce_bool_target", lambda: F.cross_entropy(W.ones(2, 3), W.tensor([True, False])),
        (TypeError, RuntimeError), "cross_entropy", ["bool"]),
    Bad("nll_batch", lambda: F.nll_loss(W.ones(2, 3), W.tensor([1, 0, 1])), ValueError,
        "nll_loss", ["(3,)"]),
    Bad("nll_weight_length", lambda: F.nll_loss(W.ones(2, 3), W.tensor([1, 0]), weight=W.ones(4)),
        RuntimeError, "nll_loss", ["(4,)"]),
    Bad("nll_float_target", lambda: F.nll_loss(W.ones(2, 3), W.ones(2)), (TypeError,
                                                                          RuntimeError),
        "nll_loss", ["float32"]),
    Bad("nll_target_oob", lambda: F.nll_loss(W.ones(2, 3), W.tensor([1, 9])), IndexError,
        "nll_loss", ["9"]),
    Bad("nll_weight_minus_one",
        lambda: F.nll_loss(W.ones(2, 3), W.tensor([-1, 0]), weight=W.ones(3)), IndexError,
        "nll_loss", ["Target -1"]),
    Bad("nll_weight_target_shape",
        lambda: F.nll_loss(W.ones(2, 3), W.tensor([1, 0, 1]), weight=W.ones(3)), ValueError,
        "nll_loss", ["(3,)"]),
    Bad("mse_shapes", lambda: F.mse_loss(W.ones(2, 3), W.ones(3, 2)), (ValueError, RuntimeError),
        "mse_loss", ["(2, 3)", "(3, 2)"]),
    Bad("mse_reduction", lambda: F.mse_loss(W.ones(2), W.ones(2), reduction="avg"), ValueError,
        "reduction", ["avg"]),
    Bad("l1_shapes", lambda: F.l1_loss(W.ones(2, 3), W.ones(3, 2)), (ValueError, RuntimeError),
        "l1_loss", ["(3, 2)"]),
    Bad("bce_logits_shapes", lambda: F.binary_cross_entropy_with_logits(W.ones(2, 3),
                                                                        W.ones(3, 2)),
        ValueError, "binary_cross_entropy_with_logits", ["(3, 2)"]),
    Bad("bce_logits_weight_reduction",
        lambda: F.binary_cross_entropy_with_logits(W.ones(2), W.ones(2), weight=W.ones(2),
                                                   reduction="avg"),
        ValueError, "binary_cross_entropy_with_logits", ["avg"]),
]

LAYERS = [
    Bad("linear_forward_shape", lambda: nn.Linear(3, 4)(W.ones(2, 5)), (ValueError,
                                                                        RuntimeError),
        "linear", ["(2, 5)"]),
    Bad("conv2d_forward_channels", lambda: nn.Conv2d(3, 4, 3)(W.ones(1, 2, 5, 5)),
        (ValueError, RuntimeError), "conv2d", ["(1, 2, 5, 5)"]),
    Bad("embedding_padding_ctor", lambda: nn.Embedding(3, 2, padding_idx=5),
        (AssertionError, ValueError), "Embedding", ["5", "(3)"]),
    Bad("embedding_forward_oob", lambda: nn.Embedding(3, 2)(W.tensor([3])), IndexError,
        "embedding", ["3"]),
    Bad("embedding_forward_minus_one", lambda: nn.Embedding(3, 2)(W.tensor([-1])), IndexError,
        "embedding", ["-1"]),  # silent
    Bad("maxpool_stride_zero_module", lambda: nn.MaxPool2d(2, stride=0)(W.ones(1, 1, 4, 4)),
        (ValueError, RuntimeError), "max_pool2d", ["stride should not be zero"]),
    Bad("avgpool_stride_zero_module", lambda: nn.AvgPool2d(2, stride=0)(W.ones(1, 1, 4, 4)),
        (ValueError, RuntimeError), "avg_pool2d", ["stride should not be zero"]),
    Bad("batchnorm_forward_channels", lambda: nn.BatchNorm2d(3)(W.ones(2, 4, 2, 2)),
        (ValueError, RuntimeError), "batch_norm", ["(3,)"]),
    Bad("dropout_ctor_p", lambda: nn.Dropout(1.5), ValueError, "dropout", ["1.5"]),
    Bad("layernorm_forward_shape", lambda: nn.LayerNorm(4)(W.ones(2, 3)),
        (ValueError, RuntimeError), "layer_norm", ["(2, 3)"]),
    Bad("sequential_not_module", lambda: nn.Sequential(1), TypeError, "Module", ["int"]),
]

AUTOGRAD = [
    Bad("backward_non_scalar", lambda: W.ones(3, requires_grad=True).mul(2).backward(),
        RuntimeError, "backward", ["(3,)"]),
    Bad("backward_twice", _backward_twice, RuntimeError, "backward", ["second time"]),
    Bad("backward_no_grad", lambda: W.ones(3).sum().backward(), RuntimeError, "backward",
        ["does not require grad"]),
    Bad("backward_gradient_shape",
        lambda: (W.ones(3, requires_grad=True) * 2).backward(W.ones(4)),
        (ValueError, RuntimeError), "backward", ["(4,)", "(3,)"]),
    Bad("backward_data_replaced", _replace_data_then_backward, RuntimeError, "backward",
        ["invalid gradient at index 0", "(3,)", "(5,)"]),  # crash
    Bad("saved_then_modified", _saved_then_modified, RuntimeError, "backward",
        ["modified by an in-place operation"]),
    Bad("grad_not_requiring",
        lambda: W.autograd.grad(W.ones(3, requires_grad=True).sum(), [W.ones(3)]),
        (ValueError, RuntimeError), "grad", ["does not require grad"]),
    Bad("grad_unused",
        lambda: (lambda a, b: W.autograd.grad((a * 2).sum(), [a, b]))(
            W.ones(2, requires_grad=True), W.ones(2, requires_grad=True)),
        (ValueError, RuntimeError), "grad", ["allow_unused"]),
    Bad("requires_grad_non_leaf",
        lambda: (W.ones(3, requires_grad=True) * 2).requires_grad_(False), RuntimeError,
        "requires_grad_", ["leaf"]),
    Bad("retain_grad_no_grad", lambda: W.ones(3).retain_grad(), RuntimeError, "retain_grad",
        ["does not require grad"]),
    Bad("grad_wrong_shape_assign", lambda: _set_grad((4,)), (ValueError, RuntimeError), "grad",
        ["(4,)", "(3,)"]),
    Bad("undefined_add", lambda: _undefined() + 1, RuntimeError, "Tensor",
        ["Tensor.__new__"]),  # crash
    Bad("undefined_shape", lambda: _undefined().shape, RuntimeError, "Tensor",
        ["Tensor.__new__"]),
    Bad("undefined_dim", lambda: _undefined().dim(), RuntimeError, "Tensor", ["Tensor.__new__"]),
    Bad("undefined_sum", lambda: _undefined().sum(), RuntimeError, "Tensor", ["Tensor.__new__"]),
    Bad("undefined_backward", lambda: _undefined().backward(), RuntimeError, "Tensor",
        ["Tensor.__new__"]),
    Bad("undefined_as_argument", lambda: W.ones(2) + _undefined(), RuntimeError, "Tensor",
        ["Tensor.__new__"]),
    Bad("undefined_repr", lambda: repr(_undefined()), RuntimeError, "Tensor",
        ["Tensor.__new__"]),
    Bad("undefined_getitem", lambda: _undefined()[0], RuntimeError, "Tensor",
        ["Tensor.__new__"]),
    Bad("undefined_in_cat", lambda: W.cat([W.ones(2), _undefined()]), RuntimeError, "Tensor",
        ["Tensor.__new__"]),
]

# Layer constructors: the layer and the argument are named (python/wick/nn/modules/_args.py).
CONSTRUCTORS = [
    Bad("linear_negative_in", lambda: nn.Linear(-1, 4), ValueError, "Linear", ["in_features", "-1"]),
    Bad("linear_float_out", lambda: nn.Linear(3, 2.5), TypeError, "Linear", ["out_features", "2.5"]),
    Bad("conv_str_channels", lambda: nn.Conv2d(1, "c", 3), TypeError, "Conv2d", ["out_channels", "'c'"]),
    Bad("conv_zero_kernel", lambda: nn.Conv2d(1, 2, 0), ValueError, "Conv2d", ["kernel_size", "0"]),
    Bad("conv_negative_padding", lambda: nn.Conv2d(1, 2, 3, padding=-1), ValueError, "Conv2d",
        ["padding", "-1"]),
    Bad("conv_zero_groups", lambda: nn.Conv2d(2, 2, 3, groups=0), ValueError, "Conv2d", ["groups", "0"]),
    Bad("embedding_negative", lambda: nn.Embedding(-3, 2), ValueError, "Embedding",
        ["num_embeddings", "-3"]),
    Bad("batchnorm_negative", lambda: nn.BatchNorm2d(-2), ValueError, "BatchNorm2d",
        ["num_features", "-2"]),
    Bad("dropout_str_p", lambda: nn.Dropout("p"), TypeError, "Dropout", ["'p'"]),
    Bad("module_to_float", lambda: nn.Linear(2, 2).to(3.5), TypeError, "Module.to", ["3.5"]),
    Bad("cross_entropy_str_target", lambda: F.cross_entropy(W.ones(2, 3), "y"), TypeError,
        "cross_entropy", ["target", "'y'"]),
    Bad("bce_int_target", lambda: F.binary_cross_entropy_with_logits(W.ones(2), 3), TypeError,
        "binary_cross_entropy_with_logits", ["target", "int"]),
]

CASES = CREATION + VIEWS + INDEXING + ELEMENTWISE + REDUCTIONS + MATMUL + FUNCTIONAL + LOSSES + \
    LAYERS + AUTOGRAD + CONSTRUCTORS


@parametrize(CASES)
def test_bad_input(case):
    check(case)
