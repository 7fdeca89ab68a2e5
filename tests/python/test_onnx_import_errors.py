"""wick.onnx.load on bad input: corrupt, invalid and unsupported files raise ValueError /
NotImplementedError / IndexError naming the node, and a corrupt value asking for a huge result is
refused before anything is allocated. Three hypothesis fuzzers hold what runs to ONNX Runtime:
one mutates a valid file's bytes, one draws attributes and input shapes, one does that for the
pools' pads and ceil_mode. The coverage-guided fuzzer of the importer is
tests/fuzz/fuzz_onnx_import.py (atheris; tests/fuzz/run.sh)."""

import io
import re

import numpy as np
import pytest

import wick

onnx = pytest.importorskip("onnx",
                           reason="onnx is not installed (scripts/setup.sh puts it in .venv)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import wick.onnx  # noqa: E402
from onnx_graphs import make_model, needs_ort, onnxruntime, ort_run, tensor_info  # noqa: E402


# ---- bad input ----

@pytest.fixture(scope="module")
def small_model():
    """Conv -> Relu -> Flatten -> Gemm: the valid model the bad-input tests and the fuzzer
    start from."""
    rng = np.random.default_rng(6)
    inits = [numpy_helper.from_array(rng.standard_normal((2, 1, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(2).astype(np.float32), "b"),
             numpy_helper.from_array(rng.standard_normal((3, 32)).astype(np.float32), "fw")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f"]),
             helper.make_node("Gemm", ["f", "fw"], ["y"], transB=1)]
    return make_model(nodes, [tensor_info("x", ["n", 1, 8, 8])], [tensor_info("y", ["n", 3])],
                      inits)


def test_small_model_loads_from_path_bytes_and_file(small_model, tmp_path):
    path = tmp_path / "small.onnx"
    onnx.save(small_model, str(path))
    x = np.random.default_rng(7).standard_normal((2, 1, 8, 8)).astype(np.float32)
    outs = [wick.onnx.load(f)(x).numpy() for f in
            (str(path), path, path.read_bytes(), io.BytesIO(path.read_bytes()), small_model)]
    for out in outs[1:]:
        np.testing.assert_array_equal(out, outs[0])
    if onnxruntime is not None:
        np.testing.assert_allclose(outs[0], ort_run(small_model, x)[0], rtol=1e-5, atol=1e-6)


@needs_ort
def test_external_data_loads_from_a_path_only(small_model, tmp_path):
    model = onnx.ModelProto()
    model.CopyFrom(small_model)  # save_model moves the tensors out of the proto it is given
    path = tmp_path / "m.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, location="m.data",
                    size_threshold=0)
    assert (tmp_path / "m.data").exists()
    x = np.random.default_rng(7).standard_normal((2, 1, 8, 8)).astype(np.float32)
    expected = ort_run(str(path), x)[0]
    for f in (str(path), path):
        np.testing.assert_allclose(wick.onnx.load(f)(x).numpy(), expected, rtol=1e-5, atol=1e-6)
    # Without the file's folder there is nowhere to read the data from.
    for f in (path.read_bytes(), io.BytesIO(path.read_bytes()),
              onnx.load(str(path), load_external_data=False)):
        with pytest.raises(NotImplementedError, match=r"\(m.data\); external data needs a path"):
            wick.onnx.load(f)
    (tmp_path / "m.data").unlink()
    with pytest.raises(ValueError, match="m.onnx"):
        wick.onnx.load(path)


def test_truncated_and_random_files_raise_value_error(small_model, tmp_path):
    data = small_model.SerializeToString()
    path = tmp_path / "truncated.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="truncated.onnx"):
        wick.onnx.load(str(path))
    noise = np.random.default_rng(8).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    with pytest.raises(ValueError, match="wick.onnx.load"):
        wick.onnx.load(noise)
    with pytest.raises(FileNotFoundError):
        wick.onnx.load(str(tmp_path / "missing.onnx"))
    with pytest.raises(TypeError, match="expected a path"):
        wick.onnx.load(42)


def test_unsupported_op_raises_at_load_naming_op_and_node():
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Hardmax", ["r"], ["y"], name="the_hardmax")]
    model = make_model(nodes, [tensor_info("x", [2, 3])], [tensor_info("y", [2, 3])])
    with pytest.raises(NotImplementedError,
                       match=r"op 'Hardmax' \(node 'the_hardmax'\) is not supported; supported: "
                             r".*Conv"):
        wick.onnx.load(model)


def test_subgraphs_are_refused_and_their_external_data_named():
    """An If node's branches are searched for external data (the search's merge of a subgraph's
    files raised TypeError) and the op is refused by name."""
    def branch(name, external=False):
        t = numpy_helper.from_array(np.ones(2, np.float32), f"{name}_w")
        if external:
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            t.external_data.add(key="location", value="branch.bin")
        return helper.make_graph([helper.make_node("Identity", [f"{name}_w"], [f"{name}_o"])],
                                 name, [], [tensor_info(f"{name}_o", [2])], [t])
    for external in (True, False):
        node = helper.make_node("If", ["c"], ["y"], name="cond",
                                then_branch=branch("then", external), else_branch=branch("else"))
        model = make_model([node], [tensor_info("c", [], TensorProto.BOOL)],
                           [tensor_info("y", [2])])
        match = (r"keeps tensors in external data \(branch.bin\)" if external else
                 r"op 'If' \(node 'cond'\) is not supported")
        with pytest.raises(NotImplementedError, match=match):
            wick.onnx.load(model.SerializeToString())


def test_model_failing_the_checker_raises_value_error():
    # Relu reads a name that nothing defines: the checker's topological-order rule.
    nodes = [helper.make_node("Relu", ["nowhere"], ["y"])]
    model = make_model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2])])
    with pytest.raises(ValueError, match="not a valid ONNX model.*nowhere") as info:
        wick.onnx.load(model)
    # The checker quotes the node over several lines; the error is one (the fuzzer's first find).
    assert "\n" not in str(info.value)
    assert "of node: name: OpType: Relu is not output" in str(info.value)


