"""Helpers shared by the Python labs, their tests and their notebooks.

    from labkit import impl, figure
    strides = impl(__file__, "strides")   # the lab's strides.py: starter/ or solution/
    figure("wait time, 2 workers (s)", 0.12)
"""

import importlib.util
import os
import sys

TUTORIALS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TUTORIALS)
FIGURES = []


def setup_paths():
    """wick from the source tree (python/) and its extension from $WICK_BUILD_DIR (default build/),
    as tests/python/conftest.py does; an installed wick otherwise."""
    build = os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    if os.path.isdir(os.path.join(build, "python", "wick")):
        for p in (os.path.join(build, "python"), os.path.join(ROOT, "python")):
            if p not in sys.path:
                sys.path.insert(0, p)


def impl(anchor, module, which=None):
    """Imports `module` from the lab folder that holds `anchor` (a test file or the lab folder):
    from its starter/ (the student's code) or solution/, by LAB_IMPL (default starter)."""
    which = which or os.environ.get("LAB_IMPL", "starter")
    lab = os.path.abspath(anchor)
    while not os.path.basename(lab)[:2].isdigit():
        lab = os.path.dirname(lab)
    path = os.path.join(lab, which, module + ".py")
    name = f"lab{os.path.basename(lab)[:2]}_{which}_{module}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def figure(name, value):
    """Records a number the lab reports; printed after the tests' results."""
    FIGURES.append((name, value))
    print(f"{name}: {value}")
