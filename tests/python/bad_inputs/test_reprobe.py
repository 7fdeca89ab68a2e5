"""A small re-probe in every test run: new randomly generated cases of each class of bad input
(sizes that overflow, bad indices, overlapping in-place ops, mismatches, optimizer state, the
loader, threads and deep graphs, files), each in a child process with a timeout. No crash, no
hang, no silent wrong answer. `python3 tests/python/bad_inputs/reprobe.py --per-class 40` is the
long version, with the table of outcomes."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_reprobe_finds_no_crash_hang_or_silent_answer():
    run = subprocess.run([sys.executable, os.path.join(HERE, "reprobe.py"), "--seed", "12",
                          "--per-class", "4", "--show", "silent"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