def test_unsupported_opset_and_attributes_raise_at_load():
    relu = [helper.make_node("Relu", ["x"], ["y"])]
    io_ = ([tensor_info("x", [2])], [tensor_info("y", [2])])
    with pytest.raises(NotImplementedError, match="opset 7"):
        wick.onnx.load(make_model(relu, *io_, opset=7))
    bn = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                          training_mode=1, name="bn1")
    inits = [numpy_helper.from_array(np.ones(2, np.float32), n) for n in "sbmv"]
    model = make_model([bn], [tensor_info("x", [1, 2, 3])], [tensor_info("y", [1, 2, 3])], inits)
    with pytest.raises(ValueError, match="node 'bn1'.*training_mode"):
        wick.onnx.load(model)


def test_huge_pads_are_refused_before_anything_is_allocated():
    # (2e9 + 4)^2 elements: the byte count would overflow int64 inside an allocation.
    pads = numpy_helper.from_array(np.array([0, 0, 10**9, 10**9] * 2, np.int64), "p")
    model = make_model([helper.make_node("Pad", ["x", "p"], ["y"], name="big")],
                       [tensor_info("x", [1, 1, 4, 4])], [tensor_info("y", list("nchw"))], [pads])
    with pytest.raises(ValueError, match=r"node 'big' \(Pad\): the result would have shape "
                                         r"\[1, 1, 2000000004, 2000000004\]"):
        wick.onnx.load(model)(np.ones((1, 1, 4, 4), np.float32))


