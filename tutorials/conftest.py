"""pytest set-up for the Python labs: finds wick, picks the student's or the solution's code
(LAB_IMPL=starter|solution, set by grade.sh), and ends with the lab's figures and
"N passed, M failed", listing each gap that is still missing."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "common"))
import labkit  # noqa: E402  (puts wick on sys.path)

labkit.setup_paths()


def pytest_terminal_summary(terminalreporter):
    tr = terminalreporter
    passed = len(tr.stats.get("passed", []))
    failed = len(tr.stats.get("failed", [])) + len(tr.stats.get("error", []))
    missing = []
    for rep in tr.stats.get("failed", []) + tr.stats.get("error", []):
        text = str(rep.longrepr)
        why = "not written yet" if "NotImplementedError" in text else "wrong result"
        line = next((ln for ln in text.splitlines() if ln.startswith("E ")), "")
        missing.append(f"  {rep.nodeid.split('::')[-1]}: {why}: {line[1:].strip()[:110]}")
    if missing:
        tr.write_line("\nwhat is missing or wrong:")
        for m in missing:
            tr.write_line(m)
    if labkit.FIGURES:
        tr.write_line("\nfigures:")
        for name, value in labkit.FIGURES:
            tr.write_line(f"  {name}: {value}")
    tr.write_line(f"\n{passed} passed, {failed} failed")
