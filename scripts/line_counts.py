#!/usr/bin/env python3
"""Prints wick's lines of code per layer and folder, to keep its size in view (tinygrad does the
same for its own).

A line counts when it holds code: blank lines, comment-only lines and Python docstrings do not.
Rows follow the layers of docs/architecture.md, lowest first. A folder is counted once: `core`
is core/ without the sub-folders that have rows of their own. A top-level folder that no row
names (a new one) gets a row of its own at the end, so nothing goes uncounted.

    /usr/bin/python3 scripts/line_counts.py                  # a plain table
    /usr/bin/python3 scripts/line_counts.py --markdown       # the table for README.md
    /usr/bin/python3 scripts/line_counts.py --update-readme  # rewrite README.md's table in place
"""

import argparse
import io
import os
import re
import sys
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README_BEGIN = "<!-- line_counts:begin (scripts/line_counts.py --update-readme) -->"
README_END = "<!-- line_counts:end -->"

CPP = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")
PY = (".py",)
SHELL = (".sh",)

# (layer, folder, what it holds, extensions). A folder's files are those under it that no later
# or earlier row claims with a longer folder name. "python/*" is python/ without python/wick.
ROWS = [
    ("core", "core", "tensors, storage, dtypes, dispatch, grad mode, backend hooks", CPP),
    ("core", "core/memory", "allocators, the simulated device, traces", CPP),
    ("core", "core/cpu", "the CPU kernels", CPP),
    ("ops <-> autograd", "core/ops", "the op table, the op front functions", CPP),
    ("ops <-> autograd", "autograd", "nodes, the engine, the backward formulas", CPP),
    ("backends", "cuda", "the CUDA backend", CPP),
    ("backends", "sim", "the simulated device's backend", CPP),
    ("nn, data", "nn", "Module, losses, checkpoints, the Keras loop", CPP),
    ("nn, data", "nn/layers", "the layers, by kind", CPP),
    ("nn, data", "nn/optim", "optimizers and schedules", CPP),
    ("nn, data", "nn/models", "the ResNets", CPP),
    ("nn, data", "data", "datasets, the DataLoader, record files", CPP),
    ("jit", "jit", "static graphs, ONNX export", CPP),
    ("distributed", "distributed", "process groups, DDP", CPP),
    ("envreport", "envreport", "the environment report (wick_env, collect_env)", CPP),
    ("python", "python/*", "the bindings: the wick._C extension", CPP),
    ("python", "python/wick", "the Python package", PY),
    ("users", "tools", "command-line tools", CPP + PY),
    ("users", "examples", "example programs", CPP + PY),
    ("users", "benchmarks", "benchmarks", CPP + PY + SHELL),
    ("users", "tests", "C++ and Python tests", CPP + PY + SHELL),
    ("users", "tutorials", "the labs", CPP + PY + SHELL),
    ("users", "scripts", "build, test and figure scripts", PY + SHELL),
]
# Top-level folders that hold no library or program code.
NOT_CODE = {"docs", "assets", "runs", "shared"}
LIBRARY_LAYERS = ("core", "ops <-> autograd", "backends", "nn, data", "jit", "distributed")


def cpp_code_lines(text):
    """Number of lines holding something other than comments and blanks (strings respected)."""
    count, in_block, i, line_has_code = 0, False, 0, False
    n = len(text)
    while i < n:
        c = text[i]
        if in_block:
            if text.startswith("*/", i):
                in_block, i = False, i + 2
                continue
        elif text.startswith("/*", i):
            in_block, i = True, i + 2
            continue
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c in "\"'":
            # A raw string R"x(...)x" ends at )x"; an ordinary literal at its unescaped quote.
            if c == '"' and i > 0 and text[i - 1] == "R":
                m = re.match(r'"([^(\s]*)\(', text[i:])
                if m:
                    end = text.find(")" + m.group(1) + '"', i)
                    end = n if end < 0 else end + len(m.group(1)) + 2
                    count += text.count("\n", i, end)
                    line_has_code, i = True, end
                    continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            line_has_code, i = True, j + 1
            continue
        if c == "\n":
            count += line_has_code
            line_has_code = False
        elif not in_block and not c.isspace():
            line_has_code = True
        i += 1
    return count + line_has_code


