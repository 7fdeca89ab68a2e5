"""How much of PyTorch's public API wick has: for torch, torch.nn, torch.nn.functional,
torch.optim, torch.optim.lr_scheduler and the methods of torch.Tensor, the public names of the
installed PyTorch (no leading underscore; functions and classes, not submodules or constants)
and how many of them the wick counterpart has (by name: a name present is counted, whatever
its signature).

    WICK_BUILD_DIR=build-cpu /usr/bin/python3 scripts/api_coverage.py            # the table
    WICK_BUILD_DIR=build-cpu /usr/bin/python3 scripts/api_coverage.py --missing  # + what lacks
    WICK_BUILD_DIR=build-cpu /usr/bin/python3 scripts/api_coverage.py --json out.json

Needs PyTorch (Debian's python3-torch, 1.13) and a built wick.
"""

import argparse
import inspect
import json
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BUILD = os.path.join(ROOT, os.environ.get("WICK_BUILD_DIR", "build"), "python")
if os.path.isdir(os.path.join(_BUILD, "wick")):
    sys.path[:0] = [os.path.join(ROOT, "python"), _BUILD]

# (label, torch module path, wick module path); "Tensor" means the class's methods.
NAMESPACES = [
    ("torch", "torch", "wick"),
    ("torch.nn", "torch.nn", "wick.nn"),
    ("torch.nn.functional", "torch.nn.functional", "wick.nn.functional"),
    ("torch.optim", "torch.optim", "wick.optim"),
    ("torch.optim.lr_scheduler", "torch.optim.lr_scheduler", "wick.optim.lr_scheduler"),
    ("torch.Tensor", "torch.Tensor", "wick.Tensor"),
]


def _resolve(path):
    """The module (or, for '<module>.Tensor', the class) named by path; None when absent."""
    import importlib

    if path.endswith(".Tensor"):
        module = _resolve(path[:-len(".Tensor")])
        return getattr(module, "Tensor", None) if module is not None else None
    try:
        return importlib.import_module(path)
    except ImportError:
        return None


def _is_api(value):
    # Functions, builtins and classes count; submodules, constants (torch.pi, torch.float32's
    # dtype objects are instances, not callables) and typing helpers do not.
    if isinstance(value, types.ModuleType):
        return False
    if getattr(value, "__module__", None) == "typing":
        return False
    return inspect.isclass(value) or callable(value)


def public_names(obj):
    """The public API names of a module or class: no leading underscore, callable or a class."""
    names = set()
    for name in dir(obj):
        if name.startswith("_"):
            continue
        try:
            value = getattr(obj, name)
        except Exception:  # noqa: BLE001  a lazy attribute that fails counts as absent
            continue
        if _is_api(value):
            names.add(name)
    return names


def has_name(obj, name):
    if obj is None:
        return False
    try:
        getattr(obj, name)
    except Exception:  # noqa: BLE001  AttributeError, or a lazy attribute that fails
        return False
    return True


def coverage():
    """[{namespace, torch, wick, percent, missing}] for every namespace in NAMESPACES."""
    rows = []
    for label, torch_path, wick_path in NAMESPACES:
        torch_obj = _resolve(torch_path)
        if torch_obj is None:
            raise SystemExit(f"api_coverage: cannot import {torch_path}; is PyTorch installed?")
        wick_obj = _resolve(wick_path)
        names = sorted(public_names(torch_obj))
        missing = [n for n in names if not has_name(wick_obj, n)]
        have = len(names) - len(missing)
        rows.append({
            "namespace": label,
            "torch": len(names),
            "wick": have,
            "percent": round(100.0 * have / len(names), 1) if names else 100.0,
            "missing": missing,
        })
    return rows


def table(rows):
    lines = [f"{'namespace':<26} {'torch names':>11} {'wick has':>9} {'percent':>8}"]
    for r in rows:
        lines.append(f"{r['namespace']:<26} {r['torch']:>11} {r['wick']:>9} "
                     f"{r['percent']:>7.1f}%")
    total = sum(r["torch"] for r in rows)
    have = sum(r["wick"] for r in rows)
    lines.append(f"{'all':<26} {total:>11} {have:>9} {100.0 * have / total:>7.1f}%")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--missing", action="store_true",
                        help="also list the names wick lacks, per namespace")
    parser.add_argument("--json", metavar="FILE", help="write the figures (and missing names) "
                        "as JSON to FILE")
    args = parser.parse_args(argv)
    import torch

    import wick

    rows = coverage()
    print(f"PyTorch {torch.__version__} vs wick {wick.__version__}")
    print(table(rows))
    if args.missing:
        for r in rows:
            print(f"\n{r['namespace']}: {len(r['missing'])} missing")
            print("  " + " ".join(r["missing"]) if r["missing"] else "  (none)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch_version": torch.__version__, "namespaces": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
