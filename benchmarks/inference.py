"""Inference, every way wick can run a model against PyTorch and ONNX Runtime, side by side in one
run: the MNIST CNN, ResNet-20 (3x32x32) and ResNet-18 (3x224x224) at batch 1 (latency, ms) and
batch 64 (throughput, samples/s), with accuracy and file size.

    WICK_BUILD_DIR=build .venv/bin/python benchmarks/inference.py [--threads 2] [--quick]
                                                                   [--svg docs/inference.svg]

Runtimes, each on the same weights:
  wick eager fp32      the model called from Python, op by op
  wick compiled fp32   wick.compile(model, freeze=True): conv+BN folded, elementwise fused, replayed
  wick bf16            eager under wick.autocast("cpu", dtype=wick.bfloat16)
  wick int8            wick.quantization on the model's quantizable twin (wick.models.quantization):
                       fuse, prepare, calibrate on training digits, convert (u8 x s8 kernels)
  PyTorch 1.13 fp32    Debian's PyTorch (OpenBLAS told this processor's kernel, printed), eager
  ORT fp32 / ORT int8  ONNX Runtime on the files wick.onnx.export wrote (int8: QDQ form)
Batch-1 and batch-64 times are medians over rounds that give every runtime a block of calls
(this VM's speed drifts; interleaving spreads a slow spell over all rows). The CNN is trained first (one
epoch on the committed digits, seeded) so that accuracy means something; the ResNets have random weights, so their "accuracy" column is the largest difference
from wick's fp32 logits instead. A runtime that cannot run a model says why in its row."""

import argparse
import os
import statistics
import tempfile
import time

import bench_common

bench_common.use_openblas_kernel()  # before numpy and torch load OpenBLAS

import numpy as np  # noqa: E402

import wick  # noqa: E402
import wick.onnx  # noqa: E402, F401
import wick.nn.functional as F  # noqa: E402
from bench_common import openblas_corename  # noqa: E402

import wick.models  # noqa: E402
from wick.models import QuantizableMNISTNet  # noqa: E402

DIGITS = os.path.join(bench_common.ROOT, "assets", "mnist")
QUANTIZABLE = {"cnn": QuantizableMNISTNet, "resnet20": wick.models.quantization.resnet20,
               "resnet18": wick.models.quantization.resnet18}
INPUT = {"cnn": (1, 28, 28), "resnet20": (3, 32, 32), "resnet18": (3, 224, 224)}


def mnist(train):
    """The committed digits as (images [N, 1, 28, 28] in [0, 1], labels)."""
    ds = wick.datasets.MNIST(DIGITS, train=train)
    return ds.data.float().div(255.0).unsqueeze(1), ds.targets


