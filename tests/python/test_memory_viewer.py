"""The memory viewer in a real browser: Debian's chromium, headless, loads the page written by
wick.memory.viewer (and tools/memory_viewer.py) from a file with no network; the page must log
nothing to the console and write into its DOM the numbers the snapshot holds."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from wick import memory

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh installs Debian's)")
MiB = 1 << 20


def load(page, tmp_path):
    """The DOM after the page's scripts ran, and what it logged to the console."""
    result = subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr",
         "--v=0", f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000",
         "--dump-dom", "file://" + os.path.abspath(page)],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return result.stdout, console


def text_of(dom, element_id):
    match = re.search(r'id="%s">([^<]*)<' % re.escape(element_id), dom)
    assert match, f"no element #{element_id} with text in the page"
    return match.group(1)


def expected_peaks(snap):
    """The snapshot's own numbers: the history undone from its segments, at every entry."""
    allocated = sum(s["allocated_size"] for s in snap["segments"])
    reserved = sum(s["total_size"] for s in snap["segments"])
    trace = snap["device_traces"][0]
    undo = {"alloc": (-1, 0), "free": (1, 0), "segment_alloc": (0, -1), "segment_free": (0, 1)}
    peaks = [allocated, reserved]
    for e in reversed(trace):
        da, dr = undo.get(e["action"], (0, 0))
        allocated += da * e["size"]
        reserved += dr * e["size"]
        peaks = [max(peaks[0], allocated), max(peaks[1], reserved)]
    return peaks


def a_fragmented_snapshot(max_entries=100000):
    """Small and large blocks, half of them freed, on the caching allocator."""
    a = memory.Allocator("caching", memory.SimulatedDevice(1 << 30))
    kept = [a.malloc(64 * 1024)]  # before the history: the page must undo into it
    memory._record_memory_history(max_entries=max_entries, allocator=a)
    ptrs = [a.malloc(s) for s in [300_000, 2 * MiB, 700_000, 5 * MiB, 40_000, 12 * MiB] * 3]
    for p in ptrs[::2]:
        a.free(p)
    a.empty_cache()
    snap = memory._snapshot(allocator=a)
    memory._record_memory_history(None, allocator=a)
    return snap, a, kept + ptrs[1::2]


@pytest.mark.parametrize("max_entries", [100000, 9])  # whole, and a window missing its start
def test_page_shows_the_snapshots_numbers(tmp_path, max_entries):
    snap, _, _ = a_fragmented_snapshot(max_entries)
    page = memory.viewer(snap, str(tmp_path / "memory.html"), compare=["caching", "bfc_growth"])
    dom, console = load(page, tmp_path)
    assert console == [], console
    assert text_of(dom, "status") == "ok"
    peak_allocated, peak_reserved = expected_peaks(snap)
    assert int(text_of(dom, "peak-allocated")) == peak_allocated
    assert int(text_of(dom, "peak-reserved")) == peak_reserved
    assert int(text_of(dom, "num-segments")) == len(snap["segments"])
    assert int(text_of(dom, "num-events")) == len(snap["device_traces"][0])
    if max_entries == 100000:  # the whole history: the allocator's own peaks
        assert peak_allocated == snap["stats"]["allocated_bytes.all.peak"]
        assert peak_reserved == snap["stats"]["reserved_bytes.all.peak"]
    replays = memory.trace_from_snapshot(snap)
    for i, policy in enumerate(["caching", "bfc_growth"]):
        result = memory.replay(replays, policy)
        assert text_of(dom, f"cmp-{i}-policy") == policy
        assert int(text_of(dom, f"cmp-{i}-peak-reserved")) == result["peak_reserved"]
        assert int(text_of(dom, f"cmp-{i}-peak-allocated")) == result["peak_allocated"]
        assert int(text_of(dom, f"cmp-{i}-device-mallocs")) == result["device_mallocs"]
    # One file, nothing fetched: no external script, style or image.
    html = open(page).read()
    assert not re.search(r'<(script|link|img)[^>]+(src|href)=', html)


def test_command_line_tool(tmp_path):
    snap, _, _ = a_fragmented_snapshot()
    src = tmp_path / "snap.json"
    src.write_text(json.dumps(snap))  # as _dump_snapshot writes it
    out = tmp_path / "page.html"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    tool = os.path.join(ROOT, "tools", "memory_viewer.py")
    run = subprocess.run([sys.executable, tool, str(src), str(out), "--compare", "caching,bfc"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    dom, console = load(out, tmp_path)
    assert console == [] and text_of(dom, "status") == "ok"
    assert text_of(dom, "cmp-1-policy") == "bfc"
    bad = tmp_path / "bad.json"
    bad.write_text('{"segments": [')
    run = subprocess.run([sys.executable, tool, str(bad), str(out)], capture_output=True,
                         text=True, env=env, timeout=300)
    assert run.returncode == 2 and "not JSON" in run.stderr


def test_an_empty_history_draws(tmp_path):
    a = memory.Allocator("caching", memory.SimulatedDevice(1 << 30))
    page = memory.viewer(memory._snapshot(allocator=a), str(tmp_path / "empty.html"))
    dom, console = load(page, tmp_path)
    assert console == [] and text_of(dom, "status") == "ok"
    assert text_of(dom, "peak-reserved") == "0"
