"""wick's ring all-reduce (distributed/ring_all_reduce.h) against MPI's own all_reduce, 1 KiB to
64 MiB of float32, side by side in one run, with bus bandwidth plotted (docs/ring_all_reduce.svg).

    WICK_BUILD_DIR=build python3 benchmarks/ring_all_reduce.py [--ranks 2] [--tcp] [--svg PATH]

It launches itself under mpirun. Each size is timed as the median of several all-reduces, each
started together after a barrier; bus bandwidth is 2(N-1)/N x bytes / time, the bytes one rank
sends and receives in a bandwidth-optimal all-reduce (NCCL's busBw), so it is comparable across
world sizes. --tcp makes Open MPI use TCP over loopback instead of shared memory. NCCL's column
needs GPUs: tests/gpu/run.sh runs the same comparison where they exist.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_common  # noqa: E402,F401  the source tree on sys.path

SIZES_KIB = [1, 16, 256, 1024, 4096, 16384, 65536]


def worker(args):
    import wick
    import wick.distributed as dist

    wick.set_num_threads(1)
    dist.init_process_group("mpi", timeout=300)
    results = []
    for kib in SIZES_KIB:
        x = wick.ones(kib * 256)  # float32
        repeats = 20 if kib <= 1024 else 5
        row = {"kib": kib}
        for name, fn in (("mpi", lambda: dist.all_reduce(x)),
                         ("ring", lambda: dist.ring_all_reduce(x))):
            fn()  # warm-up: buffers, connections
            times = []
            for _ in range(repeats):
                dist.barrier()
                start = time.perf_counter()
                fn()
                t = wick.tensor([time.perf_counter() - start])
                dist.all_reduce(t, op=dist.ReduceOp.MAX)
                times.append(float(t))
            row[name] = statistics.median(times)
        expected = float(dist.get_world_size()) ** (2 * (1 + repeats))
        if abs(float(x[0]) - expected) > 1e-3 * expected:  # each call multiplies by N
            raise SystemExit(f"ring_all_reduce: wrong sum {float(x[0])} (expected {expected})")
        results.append(row)
    if dist.get_rank() == 0:
        with open(args.out, "w") as f:
            json.dump({"ranks": dist.get_world_size(), "rows": results}, f)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--tcp", action="store_true", help="Open MPI over TCP (loopback)")
    parser.add_argument("--svg", default=None, help="write the bandwidth chart here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_rmaps_base_oversubscribe="1",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if args.tcp:
        env.update(OMPI_MCA_pml="ob1", OMPI_MCA_btl="tcp,self", OMPI_MCA_btl_tcp_if_include="lo")
    transport = "TCP over loopback" if args.tcp else "shared memory"
    subprocess.run(["mpirun", "-np", str(args.ranks), sys.executable, os.path.abspath(__file__),
                    "--worker", "--out", out], check=True, env=env)
    with open(out) as f:
        data = json.load(f)
    os.unlink(out)
    n = data["ranks"]
    factor = 2 * (n - 1) / n
    print(f"all_reduce of float32 on {n} ranks, Open MPI over {transport}, one thread per rank")
    print(f"{'size':>9} {'MPI ms':>9} {'ring ms':>9} {'ring/MPI':>9} {'MPI GB/s':>9} "
          f"{'ring GB/s':>9}")
    series = {"MPI (native)": [], "wick ring": []}
    for row in data["rows"]:
        nbytes = row["kib"] * 1024
        bw = {k: factor * nbytes / row[k] / 1e9 for k in ("mpi", "ring")}
        label = f"{row['kib'] // 1024} MiB" if row["kib"] >= 1024 else f"{row['kib']} KiB"
        print(f"{label:>9} {row['mpi'] * 1e3:>9.3f} {row['ring'] * 1e3:>9.3f} "
              f"{row['ring'] / row['mpi']:>8.2f}x {bw['mpi']:>9.2f} {bw['ring']:>9.2f}")
        series["MPI (native)"].append((math.log2(row["kib"]), bw["mpi"]))
        series["wick ring"].append((math.log2(row["kib"]), bw["ring"]))
    if args.svg:
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))
        from common.svg_chart import write_chart

        write_chart(args.svg, f"all_reduce bus bandwidth, {n} ranks, Open MPI over {transport}",
                    [("GB/s", list(series.items()))], "log2(size in KiB)")
        print(f"chart: {args.svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
