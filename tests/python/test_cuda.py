"""wick.cuda and wick.backends (torch.cuda and torch.backends names).

On a machine without a GPU (CI) the tests check what a user meets there: is_available() is False,
memory counters read 0 as in torch.cuda, and everything that needs a device raises a RuntimeError
that says why. The tests marked `gpu` run on a GPU machine (tests/gpu/run.sh runs this file there).
"""

import pytest

import wick

gpu = pytest.mark.skipif(not wick.cuda.is_available(), reason="needs a CUDA device")
no_gpu = pytest.mark.skipif(wick.cuda.is_available(), reason="checks the CPU-only behaviour")


@no_gpu
def test_without_a_gpu_the_counters_read_zero_like_torch_cuda():
    assert wick.cuda.device_count() == 0
    assert wick.cuda.memory_allocated() == 0
    assert wick.cuda.max_memory_reserved() == 0
    assert wick.cuda.memory_stats() == {}
    wick.cuda.empty_cache()  # a no-op, as in torch.cuda


@no_gpu
@pytest.mark.parametrize("call", [
    lambda: wick.cuda.current_device(),
    lambda: wick.cuda.synchronize(),
    lambda: wick.cuda.memory_summary(),
    lambda: wick.cuda.Stream(),
    lambda: wick.cuda.Event(),
    lambda: wick.cuda.get_device_properties(0),
    lambda: wick.zeros(3).to("cuda"),
    lambda: wick.zeros(3).cuda(),
    lambda: wick.zeros(3, device="cuda"),
])
def test_without_a_gpu_device_work_raises_a_clear_error(call):
    with pytest.raises(RuntimeError, match=r"\[cuda\]|CUDA"):
        call()


@no_gpu
def test_pinning_needs_a_gpu_but_the_loader_option_does_not():
    x = wick.arange(6.0)
    assert not x.is_pinned()
    with pytest.raises(RuntimeError, match="pin_memory"):
        x.pin_memory()
    data = wick.utils.data.TensorDataset(wick.arange(8.0).reshape(4, 2), wick.arange(4))
    batches = list(wick.utils.data.DataLoader(data, batch_size=2, pin_memory=True))
    assert [b[1].tolist() for b in batches] == [[0, 1], [2, 3]]


def test_device_arguments_are_checked():
    with pytest.raises(ValueError, match=r"\[cuda\] expected a CUDA device; got cpu"):
        wick.cuda.get_device_name("cpu")
    with pytest.raises(ValueError, match=r"fraction must be in \(0, 1\]; got 2"):
        wick.cuda.set_per_process_memory_fraction(2.0)
    with pytest.raises(ValueError, match="fraction"):
        wick.cuda.set_per_process_memory_fraction(0.0)


@pytest.fixture
def restore_math_modes():
    saved = (wick.backends.cuda.matmul.allow_tf32, wick.backends.cudnn.allow_tf32,
             wick.backends.cudnn.benchmark)
    yield
    (wick.backends.cuda.matmul.allow_tf32, wick.backends.cudnn.allow_tf32,
     wick.backends.cudnn.benchmark) = saved


def test_math_mode_defaults_are_pytorchs():
    # torch >= 1.12: TF32 off for cuBLAS matmuls, on for cuDNN convolutions; no autotuning.
    assert wick.backends.cuda.matmul.allow_tf32 is False
    assert wick.backends.cudnn.allow_tf32 is True
    assert wick.backends.cudnn.benchmark is False


def test_math_mode_switches_round_trip(restore_math_modes):
    wick.backends.cuda.matmul.allow_tf32 = True
    wick.backends.cudnn.benchmark = True
    wick.backends.cudnn.allow_tf32 = False
    assert wick.backends.cuda.matmul.allow_tf32 is True
    assert wick.backends.cudnn.benchmark is True
    assert wick.backends.cudnn.allow_tf32 is False


def test_versions_are_reported():
    versions = wick.cuda.versions()
    assert set(versions) == {"runtime", "driver", "cudnn"}
    if wick.backends.cuda.is_built():
        assert versions["runtime"] >= 11000  # CUDA 11 or later, e.g. 13000
    else:
        assert versions["runtime"] == 0
    assert wick.backends.cudnn.is_available() == (wick.backends.cudnn.version() is not None)


@gpu
def test_a_256_float_tensor_adds_1024_allocated_bytes():
    wick.cuda.synchronize()
    before = wick.cuda.memory_allocated()
    x = wick.zeros(256, device="cuda")
    assert wick.cuda.memory_allocated() - before == 1024
    assert wick.cuda.memory_stats()["allocated_bytes.all.current"] == before + 1024
    del x
    assert wick.cuda.memory_allocated() == before
    assert "Allocated memory" in wick.cuda.memory_summary()


@gpu
def test_tensors_round_trip_through_the_device():
    x = wick.randn(5, 7)
    y = x.cuda()
    assert y.device.type == "cuda" and y.is_cuda
    assert (y.cpu() == x).all().item()
    assert ((y * 2).cpu() == x * 2).all().item()


@gpu
def test_user_stream_and_events_time_work():
    stream = wick.cuda.Stream()
    start, end = wick.cuda.Event(enable_timing=True), wick.cuda.Event(enable_timing=True)
    with wick.cuda.stream(stream):
        assert wick.cuda.current_stream() == stream
        start.record()
        x = wick.ones(1 << 20, device="cuda")
        y = (x * 3).sum()
        end.record()
    assert wick.cuda.current_stream() == wick.cuda.default_stream()
    end.synchronize()
    assert end.elapsed_time(start) <= 0 <= start.elapsed_time(end)
    assert y.item() == 3 * (1 << 20)


@gpu
def test_pinned_tensor_and_properties():
    x = wick.arange(16.0).pin_memory()
    assert x.is_pinned()
    assert (x.cuda().cpu() == wick.arange(16.0)).all().item()
    props = wick.cuda.get_device_properties(0)
    assert props.total_memory > 0 and props.major >= 7
    assert wick.cuda.get_device_name("cuda:0") == props.name


def test_cuda_graph_without_a_device_raises_a_clear_error():
    if wick.cuda.is_available():
        pytest.skip("has a CUDA device")
    g = wick.cuda.CUDAGraph()
    assert not g.captured and g.num_nodes == 0
    with pytest.raises(RuntimeError, match="CUDA"):
        with wick.cuda.graph(g):
            pass