def _peak_rss_kib():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def test_sizes_computed_from_values_are_bounded_before_allocating():
    """A corrupt constant that asks for a huge result is a ValueError naming the node, the shape
    and the bound, raised at once; the bound is min(2**32, physical memory / itemsize / 4)."""
    import os
    import time
    from wick.onnx import _onnx_ops
    bound = _onnx_ops.element_bound(4)
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert bound == min(2**32, memory // 4 // 4)
    x = np.ones((1, 1, 1, 1), np.float32)
    # 10**11 elements, and just over the bound (below 2**32 on a machine under 64 GiB).
    for rows, cols in ((10**11 // 65536, 65536), (bound // 65536 + 1, 65536)):
        pads = np.array([0, 0, 0, 0, 0, 0, rows - 1, cols - 1], np.int64)
        nodes = [helper.make_node("Constant", [], ["p"], value=numpy_helper.from_array(pads)),
                 helper.make_node("Pad", ["x", "p"], ["y"], name="corrupt")]
        model = make_model(nodes, [tensor_info("x", [1, 1, 1, 1])],
                           [tensor_info("y", list("nchw"))])
        for compile in (True, False):
            before, start = _peak_rss_kib(), time.monotonic()
            with pytest.raises(ValueError, match=rf"node 'corrupt' \(Pad\): the result would have "
                                                 rf"shape \[1, 1, {rows}, {cols}\].*bound of "
                                                 rf"{bound} elements"):
                wick.onnx.load(model, compile=compile)(x)
            assert time.monotonic() - start < 10
            assert _peak_rss_kib() - before < 1 << 20  # under 1 GiB more at its peak
    # Broadcasting two 400 kB constants asks for 10**10 elements.
    inits = [numpy_helper.from_array(np.ones((100000, 1), np.float32), "a"),
             numpy_helper.from_array(np.ones((1, 100000), np.float32), "b")]
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], name="outer"),
             helper.make_node("Add", ["x", "s"], ["y"])]
    model = make_model(nodes, [tensor_info("x", [1, 1])], [tensor_info("y", ["a", "b"])], inits)
    with pytest.raises(ValueError, match=r"node 'outer' \(Add\).*\[100000, 100000\]"):
        wick.onnx.load(model)(np.ones((1, 1), np.float32))


def test_out_of_memory_is_wicks_out_of_memory_error_from_a_node_or_the_replay(small_model,
                                                                               monkeypatch):
    """Memory running out is wick.OutOfMemoryError (a RuntimeError) wherever it happens: in a
    node's wick op or NumPy fold (named by the node) or in the compiled replay."""
    from wick.onnx import _import
    x = np.zeros((2, 1, 8, 8), np.float32)
    loaded = wick.onnx.load(small_model)
    loaded(x)  # traced: later calls replay

    def replay_without_memory(*args):
        raise wick.OutOfMemoryError("[cpu allocator] out of memory: tried to allocate 8 GiB")
    monkeypatch.setattr(loaded, "_compiled", replay_without_memory)
    with pytest.raises(wick.OutOfMemoryError, match=r"ran out of memory running its compiled "
                                                    r"graph on inputs \[\[2, 1, 8, 8\]\]"):
        loaded(x)

    def relu_without_memory(node, ins):
        raise MemoryError("Unable to allocate 8 GiB")
    monkeypatch.setitem(_import.OPS, "Relu", relu_without_memory)
    for compile in (True, False):
        with pytest.raises(wick.OutOfMemoryError, match=r"node 'Relu_1' \(Relu\).*MemoryError"):
            wick.onnx.load(small_model, compile=compile)(x)


def test_gather_index_out_of_range_raises_index_error():
    data = np.arange(20, dtype=np.float32).reshape(5, 4)
    nodes = [helper.make_node("Gather", ["x", "idx"], ["y"], name="g")]
    model = make_model(nodes, [tensor_info("x", [5, 4]), tensor_info("idx", [1, 3],
                                                                      TensorProto.INT64)],
                       [tensor_info("y", [1, 3, 4])])
    for compile in (True, False):
        loaded = wick.onnx.load(model, compile=compile)
        for bad in ([[0, 1, 5]], [[0, -6, 1]]):
            with pytest.raises(IndexError, match="node 'g' \\(Gather\\)"):
                loaded(data, np.array(bad, np.int64))
        got = loaded(data, np.array([[4, -5, -1]], np.int64)).numpy()
        np.testing.assert_array_equal(got, data[[[4, 0, 4]]])
        with pytest.raises(IndexError):  # compiled: the replay's kernel refuses it
            loaded(data, np.array([[0, 1, 5]], np.int64))
    # Static indices are checked in NumPy, with the same type.
    idx = numpy_helper.from_array(np.array([1, 7], np.int64), "idx")
    model = make_model(nodes, [tensor_info("x", [5, 4])], [tensor_info("y", [2, 4])], [idx])
    with pytest.raises(IndexError, match=r"node 'g' \(Gather\): indices from 1 to 7"):
        wick.onnx.load(model)(data)


@pytest.mark.parametrize("op, attr, value", [("MaxPool", "ceil_mode", -3),
                                             ("AveragePool", "ceil_mode", 100),
                                             ("AveragePool", "count_include_pad", 2),
                                             ("Gemm", "transB", 5)])
