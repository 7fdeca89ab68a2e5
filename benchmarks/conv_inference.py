"""ResNet-18 inference on the CPU at batch 1, wick against PyTorch 1.13 and ONNX Runtime, side by
side in one process: every distinct convolution shape of the network (forward only, no grad), then
the whole network (wick eager, wick compiled with freeze=True, PyTorch eager, ORT).

    OPENBLAS_CORETYPE=SkylakeX WICK_BUILD_DIR=build .venv/bin/python benchmarks/conv_inference.py \
        [--threads 2] [--repeats 30] [--batch 1] [--layers-only | --network-only]

The runtimes are timed interleaved - a block of calls of each in turn, in several rounds - and the
medians printed, so a busy machine slows them alike and the ratios stay meaningful even when the absolute numbers
move. ORT runs a one-convolution ONNX model per shape (exported by torch.onnx) and torchvision's
resnet18 for the network, with intra_op_num_threads = --threads; wick and PyTorch run the same
weights."""

import argparse
import os
import statistics
import tempfile
import time

import bench_common

bench_common.use_openblas_kernel()  # before numpy and torch load OpenBLAS

import numpy as np  # noqa: E402

# (in channels, out channels, kernel, stride, padding, input size): ResNet-18's convolutions
LAYERS = [
    (3, 64, 7, 2, 3, 224),
    (64, 64, 3, 1, 1, 56),
    (64, 128, 3, 2, 1, 56),
    (128, 128, 3, 1, 1, 28),
    (64, 128, 1, 2, 0, 56),
    (128, 256, 3, 2, 1, 28),
    (256, 256, 3, 1, 1, 14),
    (128, 256, 1, 2, 0, 28),
    (256, 512, 3, 2, 1, 14),
    (512, 512, 3, 1, 1, 7),
    (256, 512, 1, 2, 0, 14),
]


