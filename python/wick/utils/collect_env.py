"""python -m wick.utils.collect_env: what this wick was built with, what this machine has, and
a verdict on each pair that must agree (driver vs CUDA runtime, cuDNN and NCCL vs their headers,
each GPU vs the architectures compiled in, the build's instruction sets vs the processor,
threads vs cores), each with a one-line hint. The same report as the C++ tool `wick_env`
(envreport/), plus the Python side: Python, NumPy and PyTorch versions.

    python -m wick.utils.collect_env
    python -m wick.utils.collect_env --assume cuda_driver_version=12040 --assume gpus=sm_75

--assume KEY=VALUE replaces a fact before the checks run (envreport/report.h lists the keys),
to ask what wick would say on another machine. The exit status is 1 when a check fails."""

import argparse
import platform
import sys

from wick import _C

SECTIONS = {
    "wick": ["wick_version", "build_type", "compiler", "cxx_flags", "cpu_features_compiled",
             "eigen_version"],
    "CUDA": ["cuda_built", "cuda_toolkit_version", "cuda_architectures", "cuda_runtime_version",
             "cuda_driver_version", "cudnn_header_version", "cudnn_runtime_version",
             "cudnn_cudart_version", "gpus"],
    "communication": ["nccl_header_version", "nccl_runtime_version", "mpi_library"],
    "CPU": ["cpu_model", "logical_cores", "omp_max_threads", "cpu_features", "openblas_core"],
}


def python_facts():
    """Versions of the Python side: the interpreter, NumPy and PyTorch (the tests' reference)."""
    facts = {"python": f"{platform.python_version()} ({sys.executable})"}
    for name in ("numpy", "torch"):
        try:
            module = __import__(name)
            facts[name] = getattr(module, "__version__", "unknown")
        except ImportError:
            facts[name] = "not installed"
    return facts


def get_env_info(assume=()):
    """(facts, checks): facts a dict of strings, checks a list of (name, verdict, detail, hint)."""
    facts = dict(_C._env_facts(list(assume)))
    facts.update(python_facts())
    return facts, list(_C._env_checks(list(assume)))


def format_report(facts, checks):
    lines = []
    sections = dict(SECTIONS, Python=["python", "numpy", "torch"])
    for title, keys in sections.items():
        lines.append(title)
        lines += [f"  {key}: {facts[key]}" for key in keys]
    lines.append("checks")
    for name, verdict, detail, hint in checks:
        lines.append(f"  [{verdict}] {name}: {detail}")
        if hint:
            lines.append(f"         hint: {hint}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m wick.utils.collect_env",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--assume", action="append", default=[], metavar="KEY=VALUE",
                        help="replace a fact before the checks (repeatable)")
    args = parser.parse_args(argv)
    try:
        facts, checks = get_env_info(args.assume)
    except ValueError as e:
        parser.error(str(e))
    print(format_report(facts, checks))
    return 1 if any(verdict == "FAIL" for _, verdict, _, _ in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
