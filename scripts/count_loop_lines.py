#!/usr/bin/env python3
"""Counts the lines of user code in the Keras-style MNIST examples (examples/fit_mnist.*) and in
the hand-written ones they replace (examples/train_mnist.*), for the figure in README.md.

A line counts when it holds code: blank lines, comments, docstrings, imports / #includes /
`using namespace` and the sys.path set-up that lets a script run from a source tree do not.
Two figures per file: the whole file, and its training loop -
  - fit_mnist: the statements that make, compile, fit and evaluate the KerasModel;
  - train_mnist: what those replace - train_epoch and evaluate (and, in Python, the ProgressBar
    class; the C++ one lives in examples/common/cli.cpp and is not counted) and the epoch loop
    (with its metrics CSV, checkpoint saving and chart). Since train_resnet shares that loop it
    lives in examples/common/trainer.cpp and training.py, which are counted with train_mnist.
train_mnist also has flags, resuming, mixed precision and data-parallel training, which fit_mnist
lacks: its whole-file figure counts them, and its loop figure counts the lines of the loop that
serve them (autocast, the loss scaler, DDP's all-reduce and timeline).

    /usr/bin/python3 scripts/count_loop_lines.py
"""

import ast
import io
import os
import re
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERAS_CALLS = re.compile(r"keras\.Model|KerasModel|\.compile\(|\.fit\(|\.evaluate\(")


# ---- Python ------------------------------------------------------------------------------------

def python_code_lines(source):
    """Line numbers holding tokens other than comments, and not inside a docstring."""
    lines = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skip:
            lines.update(range(token.start[0], token.end[0] + 1))
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            lines -= set(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def is_boilerplate(node):
    """Imports and the source-tree sys.path set-up (ROOT, _BUILD, `if ...: sys.path[:0] = ...`)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id in ("ROOT", "_BUILD")
                                            for t in node.targets):
        return True
    return isinstance(node, ast.If) and "sys.path" in ast.unparse(node)


def span(node):
    return set(range(node.lineno, node.end_lineno + 1))


def python_counts(paths, loop_names=(), loop_in=None):
    """Lines of code in `paths` (together), and those of the training loop: the functions,
    methods and classes named in loop_names, and the statements of type loop_in[1] in the
    function or method named loop_in[0]; without loop_names, the statements using KerasModel."""
    whole, loop_total = 0, 0
    for path in paths:
        source = open(path, encoding="utf-8").read()
        code = python_code_lines(source)
        tree = ast.parse(source)
        kept = set()
        for node in tree.body:
            if not is_boilerplate(node):
                kept |= span(node)
        nodes = list(tree.body) + [m for n in tree.body if isinstance(n, ast.ClassDef)
                                   for m in n.body]
        loop = set()
        for node in nodes:
            is_def = isinstance(node, (ast.FunctionDef, ast.ClassDef))
            if is_def and node.name in loop_names:
                loop |= span(node)
            elif not loop_names and node in tree.body and KERAS_CALLS.search(ast.unparse(node)):
                loop |= span(node)
            if loop_in and isinstance(node, ast.FunctionDef) and node.name == loop_in[0]:
                for statement in node.body:
                    if isinstance(statement, loop_in[1]):
                        loop |= span(statement)
        whole += len(code & kept)
        loop_total += len(code & loop)
    return whole, loop_total


# ---- C++ ---------------------------------------------------------------------------------------

def cpp_code_lines(source):
    """{line number: text} of the lines that hold code once comments are removed."""
    source = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), source, flags=re.S)
    lines = {}
    for number, line in enumerate(source.splitlines(), 1):
        text = re.sub(r"//.*", "", line).strip()
        if text and not text.startswith("#include") and not text.startswith("using namespace"):
            lines[number] = text
    return lines


def braced_block(lines, start):
    """The line numbers from `start` to the line closing the first brace opened there."""
    depth, opened, block = 0, False, set()
    for number in sorted(n for n in lines if n >= start):
        block.add(number)
        depth += lines[number].count("{") - lines[number].count("}")
        opened = opened or "{" in lines[number]
        if opened and depth <= 0:
            return block
    raise ValueError(f"no closing brace after line {start}")


def statement(lines, start):
    """The line numbers of the statement starting at `start` (up to its ';')."""
    block = set()
    for number in sorted(n for n in lines if n >= start):
        block.add(number)
        if lines[number].endswith(";"):
            return block
    raise ValueError(f"no ';' after line {start}")


def cpp_counts(paths, loop_starts=()):
    """Lines of code in `paths` (together) and of the loop. loop_starts: patterns of the lines
    that open the loop's blocks; none means the statements that use the KerasModel."""
    whole, loop_total = 0, 0
    for path in paths:
        lines = cpp_code_lines(open(path, encoding="utf-8").read())
        loop = set()
        for number, text in lines.items():
            if any(re.search(p, text) for p in loop_starts):
                loop |= braced_block(lines, number)
            elif not loop_starts and KERAS_CALLS.search(text):
                loop |= statement(lines, number)
        whole += len(lines)
        loop_total += len(loop)
    return whole, loop_total


def main():
    examples = os.path.join(ROOT, "examples")
    common = os.path.join(examples, "common")
    rows = [
        ("examples/fit_mnist.py", python_counts([os.path.join(examples, "fit_mnist.py")])),
        ("examples/train_mnist.py", python_counts(
            [os.path.join(examples, "train_mnist.py"), os.path.join(common, "training.py")],
            ("ProgressBar", "train_epoch", "evaluate"), ("fit", ast.With))),
        ("examples/fit_mnist.cpp", cpp_counts([os.path.join(examples, "fit_mnist.cpp")])),
        ("examples/train_mnist.cpp", cpp_counts(
            [os.path.join(examples, "train_mnist.cpp"), os.path.join(common, "trainer.cpp")],
            (r"^struct EpochResult", r"^EpochResult Trainer::State::(train_epoch|evaluate)\(",
             r"^for \(int64_t epoch = "))),
    ]
    print(f"{'file':28} {'lines of code':>14} {'training loop':>14}")
    for name, (whole, loop) in rows:
        print(f"{name:28} {whole:>14} {loop:>14}")


if __name__ == "__main__":
    main()