def test_flags_outside_0_and_1_are_refused_at_load(op, attr, value):
    if op == "Gemm":
        node = helper.make_node("Gemm", ["x", "x"], ["y"], name="flag", **{attr: value})
        io_ = [tensor_info("x", [2, 2])], [tensor_info("y", [2, 2])]
    else:
        node = helper.make_node(op, ["x"], ["y"], name="flag", kernel_shape=[2, 2],
                                **{attr: value})
        io_ = [tensor_info("x", [1, 1, 4, 4])], [tensor_info("y", list("nchw"))]
    with pytest.raises(ValueError, match=rf"node 'flag' \({op}\): attribute {attr}={value} .*"
                                         "ONNX defines 0 or 1"):
        wick.onnx.load(make_model([node], *io_))


def test_average_pool_wide_pads_without_count_include_pad_are_refused_at_load():
    for pads in ([2, 1, 2, 1], [1, 0, 0, 1]):  # wider than half the kernel; unequal
        node = helper.make_node("AveragePool", ["x"], ["y"], name="avg", kernel_shape=[3, 3],
                                pads=pads, count_include_pad=0)
        model = make_model([node], [tensor_info("x", [1, 1, 6, 6])],
                           [tensor_info("y", list("nchw"))])
        with pytest.raises(NotImplementedError, match=r"node 'avg' \(AveragePool\): pads "
                                                      + re.escape(str(pads))
                                                      + " with count_include_pad=0"):
            wick.onnx.load(model)


def test_wrong_inputs_at_call_time(small_model):
    loaded = wick.onnx.load(small_model)
    with pytest.raises(ValueError, match=r"input 'x' has shape \[2, 1, 9, 8\]; the model expects "
                                         r"\[n, 1, 8, 8\]"):
        loaded(np.zeros((2, 1, 9, 8), np.float32))
    with pytest.raises(TypeError, match="input 'x' must be wick.float32; got wick.float64"):
        loaded(np.zeros((2, 1, 8, 8)))
    with pytest.raises(TypeError, match=r"takes 1 input\(s\) \['x'\]; got 2"):
        loaded(np.zeros((2, 1, 8, 8), np.float32), np.zeros(1, np.float32))
    with pytest.raises(TypeError, match="must be a wick Tensor or a NumPy array"):
        loaded([1.0, 2.0])


def test_data_dependent_shape_is_refused_with_the_node_name():
    # Reshape's target computed from the input's values cannot be frozen by a trace.
    nodes = [helper.make_node("Cast", ["s"], ["si"], to=TensorProto.INT64),
             helper.make_node("Reshape", ["x", "si"], ["y"], name="dyn")]
    model = make_model(nodes, [tensor_info("x", [2, 3]), tensor_info("s", [2])],
                       [tensor_info("y", ["a", "b"])])
    with pytest.raises(ValueError, match="node 'dyn'.*'shape' must be a constant"):
        wick.onnx.load(model, compile=False)(np.zeros((2, 3), np.float32),
                                             np.array([3, 2], np.float32))


# ---- fuzzing the loader ----

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

_EDITS = st.lists(st.tuples(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]),
                            st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1, max_size=4)


def _mutate(data, edits):
    data = bytearray(data)
    for kind, where, byte in edits:
        i = where % max(len(data), 1)
        if kind == "flip" and data:
            data[i] ^= 1 << (byte % 8)
        elif kind == "set" and data:
            data[i] = byte
        elif kind == "insert":
            data[i:i] = bytes([byte])
        elif kind == "delete" and data:
            del data[i]
        elif kind == "truncate":
            del data[i:]
    return bytes(data)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(edits=_EDITS, compile=st.booleans())
def test_fuzz_mutated_model_loads_or_raises_a_clear_error(small_model, edits, compile):
    data = _mutate(small_model.SerializeToString(), edits)
    x = np.random.default_rng(9).standard_normal((2, 1, 8, 8)).astype(np.float32)
    try:
        loaded = wick.onnx.load(data, compile=compile)
        loaded(*[x] * len(loaded.input_names))
    except (ValueError, NotImplementedError, TypeError, IndexError, wick.OutOfMemoryError) as e:
        assert str(e)  # every error says something


_ANY_INTS = st.lists(st.integers(-1, 4), max_size=5)  # shapes, pads, strides, ... of any length