def train_cnn(seconds_note):
    """One epoch of Adam on the committed training digits: enough for ~97% on the test digits.
    The network is train_mnist.py's CNN with its relus and pool as modules (the same parameters),
    so that the same weights also run in int8."""
    wick.manual_seed(0)
    model = QuantizableMNISTNet()
    x, y = mnist(train=True)
    opt = wick.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    batch = 64
    for start in range(0, x.shape[0], batch):
        opt.zero_grad()
        loss = F.cross_entropy(model(x[start:start + batch]), y[start:start + batch])
        loss.backward()
        opt.step()
        if (start // batch) % 20 == 0:
            print(f"\r  training the CNN: {start + batch}/{x.shape[0]} digits, loss "
                  f"{loss.item():.3f}", end="", flush=True)
    print(f"\r  training the CNN: one epoch over {x.shape[0]} digits, last loss "
          f"{loss.item():.3f}{seconds_note}")
    return model.eval()


def build(name):
    wick.manual_seed(0)
    if name == "cnn":
        return train_cnn("")
    return getattr(wick.models, name)().eval()


def accuracy(predict, x, y, batch=500):
    """Top-1 accuracy in percent of predict(images) -> logits (numpy) over the test digits."""
    correct = 0
    for start in range(0, x.shape[0], batch):
        logits = predict(x[start:start + batch])
        correct += int((logits.argmax(1) == y[start:start + batch].numpy()).sum())
    return 100.0 * correct / x.shape[0]


def to_numpy(out):
    return out.float().numpy() if isinstance(out, wick.Tensor) else np.asarray(out)


class Runtime:
    """One way to run a model: run(x: wick.Tensor) -> numpy logits, plus the file it lives in."""

    def __init__(self, name, run, file_bytes=None):
        self.name, self.run, self.file_bytes = name, run, file_bytes


def wick_runtimes(model, name, example, calibration, workdir):
    runtimes = []
    with wick.no_grad():
        runtimes.append(Runtime("wick eager fp32", lambda x: to_numpy(model(x)),
                                file_bytes=saved_size(model, workdir, name)))
        compiled = wick.compile(model, freeze=True)

        def run_compiled(x):
            with wick.no_grad():
                return to_numpy(compiled(x))
        runtimes.append(Runtime("wick compiled fp32", run_compiled))

        def run_bf16(x):
            with wick.no_grad(), wick.autocast("cpu", dtype=wick.bfloat16):
                return to_numpy(model(x))
        runtimes.append(Runtime("wick bf16", run_bf16))
    runtimes.append(int8_runtime(model, name, calibration, workdir))
    return runtimes


def saved_size(model, workdir, name):
    path = os.path.join(workdir, f"{name}.safetensors")
    wick.save(model.state_dict(), path)
    return os.path.getsize(path)


def int8_runtime(model, name, calibration, workdir):
    """wick.quantization's eager-mode flow on the model's quantizable twin (wick.models.
    quantization: the same parameters, relus as modules, residual adds through FloatFunctional):
    fuse, prepare, calibrate, convert."""
    if name not in QUANTIZABLE:
        return Runtime("wick int8", None, file_bytes="not run: no quantizable form")
    import wick.quantization as wq
    qmodel = QUANTIZABLE[name]()
    qmodel.load_state_dict(model.state_dict())
    qmodel.eval()
    qmodel.fuse_model()
    qmodel.qconfig = wq.get_default_qconfig("x86")
    prepared = wq.prepare(qmodel)
    wq.calibrate(prepared, calibration, progress=False)
    qmodel = wq.convert(prepared)

    def run(x):
        with wick.no_grad():
            return to_numpy(qmodel(x))
    run.model = qmodel
    return Runtime("wick int8", run, file_bytes=saved_size(qmodel, workdir, name + "-int8"))


def torch_runtime(model_name, wick_model):
    """PyTorch 1.13 on the same weights: the same classes, state_dict copied through NumPy."""
    import torch
    if model_name == "cnn":
        import ast
        src = open(os.path.join(bench_common.ROOT, "examples", "train_mnist.py")).read()
        tree = ast.parse(src)
        body = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "CNN"]
        ns = {"nn": torch.nn, "F": torch.nn.functional}
        exec(compile(ast.Module(body=body, type_ignores=[]), "train_mnist.py", "exec"), ns)
        tmodel = ns["CNN"]()
    elif model_name == "resnet18":
        import torchvision
        tmodel = torchvision.models.resnet18(weights=None)
    else:
        from resnet_vs_pytorch import cifar_resnet20
        tmodel = cifar_resnet20(torch)
    state = {k: torch.from_numpy(v.numpy().copy()) for k, v in wick_model.state_dict().items()}
    tmodel.load_state_dict(state)
    tmodel.eval()

    def run(x):
        with torch.no_grad():
            return tmodel(torch.from_numpy(x.numpy())).numpy()
    return Runtime("PyTorch 1.13 fp32", run)


