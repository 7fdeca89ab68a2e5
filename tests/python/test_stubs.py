"""The type stubs (python/wick/_C.pyi, for editor completion) name everything wick._C has;
rerun python/make_stubs.py after changing a binding."""

import os
import re

from wick import _C

STUB = os.path.join(os.path.dirname(_C.__file__), "_C.pyi")
SOURCE_STUB = os.path.join(os.path.dirname(__file__), "..", "..", "python", "wick", "_C.pyi")


def test_stub_names_every_public_name():
    path = STUB if os.path.exists(STUB) else SOURCE_STUB
    text = open(path).read()
    declared = set(re.findall(r"^(?:def|class) (\w+)", text, re.M))
    declared |= set(re.findall(r"^(\w+): dtype", text, re.M))
    missing = [n for n in dir(_C) if not n.startswith("__") and n not in declared]
    assert not missing, f"stale stubs, missing {missing}: run python/make_stubs.py"
    methods = set(re.findall(r"^    def (\w+)", text, re.M))
    missing = [n for n in dir(_C.Tensor) if not n.startswith("_") and n not in methods]
    assert not missing, f"stale stubs, Tensor lacks {missing}: run python/make_stubs.py"
