"""Where ResNet-20's training step spends its time, layer kind by layer kind, wick against PyTorch
side by side in one run: forward and forward+backward of each convolution shape of the CIFAR
network at batch 64 (3x3 at 32x32/16x16/8x8, the strided 3x3 that halves the grid), batch norm,
ReLU and the residual add. The convolution and batch-norm kernels are where wick loses to PyTorch
on ResNets (benchmarks/resnet_vs_pytorch.py); this says which ones, so a change to them can be
measured here first. For the convolutions it also times wick with
wick.backends.cpu.winograd_convolution off (the direct kernel, Note [direct convolution over
padded rows], where Winograd over tiles would run: Note [Winograd over blocks of 16 tiles]) and
with wick.backends.cpu.direct_convolution off (im2col + GEMM for every layer), so the effect of
each kernel is printed in the same run.

    WICK_BUILD_DIR=build /usr/bin/python3 benchmarks/resnet_layers.py [--threads 2] [--repeats 20]

The reference is Debian's PyTorch 1.13 in the same process (OpenBLAS told this processor's
kernel, printed), at the same thread count."""

import argparse

import bench_common
from bench_common import median_ms, openblas_corename

BATCH = 64
# (name, in channels, out channels, grid, stride): the convolutions of ResNet-20, by shape.
CONVS = [("conv 3->16 3x3 @32", 3, 16, 32, 1), ("conv 16->16 3x3 @32", 16, 16, 32, 1),
         ("conv 16->32 3x3 s2 @32", 16, 32, 32, 2), ("conv 32->32 3x3 @16", 32, 32, 16, 1),
         ("conv 32->64 3x3 s2 @16", 32, 64, 16, 2), ("conv 64->64 3x3 @8", 64, 64, 8, 1)]
NORMS = [("batch norm 16 @32", 16, 32), ("batch norm 32 @16", 32, 16), ("batch norm 64 @8", 64, 8)]


def cases(m):
    """(name, forward, forward+backward) for framework m."""
    out = []
    for name, cin, cout, grid, stride in CONVS:
        x = m.randn(BATCH, cin, grid, grid, requires_grad=True)
        conv = m.nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        out.append((name, conv, x))
    for name, channels, grid in NORMS:
        x = m.randn(BATCH, channels, grid, grid, requires_grad=True)
        out.append((name, m.nn.BatchNorm2d(channels), x))
    x = m.randn(BATCH, 16, 32, 32, requires_grad=True)
    out.append(("relu 16 @32", m.nn.ReLU(), x))
    y = m.randn(BATCH, 16, 32, 32)
    out.append(("residual add 16 @32", lambda t, y=y: t + y, x))
    return out


def time_case(layer, x, repeats):
    def forward():
        layer(x)

    def step():
        layer(x).sum().backward()

    return median_ms(forward, repeats), median_ms(step, repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    bench_common.use_openblas_kernel()
    import torch

    import wick

    torch.set_num_threads(args.threads)
    wick.set_num_threads(args.threads)
    print(f"ResNet-20 layers at batch {BATCH}, {args.threads} threads; PyTorch {torch.__version__} "
          f"(OpenBLAS core: {openblas_corename()})")
    print(f"{'layer':26} {'wick fwd':>9} {'direct':>7} {'im2col':>7} {'torch fwd':>10} {'ratio':>6}   "
          f"{'wick f+b':>9} {'direct':>7} {'im2col':>7} {'torch f+b':>10} {'ratio':>6}")
    totals = [0.0, 0.0, 0.0, 0.0]
    for (name, wl, wx), (_, tl, tx) in zip(cases(wick), cases(torch)):
        wf, wb = time_case(wl, wx, args.repeats)
        direct = im2col = "-", "-"
        if name.startswith("conv"):
            for switch in ("winograd_convolution", "direct_convolution"):
                setattr(wick.backends.cpu, switch, False)
                timed = tuple(f"{v:.2f}" for v in time_case(wl, wx, args.repeats))
                setattr(wick.backends.cpu, switch, True)
                direct, im2col = (timed, im2col) if switch.startswith("winograd") else (direct, timed)
        (direct_f, direct_b), (im2col_f, im2col_b) = direct, im2col
        tf, tb = time_case(tl, tx, args.repeats)
        for i, v in enumerate((wf, tf, wb, tb)):
            totals[i] += v
        print(f"{name:26} {wf:8.2f}  {direct_f:>6}  {im2col_f:>6}  {tf:9.2f}  {tf / wf:5.2f}x   "
              f"{wb:8.2f}  {direct_b:>6}  {im2col_b:>6}  {tb:9.2f}  {tb / wb:5.2f}x")
    print(f"{'sum':26} {totals[0]:8.2f}  {'':>6}  {'':>6}  {totals[1]:9.2f}  "
          f"{totals[1] / totals[0]:5.2f}x   {totals[2]:8.2f}  {'':>6}  {'':>6}  {totals[3]:9.2f}  "
          f"{totals[3] / totals[2]:5.2f}x")
    print("times in ms (median); direct: wick with Winograd over tiles off; im2col: with the "
          "direct convolution off; ratio = PyTorch's time / wick's (above 1: wick is faster)")


if __name__ == "__main__":
    main()