def ort_runtime(label, model, example, path, threads):
    try:
        import onnxruntime as ort
        wick.onnx.export(model, (example,), path)
    except Exception as e:  # noqa: BLE001  the row says why this runtime could not run
        return Runtime(label, None, file_bytes=f"not run: {type(e).__name__}: {e}")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # ONNX Runtime's workers spin after each run, taking a core from whatever runs next (wick's
    # batch-1 ResNet-18 measured 33 ms instead of 20 right after ORT). Without spinning ORT's
    # own latency did not change (17.2 ms either way), so every runtime is timed at its best.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # not the QDQ fusion's notes on initializers it made unused
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    input_name = session.get_inputs()[0].name
    return Runtime(label, lambda x: session.run(None, {input_name: x.numpy()})[0],
                   file_bytes=os.path.getsize(path))


def interleaved_ms(runs, repeats, block=3):
    """Median ms per call of each function, timed in rounds: each round gives every function a
    pause (ONNX Runtime's and OpenMP's workers spin for a while after a call and would slow the
    next runtime on 2 cores), an untimed call and then `block` timed ones, so that a slow spell
    of this shared VM falls on all runtimes alike."""
    times = [[] for _ in runs]
    rounds = max(1, -(-repeats // block))
    for _ in range(rounds):
        for fn, t in zip(runs, times):
            time.sleep(0.05)  # the previous runtime's spinning worker threads go to sleep
            fn()
            for _ in range(block):
                start = time.perf_counter()
                fn()
                t.append(time.perf_counter() - start)
    return [1e3 * statistics.median(t) for t in times]


def measure(runtimes, model_name, reference, test, repeats):
    """One row per runtime: latency at batch 1, samples/s at batch 64, accuracy (or the largest
    difference from wick's fp32), file size."""
    rows = [{"runtime": r.name, "file": r.file_bytes} for r in runtimes]
    ready = [(r, row) for r, row in zip(runtimes, rows) if r.run is not None]
    shape = INPUT[model_name]
    b64 = 64
    x1, x64 = wick.randn(1, *shape), wick.randn(b64, *shape)
    b1 = interleaved_ms([lambda r=r: r.run(x1) for r, _ in ready], repeats)
    big = interleaved_ms([lambda r=r: r.run(x64) for r, _ in ready], max(4, repeats // 4),
                         block=2)
    for (r, row), ms1, ms64 in zip(ready, b1, big):
        row["b1_ms"], row["b64_per_s"] = ms1, b64 / (ms64 / 1e3)
        if test is not None:
            row["accuracy"] = accuracy(r.run, *test)
        else:
            row["max_diff"] = float(np.abs(r.run(x64) - reference(x64)).max())
    return rows


def size_str(v):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return f"{v / 2**20:.2f} MiB"


def print_table(model_name, rows):
    base = next((r for r in rows if r["runtime"] == "wick eager fp32" and "b1_ms" in r), None)
    print(f"\n{model_name}, input {'x'.join(map(str, INPUT[model_name]))}:")
    print(f"  {'runtime':<20} {'batch 1 ms':>11} {'batch 64 /s':>12} {'vs eager':>9} "
          f"{'accuracy / max diff':>20}  file")
    for r in rows:
        if "b1_ms" not in r:
            print(f"  {r['runtime']:<20} {r['file']}")
            continue
        speed = r["b64_per_s"] / base["b64_per_s"] if base else float("nan")
        quality = (f"{r['accuracy']:.2f}%" if "accuracy" in r else f"{r['max_diff']:.1e}")
        print(f"  {r['runtime']:<20} {r['b1_ms']:>11.2f} {r['b64_per_s']:>12.1f} {speed:>8.2f}x "
              f"{quality:>20}  {size_str(r['file'])}")


def write_svg(path, results):
    """Batch-1 latency per runtime, one group of bars per model (log scale)."""
    import math
    models = list(results)
    names = []
    for rows in results.values():
        for r in rows:
            if "b1_ms" in r and r["runtime"] not in names:
                names.append(r["runtime"])
    colors = ["#4c72b0", "#55a868", "#8172b2", "#c44e52", "#dd8452", "#937860", "#da8bc3"]
    width, height, left, top, bottom = 860, 360, 60, 40, 70
    group = (width - left - 20) / len(models)
    bar = group * 0.8 / max(1, len(names))
    top_ms = max(r["b1_ms"] for rows in results.values() for r in rows if "b1_ms" in r)
    low, high = 0.1, 10 ** math.ceil(math.log10(top_ms))

    def y(ms):
        return top + (height - top - bottom) * (1 - math.log10(ms / low) / math.log10(high / low))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="20" font-size="14">Batch-1 latency (ms, log scale, lower is '
           'better)</text>']
    decade = low
    while decade <= high:
        out.append(f'<line x1="{left}" x2="{width - 20}" y1="{y(decade):.1f}" y2="{y(decade):.1f}" '
                   'stroke="#ddd"/><text x="{0}" y="{1:.1f}" text-anchor="end">{2:g}</text>'
                   .format(left - 4, y(decade) + 4, decade))
        decade *= 10
    for g, model_name in enumerate(models):
        x0 = left + g * group + group * 0.1
        for r in results[model_name]:
            if "b1_ms" not in r:
                continue
            k = names.index(r["runtime"])
            x = x0 + k * bar
            out.append(f'<rect x="{x:.1f}" y="{y(r["b1_ms"]):.1f}" width="{bar - 2:.1f}" '
                       f'height="{height - bottom - y(r["b1_ms"]):.1f}" fill="{colors[k % 7]}">'
                       f'<title>{r["runtime"]}: {r["b1_ms"]:.2f} ms</title></rect>')
        out.append(f'<text x="{x0 + group * 0.4:.1f}" y="{height - bottom + 16}" '
                   f'text-anchor="middle">{model_name}</text>')
    for k, n in enumerate(names):
        x = left + (k % 4) * 200
        yy = height - 30 + (k // 4) * 16
        out.append(f'<rect x="{x}" y="{yy - 9}" width="10" height="10" fill="{colors[k % 7]}"/>'
                   f'<text x="{x + 14}" y="{yy}">{n}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"\nwrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--models", default="cnn,resnet20,resnet18")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    parser.add_argument("--svg", help="write the batch-1 latency chart here")
    args = parser.parse_args()
    repeats = 4 if args.quick else args.repeats

    import torch
    torch.set_num_threads(args.threads)
    wick.set_num_threads(args.threads)
    print(f"inference on {args.threads} threads; OpenBLAS core {openblas_corename()} "
          f"(OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}); PyTorch {torch.__version__}; "
          f"int8 GEMM: {int8_backend()}")

    results = {}
    test = mnist(train=False)
    train_digits = mnist(train=True)[0]
    workdir = tempfile.mkdtemp(prefix="wick-inference-")
    for model_name in args.models.split(","):
        model = build(model_name)
        shape = INPUT[model_name]
        # calibration on training digits (never the test digits the accuracy is measured on)
        calibration = [wick.randn(16, *shape) for _ in range(4)] if model_name != "cnn" else \
            [train_digits[i:i + 64] for i in range(0, 640, 64)]
        example = wick.randn(2, *shape)
        runtimes = wick_runtimes(model, model_name, example, calibration, workdir)
        runtimes.append(torch_runtime(model_name, model))
        runtimes.append(ort_runtime("ORT fp32", model, example,
                                    os.path.join(workdir, f"{model_name}.onnx"), args.threads))
        int8 = next(r for r in runtimes if r.name == "wick int8")
        if int8.run is not None:
            runtimes.append(ort_runtime("ORT int8 (QDQ)", int8.run.model, example,
                                        os.path.join(workdir, f"{model_name}-int8.onnx"),
                                        args.threads))
        with wick.no_grad():
            def reference(x):
                return to_numpy(model(x))
            rows = measure(runtimes, model_name, reference,
                           test if model_name == "cnn" else None,
                           repeats if model_name != "resnet18" else max(5, repeats // 2))
        results[model_name] = rows
        print_table(model_name, rows)
    if args.svg:
        write_svg(args.svg, results)


def int8_backend():
    try:
        return wick._C._quantized.gemm_backend()
    except AttributeError:
        return "not built"


if __name__ == "__main__":
    main()