def python_code_lines(text):
    """Number of lines holding tokens other than comments, and not a bare string (docstring)."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}
    lines, statement = set(), []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NEWLINE:
                if statement and not all(t.type == tokenize.STRING for t in statement):
                    for t in statement:
                        lines.update(range(t.start[0], t.end[0] + 1))
                statement = []
            elif token.type not in skip:
                statement.append(token)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return sum(1 for line in text.splitlines() if line.strip()
                   and not line.strip().startswith("#"))
    for t in statement:
        lines.update(range(t.start[0], t.end[0] + 1))
    return len(lines)


def shell_code_lines(text):
    return sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith("#"))


def code_lines(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    if path.endswith(PY):
        return python_code_lines(text)
    if path.endswith(SHELL):
        return shell_code_lines(text)
    return cpp_code_lines(text)


def skipped_folder(name):
    return name.startswith((".", "build", "__pycache__")) or name in ("node_modules",)


def rows(root=ROOT):
    """[(layer, folder, description, files, code lines)] in ROWS' order, then unnamed folders."""
    table = list(ROWS)
    named_tops = {folder.split("/")[0] for _, folder, _, _ in ROWS}
    for name in sorted(os.listdir(root)):
        if (os.path.isdir(os.path.join(root, name)) and name not in named_tops
                and name not in NOT_CODE and not skipped_folder(name)):
            table.append(("other", name, "", CPP + PY + SHELL))
    claimed = sorted((folder for _, folder, _, _ in table if not folder.endswith("*")),
                     key=len, reverse=True)
    result = []
    for layer, folder, what, extensions in table:
        top = folder.rstrip("/*")
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        files = lines = 0
        for here, dirs, names in os.walk(base):
            dirs[:] = sorted(d for d in dirs if not skipped_folder(d))
            rel = os.path.relpath(here, root).replace(os.sep, "/")
            # Files of a sub-folder that has a row of its own count there, not here.
            owner = next((c for c in claimed if rel == c or rel.startswith(c + "/")), None)
            if folder.endswith("*"):
                if rel != top and owner != top:
                    continue
            elif owner != folder:
                continue
            for name in names:
                if name.endswith(extensions):
                    files += 1
                    lines += code_lines(os.path.join(here, name))
        if files:
            result.append((layer, folder.replace("/*", ""), what, files, lines))
    return result


def totals(table):
    library = sum(r[4] for r in table if r[0] in LIBRARY_LAYERS)
    python = sum(r[4] for r in table if r[0] == "python")
    return [("library (C++, core to distributed)", library),
            ("Python: bindings and package", python),
            ("everything counted", sum(r[4] for r in table))]


def plain(table):
    out = [f"{'layer':<18} {'folder':<13} {'files':>5} {'code':>7}  holds"]
    for layer, folder, what, files, lines in table:
        out.append(f"{layer:<18} {folder:<13} {files:>5} {lines:>7}  {what}")
    out.append("")
    out += [f"{name:<38} {lines:>7}" for name, lines in totals(table)]
    return "\n".join(out)


def markdown(table):
    out = ["| layer | folder | holds | files | lines of code |", "|---|---|---|---:|---:|"]
    for layer, folder, what, files, lines in table:
        shown = "`python/` (C++)" if folder == "python" else f"`{folder}/`"
        out.append(f"| {layer} | {shown} | {what} | {files} | {lines:,} |")
    for name, lines in totals(table):
        out.append(f"| **{name}** | | | | **{lines:,}** |")
    return "\n".join(out)


def update_readme(table, path=None):
    path = path or os.path.join(ROOT, "README.md")
    text = open(path, encoding="utf-8").read()
    begin, end = text.find(README_BEGIN), text.find(README_END)
    if begin < 0 or end < begin:
        raise SystemExit(f"line_counts: {path} has no {README_BEGIN} ... {README_END} block")
    new = text[:begin] + README_BEGIN + "\n" + markdown(table) + "\n" + text[end:]
    if new != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
    return new != text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print the README's table")
    parser.add_argument("--update-readme", action="store_true",
                        help="rewrite the table between README.md's line_counts markers")
    parser.add_argument("--root", default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    table = rows(args.root)
    if args.update_readme:
        changed = update_readme(table, os.path.join(args.root, "README.md"))
        print("line_counts: README.md " + ("updated" if changed else "already current"))
    elif args.markdown:
        print(markdown(table))
    else:
        print(plain(table))


if __name__ == "__main__":
    sys.exit(main())