def interleaved(fns, repeats, rounds=5):
    """Median ms of each function, timed in `rounds` rounds that take each function in turn for
    repeats / rounds calls (after one untimed call). Blocks rather than single calls: each runtime
    keeps its own thread pool spinning for a while after it returns (libgomp's, ORT's), which would
    steal the two cores from the next runtime's first call."""
    times = {name: [] for name in fns}
    per_round = max(1, repeats // rounds)
    for _ in range(rounds):
        for name, fn in fns.items():
            fn()
            for _ in range(per_round):
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    return {name: 1e3 * statistics.median(t) for name, t in times.items()}


def ort_session(path, threads):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    # ONNX Runtime's workers spin after each run, taking a core from whatever runs next (wick's
    # batch-1 ResNet-18 measured 33 ms instead of 20 right after ORT). Without spinning ORT's
    # own latency did not change (17.2 ms either way), so every runtime is timed at its best.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def export(model, x, path):
    import torch
    with torch.no_grad():
        torch.onnx.export(model, x, path, opset_version=17, input_names=["x"], output_names=["y"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--layers-only", action="store_true")
    parser.add_argument("--network-only", action="store_true")
    args = parser.parse_args()

    import torch
    import torchvision

    import wick
    import wick.models
    import wick.nn.functional as WF

    torch.set_num_threads(args.threads)
    wick.set_num_threads(args.threads)
    try:
        import onnxruntime  # noqa: F401
        have_ort = True
    except ImportError:
        have_ort = False
    print(f"threads {args.threads}, batch {args.batch}, OpenBLAS core {bench_common.openblas_corename()}"
          f" (OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')}), torch {torch.__version__}"
          f", ORT {'yes' if have_ort else 'not installed'}; medians of {args.repeats}, interleaved")
    tmp = tempfile.mkdtemp()
    rng = np.random.default_rng(0)
    total = {"wick": 0.0, "torch": 0.0, "ort": 0.0}

    if not args.network_only:
        print(f"\n{'convolution (batch %d)' % args.batch:34} {'wick':>7} {'torch':>7} {'ORT':>7}"
              f"   {'GFLOP/s wick/torch/ORT':>24}  {'wick/torch':>10} {'wick/ORT':>8}")
        for (c, o, k, s, p, hw) in LAYERS:
            x = rng.standard_normal((args.batch, c, hw, hw), dtype=np.float32)
            w = (rng.standard_normal((o, c, k, k), dtype=np.float32) * 0.05).astype(np.float32)
            xt, wt = torch.from_numpy(x), torch.from_numpy(w)
            xw, ww = wick.from_numpy(x), wick.from_numpy(w)
            fns = {
                "wick": lambda: WF.conv2d(xw, ww, None, s, p),
                "torch": lambda: torch.nn.functional.conv2d(xt, wt, None, s, p),
            }
            if have_ort:
                conv = torch.nn.Conv2d(c, o, k, s, p, bias=False)
                conv.weight.data.copy_(wt)
                path = os.path.join(tmp, f"conv{c}_{o}_{k}_{s}_{hw}.onnx")
                export(conv, xt, path)
                sess = ort_session(path, args.threads)
                fns["ort"] = lambda: sess.run(None, {"x": x})
            with torch.no_grad():
                ms = interleaved(fns, args.repeats)
                ref = torch.nn.functional.conv2d(xt, wt, None, s, p).numpy()
                err = np.abs(WF.conv2d(xw, ww, None, s, p).numpy() - ref).max()
            oh = (hw + 2 * p - k) // s + 1
            gflop = 2.0 * args.batch * o * c * k * k * oh * oh / 1e9
            name = f"{c}->{o} {k}x{k}/{s} @{hw} (err {err:.0e})"
            ort_ms = ms.get("ort", float("nan"))
            for key in total:
                total[key] += ms.get(key, 0.0)
            rates = "/".join(f"{gflop / (ms[key] / 1e3):.0f}" if key in ms else "-"
                             for key in ("wick", "torch", "ort"))
            print(f"{name:34} {ms['wick']:7.2f} {ms['torch']:7.2f} {ort_ms:7.2f}   {rates:>24}"
                  f"  {ms['wick'] / ms['torch']:10.2f} {ms['wick'] / ort_ms:8.2f}")
        print(f"{'sum of the shapes above':34} {total['wick']:7.2f} {total['torch']:7.2f}"
              f" {total['ort'] if have_ort else float('nan'):7.2f}")

    if not args.layers_only:
        wick.manual_seed(0)
        model = wick.models.resnet18().eval()
        tmodel = torchvision.models.resnet18(weights=None).eval()
        tmodel.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in model.state_dict().items()})
        x = rng.standard_normal((args.batch, 3, 224, 224), dtype=np.float32)
        xw, xt = wick.from_numpy(x), torch.from_numpy(x)
        with wick.no_grad():
            compiled = wick.compile(model, freeze=True)
        fns = {
            "wick eager": lambda: model(xw),
            "wick compiled": lambda: compiled(xw),
            "torch eager": lambda: tmodel(xt),
        }
        if have_ort:
            path = os.path.join(tmp, "resnet18.onnx")
            export(tmodel, xt, path)
            sess = ort_session(path, args.threads)
            fns["ORT"] = lambda: sess.run(None, {"x": x})
        with wick.no_grad(), torch.no_grad():
            ms = interleaved(fns, args.repeats)
            err = np.abs(model(xw).numpy() - tmodel(xt).numpy()).max()
        print(f"\nResNet-18 eval, batch {args.batch}, 3x224x224 (max |wick - torch| {err:.1e}), ms:")
        for name, t in ms.items():
            rel = "" if name == "torch eager" else f"   {t / ms['torch eager']:.2f}x torch"
            if have_ort and name != "ORT":
                rel += f", {t / ms['ORT']:.2f}x ORT"
            print(f"  {name:14} {t:7.2f}{rel}")


if __name__ == "__main__":
    main()