def _mostly(valid):
    """Mostly valid values, so that most examples run, and sometimes anything."""
    return st.one_of(valid, valid, valid, _ANY_INTS)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(pads=_mostly(st.lists(st.integers(0, 3), min_size=4, max_size=4)),
       strides=_mostly(st.lists(st.integers(1, 3), min_size=2, max_size=2)),
       dilations=_mostly(st.lists(st.integers(1, 2), min_size=2, max_size=2)),
       group=st.sampled_from([1, 1, 1, 0, 2]),
       pool=_mostly(st.lists(st.integers(1, 3), min_size=2, max_size=2)),
       auto_pad=st.sampled_from(["NOTSET", "VALID", "SAME_LOWER", "SAME_UPPER", "BAD"]),
       axis=st.integers(-5, 5), trans_b=st.integers(0, 1),
       shape=_mostly(st.tuples(st.integers(1, 3), st.just(1), st.integers(3, 12),
                               st.integers(3, 12)).map(list)), compile=st.booleans())
def test_fuzz_attributes_and_shapes_raise_only_clear_errors(pads, strides, dilations, group, pool,
                                                            auto_pad, axis, trans_b, shape,
                                                            compile):
    """The translations' own checks: any attribute values and input shape load and run, or raise
    ValueError / NotImplementedError / TypeError; never another exception or a crash."""
    rng = np.random.default_rng(10)
    conv = {"pads": pads, "strides": strides, "dilations": dilations, "group": group,
            "auto_pad": auto_pad}
    conv = {k: v for k, v in conv.items() if v != [] and not (k == "auto_pad" and pads)}
    inits = [numpy_helper.from_array(rng.standard_normal((2, 1, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(np.ones((3, 1) if trans_b else (1, 3), np.float32), "fw")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], **conv),
             helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=pool or [1, 1]),
             helper.make_node("Flatten", ["m"], ["f"], axis=axis),
             helper.make_node("ReduceMean", ["f"], ["r"], axes=[1]),
             helper.make_node("Gemm", ["r", "fw"], ["y"], transB=trans_b)]
    model = make_model(nodes, [tensor_info("x", list("nchw"))], [tensor_info("y", ["a", "b"])],
                       inits)
    try:
        x = rng.standard_normal([max(d, 0) for d in shape]).astype(np.float32)
        got = wick.onnx.load(model, compile=compile)(x).numpy()
    except (ValueError, NotImplementedError, TypeError) as e:
        assert str(e)
        return
    if onnxruntime is None:
        return
    try:  # ONNX Runtime refuses some models the standard allows (dilated SAME_* convolutions)
        expected = ort_run(model, x)[0]
    except Exception:
        return
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)  # what wick runs is right


@needs_ort
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(op=st.sampled_from(["MaxPool", "AveragePool"]), data=st.data(),
       kernel=st.lists(st.integers(1, 4), min_size=2, max_size=2),
       strides=st.lists(st.integers(1, 3), min_size=2, max_size=2), ceil=st.integers(0, 1),
       include=st.integers(0, 1), size=st.lists(st.integers(1, 9), min_size=2, max_size=2),
       compile=st.booleans())
def test_fuzz_pool_pads_and_ceil_mode_match_onnxruntime(op, data, kernel, strides, ceil, include,
                                                        size, compile):
    """Pools with any pads ONNX Runtime takes (up to kernel - 1: wider than wick's layers allow
    and unequal) and ceil_mode: wick gives ONNX Runtime's result or refuses the model."""
    pads = [data.draw(st.integers(0, k - 1)) for k in kernel * 2]
    attrs = {"kernel_shape": kernel, "strides": strides, "pads": pads, "ceil_mode": ceil}
    if op == "AveragePool":
        attrs["count_include_pad"] = include
    model = make_model([helper.make_node(op, ["x"], ["y"], **attrs)],
                       [tensor_info("x", [1, 2] + size)], [tensor_info("y", list("nchw"))])
    x = np.random.default_rng(11).standard_normal([1, 2] + size).astype(np.float32)
    try:
        got = wick.onnx.load(model, compile=compile)(x).numpy()
    except (ValueError, NotImplementedError) as e:
        assert str(e)
        return
    try:
        expected = ort_run(model, x)[0]
    except Exception:
        return
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
