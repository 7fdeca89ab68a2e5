"""Writes python/wick/_C.pyi, the type stubs editors use to complete wick._C (and so wick.*),
from the signatures pybind11 records in each function's docstring.

    /usr/bin/python3 python/make_stubs.py [build]     # after building the extension

Rerun it after changing a binding; tests/python/test_stubs.py fails while the stubs are stale.
"""

import inspect
import os
import re
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))

# pybind11's names for types, as Python annotations.
REPLACE = [
    (r"\bwick\._C\._[a-z]\w*\.", ""),  # submodules: wick._C._nn, _jit, _quantized, ...
    (r"\bwick\._C\.", ""), (r"\bpybind11_builtins\.", ""),
    (r"\bhandle\b", "Any"), (r"\bobject\b", "Any"), (r"\bfunction\b", "Callable[..., Any]"),
    (r"\bnumpy\.ndarray\[[^\]]*\]", "numpy.ndarray"), (r"\bcapsule\b", "Any"),
    (r"\bsequence\b", "Sequence[Any]"), (r"\bdict\b", "Dict[Any, Any]"),
    (r"\btuple\b", "Tuple[Any, ...]"), (r"\blist\b", "List[Any]"), (r"\biterator\b", "Iterator[Any]"),
    (r"\*args\b", "*args: Any"), (r"\*\*kwargs\b", "**kwargs: Any"),
    (r"std::\w+<[^>]*>", "Any"), (r"\bwick::\w+(::\w+)*", "Any"),
]


def clean(sig):
    for pattern, repl in REPLACE:
        sig = re.sub(pattern, repl, sig)
    sig = re.sub(r"\*args: Any: Any", "*args: Any", sig)
    sig = re.sub(r"\*\*kwargs: Any: Any", "**kwargs: Any", sig)
    sig = re.sub(r"= <[^>]*>", "= ...", sig)  # default values pybind11 cannot print
    sig = re.sub(r"= (wick\.)?[a-z_.]*\([^)]*\)", "= ...", sig)
    sig = re.sub(r"\bfrom:", "from_:", sig)  # a keyword cannot name a parameter in a stub
    sig = re.sub(r"\(self: [\w.\[\], ]+?(,|\))", r"(self\1", sig)
    return sig


def signatures(obj, name):
    doc = obj.__doc__ or ""
    sigs = [line for line in doc.splitlines() if re.match(rf"^(\d+\. )?{re.escape(name)}\(", line)]
    return [clean(re.sub(r"^\d+\. ", "", s)) for s in sigs]


def emit_function(name, fn, indent, out, static=False):
    sigs = signatures(fn, name) or [f"{name}(*args: Any, **kwargs: Any) -> Any"]
    for sig in sigs:
        if static:
            out.append(f"{indent}@staticmethod")
        if len(sigs) > 1:
            out.append(f"{indent}@overload")
        out.append(f"{indent}def {sig}: ...")


def emit_class(name, cls, indent, out):
    out.append(f"{indent}class {name}:")
    body = []
    for attr, value in sorted(vars(cls).items()):
        if attr.startswith("__") and attr not in (
                "__init__", "__getitem__", "__setitem__", "__len__", "__iter__", "__call__",
                "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
                "__rmod__", "__pow__", "__rpow__", "__matmul__", "__neg__", "__ifloordiv__",
                "__imod__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__iadd__",
                "__isub__", "__imul__", "__itruediv__", "__bool__", "__float__", "__int__",
                "__index__", "__dlpack__", "__dlpack_device__", "__next__", "__and__", "__or__",
                "__invert__", "__abs__"):
            continue
        if isinstance(value, property):
            doc = (value.fget.__doc__ or "").splitlines()
            ret = "Any"
            if doc and "->" in doc[0]:
                ret = clean(doc[0].split("->", 1)[1].strip())
            body.append(f"{indent}    @property")
            body.append(f"{indent}    def {attr}(self) -> {ret}: ...")
            if value.fset is not None:
                body.append(f"{indent}    @{attr}.setter")
                body.append(f"{indent}    def {attr}(self, value: Any) -> None: ...")
        elif callable(value):
            emit_function(attr, value, indent + "    ", body)
    out.extend(body or [f"{indent}    ..."])


def emit_module(module, indent, out, static=False):
    for name, value in sorted(vars(module).items()):
        if name.startswith("__"):
            continue
        if inspect.isclass(value):
            if issubclass(value, BaseException):
                out.append(f"{indent}class {name}(RuntimeError): ...")
            else:
                emit_class(name, value, indent, out)
        elif inspect.ismodule(value):
            continue
        elif callable(value):
            emit_function(name, value, indent, out, static)
        elif type(value).__name__ == "dtype":
            out.append(f"{indent}{name}: dtype")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    root = os.path.dirname(HERE)
    sys.path[:0] = [HERE, os.path.join(root, build, "python")]
    from wick import _C

    out = ['"""Type stubs for wick._C (written by python/make_stubs.py; do not edit)."""',
           "", "from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, overload",
           "", "import numpy", ""]
    emit_module(_C, "", out)
    submodules = [n for n in dir(_C) if n.startswith("_") and not n.startswith("__")
                  and isinstance(getattr(_C, n), types.ModuleType)]
    for sub in submodules:
        out += ["", f"class {sub}:", f'    """wick._C.{sub}"""']
        body = []
        emit_module(getattr(_C, sub), "    ", body, static=True)
        out += body
    text = "\n".join(out) + "\n"
    path = os.path.join(HERE, "wick", "_C.pyi")
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path} ({text.count(chr(10))} lines)")


if __name__ == "__main__":
    main()
