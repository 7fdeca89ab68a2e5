"""scripts/api_coverage.py: runs it, and checks that names are counted right - present ones
as present, absent ones as missing, submodules and private names not at all."""

import json
import os
import subprocess
import sys

import pytest
from reference import needs_torch

import wick

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "api_coverage.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import api_coverage  # noqa: E402


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    out = tmp_path_factory.mktemp("coverage") / "coverage.json"
    run = subprocess.run([sys.executable, SCRIPT, "--missing", "--json", str(out)],
                         capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert run.returncode == 0, run.stderr
    with open(out) as f:
        data = json.load(f)
    return run.stdout, {r["namespace"]: r for r in data["namespaces"]}


@needs_torch
def test_table_and_json_agree(figures):
    stdout, rows = figures
    assert set(rows) == {"torch", "torch.nn", "torch.nn.functional", "torch.optim",
                         "torch.optim.lr_scheduler", "torch.Tensor"}
    for name, r in rows.items():
        assert 0 < r["wick"] <= r["torch"]
        assert r["torch"] - r["wick"] == len(r["missing"])
        assert f"{name:<26} {r['torch']:>11} {r['wick']:>9}" in stdout
        assert f"{name}: {len(r['missing'])} missing" in stdout


@needs_torch
def test_names_are_counted_correctly(figures):
    _, rows = figures
    import torch

    # Present in both: counted, not missing.
    for namespace, name in (("torch", "zeros"), ("torch", "set_default_dtype"),
                            ("torch.nn", "Linear"), ("torch.nn", "ParameterList"),
                            ("torch.nn.functional", "relu"), ("torch.optim", "SGD"),
                            ("torch.Tensor", "new_zeros"), ("torch.Tensor", "type")):
        assert name not in rows[namespace]["missing"], (namespace, name)
        assert name in api_coverage.public_names(api_coverage._resolve(namespace))
    # In PyTorch, not in wick: missing (check wick really lacks them, so the test stays honest).
    for namespace, wick_obj, name in (("torch", wick, "stft"),
                                      ("torch.Tensor", wick.Tensor, "stft"),
                                      ("torch.nn", wick.nn, "Bilinear")):
        if not hasattr(torch if namespace == "torch" else torch.Tensor if namespace ==
                       "torch.Tensor" else torch.nn, name):
            continue
        assert not hasattr(wick_obj, name)
        assert name in rows[namespace]["missing"], (namespace, name)
    # Submodules, private names and constants are not API names.
    names = api_coverage.public_names(torch)
    assert "nn" not in names and "cuda" not in names and "_C" not in names
    assert "float32" not in names and "pi" not in names
    assert "float32" not in api_coverage.public_names(torch)
    assert "shape" not in api_coverage.public_names(torch.Tensor)  # a property, not a method


def test_has_name_handles_missing_modules():
    assert not api_coverage.has_name(None, "zeros")
    assert api_coverage.has_name(wick, "zeros")
    assert not api_coverage.has_name(wick, "no_such_function")
