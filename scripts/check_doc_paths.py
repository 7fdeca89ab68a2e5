#!/usr/bin/env python3
"""Fails on a repository path written in backticks in README.md or docs/*.md that does not exist.

The docs are the map students read; a file that moved or was renamed must not leave them pointing
at nothing. A backticked span is taken as a path when it starts with one of the repository's
top-level folders or files (`core/ops/op_list.h`, `nn/layers/`, `scripts/test.sh`); in a command
(`bash tests/fuzz/run.sh 15`) each such word is checked. Globs (`core/cpu/gemm_int8*`), braces
(`examples/train_charlm.{cpp,py}`), placeholders (`tests/fuzz/corpus/<harness>/`) and a `:line`
suffix are understood. Build outputs (`./build/...`, and any path git ignores, such as what a script
writes), paths outside the repository and fenced code blocks are not checked.

    /usr/bin/python3 scripts/check_doc_paths.py
"""

import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")


def documents(root):
    paths = [os.path.join(root, "README.md")]
    paths += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    return [p for p in paths if os.path.isfile(p)]


def top_level(root):
    return {name for name in os.listdir(root)
            if not name.startswith(("build", "__pycache__"))
            and (not name.startswith(".") or name == ".ci")}


def expand_braces(text):
    """`a.{cpp,h}` -> [`a.cpp`, `a.h`] (one level at a time, left to right)."""
    match = re.search(r"\{([^{}]*)\}", text)
    if not match:
        return [text]
    out = []
    for choice in match.group(1).split(","):
        out += expand_braces(text[:match.start()] + choice + text[match.end():])
    return out


def candidates(span, tops):
    """The repository paths a backticked span names."""
    found = []
    for word in span.split():
        word = word.strip("()[],;\"'")
        if "=" in word:            # WICK_BUILD_DIR=build, --svg=...
            word = word.split("=", 1)[1]
        word = re.sub(r":\d+(-\d+)?$", "", word)
        if "/" not in word or word.startswith(("./", "../", "/")):
            continue
        if word.split("/")[0] not in tops:
            continue
        found.append(word)
    return found


def exists(root, path):
    for variant in expand_braces(re.sub(r"<[^<>/]+>", "*", path)):
        full = os.path.join(root, variant)
        if any(c in variant for c in "*?["):
            if not glob.glob(full):
                return False
        elif not os.path.exists(full):
            return False
    return True


def ignored_by_git(root, path):
    """Whether git ignores the path: an output of the build or of a script, not a source file."""
    try:
        result = subprocess.run(["git", "-C", root, "check-ignore", "-q", "--no-index", path],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return False
    return result.returncode == 0


def check(root=ROOT):
    """[(document, path)] for every backticked repository path that does not exist."""
    tops = top_level(root)
    missing = []
    for document in documents(root):
        text = FENCE.sub("", open(document, encoding="utf-8").read())
        seen = set()
        for span in SPAN.findall(text):
            for path in candidates(span, tops):
                if (path not in seen and not exists(root, path)
                        and not ignored_by_git(root, path)):
                    missing.append((os.path.relpath(document, root), path))
                seen.add(path)
    return missing


if __name__ == "__main__":
    found = check(sys.argv[1] if len(sys.argv) > 1 else ROOT)
    for document, path in found:
        print(f"{document}: `{path}` does not exist")
    if found:
        print(f"check_doc_paths: {len(found)} path(s) in the docs name nothing in the repository")
        sys.exit(1)
    print("check_doc_paths: every path the docs name exists")
