"""python -m wick.utils.collect_env: the environment report (envreport/) from Python, its
verdicts with injected mismatches, the Python side's versions, and its argument errors."""

import os
import subprocess
import sys

import pytest

import wick
from wick.utils import collect_env


def checks_by_name(assume=()):
    return {name: (verdict, detail, hint) for name, verdict, detail, hint in
            collect_env.get_env_info(assume)[1]}


def test_this_machine():
    facts, checks = collect_env.get_env_info()
    assert facts["wick_version"] == wick.__version__
    assert int(facts["logical_cores"]) == os.cpu_count()
    assert facts["python"].startswith(sys.version.split()[0])
    names = [c[0] for c in checks]
    assert "cpu instructions" in names and "threads" in names
    assert all(verdict != "FAIL" for _, verdict, _, _ in checks), checks


@pytest.mark.parametrize("assume,name,verdict,quoted", [
    (["cuda_built=1", "cuda_runtime_version=13000", "cuda_driver_version=12020"],
     "driver vs runtime", "FAIL", "12.2"),
    (["cuda_built=1", "cuda_runtime_version=13000", "cuda_driver_version=13000",
      "cudnn_header_version=91900", "cudnn_runtime_version=80906"], "cudnn", "FAIL", "8.9.6"),
    (["cuda_built=1", "cuda_runtime_version=13000", "cuda_driver_version=13000",
      "cudnn_header_version=91900", "cudnn_runtime_version=91900", "cudnn_cudart_version=12080"],
     "cudnn", "FAIL", "12.8"),
    (["cuda_built=1", "cuda_driver_version=13000", "cuda_architectures=80,90", "gpus=sm_75"],
     "gpu 0 code", "FAIL", "sm_75"),
    (["cpu_features_compiled=avx2,avx512f", "cpu_features=avx2"], "cpu instructions", "FAIL",
     "avx512f"),
])
def test_injected_mismatch(assume, name, verdict, quoted):
    got_verdict, detail, hint = checks_by_name(assume)[name]
    assert got_verdict == verdict and quoted in detail and hint, (detail, hint)


def test_command_line_exit_status_and_bad_arguments():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    ok = subprocess.run([sys.executable, "-m", "wick.utils.collect_env"], env=env,
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "checks" in ok.stdout and "numpy" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "wick.utils.collect_env", "--assume",
                          "gpus=sm_75", "--assume", "cuda_built=1", "--assume",
                          "cuda_driver_version=13000"], env=env, capture_output=True, text=True)
    assert bad.returncode == 1 and "[FAIL] gpu 0 code" in bad.stdout
    typo = subprocess.run([sys.executable, "-m", "wick.utils.collect_env", "--assume", "drvier=1"],
                          env=env, capture_output=True, text=True)
    assert typo.returncode == 2 and "unknown fact 'drvier'" in typo.stderr
