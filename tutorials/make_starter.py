#!/usr/bin/env python3
"""Generates every lab's starter files from its solution files: the one source of truth.

A solution file marks each gap the student fills:

    # BEGIN SOLUTION: hint for the student            (Python; C++ uses //)
    ...the instructor's code...
    # END SOLUTION

In the starter the block becomes the hint as a TODO comment plus a statement that fails loudly
(Python: raise NotImplementedError(hint); C++: throw lab::NotImplemented(hint)), indented like the
BEGIN line. A hint may end with `|| CODE`: then CODE is written instead of the raise/throw, for a
gap that must fall through quietly (e.g. a hook that does nothing yet).

    python3 tutorials/make_starter.py           # writes tutorials/NN-*/starter/ from solution/
    python3 tutorials/make_starter.py --check   # fails if a committed starter differs (CI)
"""

import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
BEGIN = re.compile(r"^(?P<indent>\s*)(?P<c>#|//) BEGIN SOLUTION(?::\s*(?P<hint>.*))?$")
END = re.compile(r"^\s*(#|//) END SOLUTION\s*$")


def quote(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def starter_text(path):
    out, gaps, inside, function = [], 0, None, None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        d = re.match(r"^\s*def (\w+)\(", line)
        if d:
            function = d.group(1)
        if inside is None:
            m = BEGIN.match(line)
            if m is None:
                if END.match(line):
                    sys.exit(f"{path}:{number}: END SOLUTION without BEGIN")
                out.append(line)
                continue
            inside = number
            gaps += 1
            indent, c = m.group("indent"), m.group("c")
            hint = (m.group("hint") or "fill in this part").strip()
            code = None
            if "||" in hint:
                hint, code = (s.strip() for s in hint.split("||", 1))
            if c == "#" and function and not hint.startswith(function):
                hint = f"{function}: {hint}"  # Python hints name their function
            out.append(f"{indent}{c} TODO({path.parent.parent.name[:2]}): {hint}")
            if code is not None:
                out.append(f"{indent}{code}")
            elif c == "#":
                out.append(f'{indent}raise NotImplementedError("{quote(hint)}")')
            else:
                out.append(f'{indent}throw lab::NotImplemented("{quote(hint)}");')
        elif END.match(line):
            inside = None
        elif BEGIN.match(line):
            sys.exit(f"{path}:{number}: BEGIN SOLUTION inside the gap opened on line {inside}")
    if inside is not None:
        sys.exit(f"{path}:{inside}: BEGIN SOLUTION is never closed")
    if gaps == 0 and path.suffix in (".py", ".cpp", ".h"):
        sys.exit(f"{path}: no BEGIN SOLUTION gap (a solution file must have at least one)")
    text = "\n".join(out) + "\n"
    if path.suffix in (".cpp", ".h"):
        # The repository's format check covers starters too: write them as clang-format would.
        text = subprocess.run(["clang-format", f"--assume-filename={path}"], input=text,
                              capture_output=True, text=True, check=True).stdout
    return text, gaps


def main():
    check = "--check" in sys.argv[1:]
    drift, total = [], 0
    for solution in sorted(HERE.glob("[0-9][0-9]-*/solution")):
        starter = solution.parent / "starter"
        expected = {}
        for src in sorted(p for p in solution.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            text, gaps = starter_text(src)
            total += gaps
            expected[starter / src.relative_to(solution)] = text
        present = {p for p in starter.rglob("*") if p.is_file() and "__pycache__" not in p.parts} \
            if starter.exists() else set()
        for path, text in expected.items():
            if not path.exists() or path.read_text() != text:
                drift.append(str(path.relative_to(HERE)))
                if not check:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text)
        for path in present - set(expected):
            drift.append(str(path.relative_to(HERE)) + " (no solution file)")
            if not check:
                path.unlink()
    if check and drift:
        print("make_starter: starters differ from their solutions; run python3 tutorials/make_starter.py:")
        for d in drift:
            print("  " + d)
        sys.exit(1)
    print(f"make_starter: {total} gaps; " + ("starters up to date" if check or not drift
                                             else f"wrote {len(drift)} files"))


if __name__ == "__main__":
    main()
