"""Lab 09's graded tests: dtype rules against what wick's ops really return, coverage against
the dispatcher's own list, softplus against PyTorch's formula and gradcheck, and the generated
docs table."""

import math

import numpy as np
import pytest
import wick
from labkit import figure, impl
from wick import _C

L = impl(__file__, "optable")
DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"]


def test_result_dtype_agrees_with_every_unary_op():
    table = L.ops()
    checked = 0
    for name, op in table.items():
        if op["family"] != "unary" or not op["generated_api"]:
            continue
        for dtype in DTYPES:
            x = wick.ones(3).to(getattr(wick, dtype))
            expected = L.result_dtype(op, dtype)
            if expected is None:
                with pytest.raises(TypeError):
                    getattr(wick, name)(x)
            else:
                got = str(getattr(wick, name)(x).dtype).split(".")[-1]
                assert got == expected, f"{name}({dtype}) is {got}, the rule said {expected}"
            checked += 1
    figure("unary op x dtype cases checked against the table", checked)


def test_coverage_matches_the_dispatcher():
    table = L.ops()
    assert L.ops_without_kernel(table, "cpu") == []
    assert L.ops_without_kernel(table, "cuda") == _C._missing_kernels("cuda")
    families = {}
    for op in table.values():
        families[op["family"]] = families.get(op["family"], 0) + 1
    figure("ops in the table", len(table))
    figure("ops per family", ", ".join(f"{k} {v}" for k, v in sorted(families.items())))
    figure("ops without a CUDA kernel in this build", len(_C._missing_kernels("cuda")))


def reference_softplus(x, beta, threshold):
    z = beta * x
    return np.where(z > threshold, x, np.log1p(np.exp(np.minimum(z, threshold))) / beta)


@pytest.mark.parametrize("beta,threshold", [(1.0, 20.0), (2.0, 5.0), (0.5, 10.0)])
def test_softplus_values(beta, threshold):
    x = np.linspace(-60, 60, 241)
    got = L.softplus(wick.tensor(x), beta, threshold).numpy()
    np.testing.assert_allclose(got, reference_softplus(x, beta, threshold), rtol=1e-12, atol=0)
    big = L.softplus(wick.tensor([1e4, -1e4]), beta, threshold).numpy()
    assert np.all(np.isfinite(big)) and big[0] == 1e4 and 0 <= big[1] < 1e-300 + 1e-30


def test_softplus_keeps_tiny_values_and_differentiates():
    tiny = L.softplus(wick.tensor([-40.0], dtype=wick.float64)).item()
    assert math.isclose(tiny, math.exp(-40.0), rel_tol=1e-12)  # log(1 + 4e-18) without log1p: 0
    x = wick.tensor(np.linspace(-5, 5, 11) + 0.05, dtype=wick.float64, requires_grad=True)
    assert wick.autograd.gradcheck(lambda t: L.softplus(t, 1.5, 3.0), (x,))


def test_the_docs_table_is_generated_from_the_op_table():
    table = L.ops()
    text = L.table_markdown(table)
    lines = text.splitlines()
    assert lines[0].replace(" ", "") == "|op|family|dtyperule|autocast|backward|"
    assert set(lines[1]) <= set("|-: ")
    assert len(lines) == 2 + len(table)
    row = next(line for line in lines if line.startswith("| erf |"))
    assert [c.strip() for c in row.strip("|").split("|")] == [
        "erf", "unary", "floating", "keep", "ErfBackward"]
    figure("docs table", f"{len(lines)} lines")
