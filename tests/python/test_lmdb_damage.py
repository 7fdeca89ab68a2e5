"""Damaged LMDB stores are refused, never a crash (Note [checking LMDB files before liblmdb] in
data/lmdb_check.h). A small valid store - inline values on leaf pages under a branch root, and
values on overflow pages - is copied 300+ times with damage: truncations at and between page
boundaries, byte flips in the meta, branch, leaf and overflow pages, zeroed pages. Each copy is
opened, listed and read in a worker process, so a SIGBUS or SIGSEGV inside liblmdb is a failed
case, not a dead test run. Every copy must read exactly the original records or raise a clear
error naming the file; a record may read differently only where the damage hit its own value's
bytes (LMDB keeps no checksums of values, so those reach the Example decoder)."""

import json
import os
import random
import signal
import struct
import subprocess
import sys

import numpy as np
import pytest

import wick
from wick import records

pytestmark = pytest.mark.skipif(not wick._C._data.has_formats()["lmdb"],
                                reason="wick built without liblmdb")

COUNT, SHAPE = 60, (1, 8, 8)
PAGE = 4096

# Opens, lists and reads each store named on stdin; one JSON line before and after each, so the
# parent knows which store was being read if this process dies.
WORKER = r"""
import json, sys
import numpy as np
from wick import records
for line in sys.stdin:
    i, path = line.split(" ", 1)
    path = path.strip()
    print(json.dumps({"start": int(i)}), flush=True)
    try:
        ds = records.LMDBImageDataset(path, shape=SHAPE)
        items = []
        for k in range(len(ds)):
            try:
                image, label = ds[k]
                pixels = np.rint(np.asarray(image.numpy()) * 255).astype(np.uint8).tobytes()
                items.append(["ok", pixels.hex(), int(label)])
            except Exception as e:
                items.append(["error", type(e).__name__, str(e)])
        result = {"opened": items}
    except Exception as e:
        result = {"refused": [type(e).__name__, str(e)]}
    print(json.dumps({"done": int(i), **result}), flush=True)
""".replace("SHAPE", repr(SHAPE))


def image(i):
    return bytes((i * 37 + j * 11) % 256 for j in range(int(np.prod(SHAPE))))


def value(i):
    padding = b"p" * (5000 if i % 3 == 0 else 700)  # every third value on 2 overflow pages
    return records.encode_example({"image": [image(i)], "label": i % 10, "pad": [padding]})


def page_kinds(data):
    """'meta', 'branch', 'leaf', 'overflow' (a run's first page) or 'overflow data', per page."""
    kinds, pgno = [], 0
    while pgno < len(data) // PAGE:
        flags, run = struct.unpack_from("<HI", data, pgno * PAGE + 10)[0], 1
        kind = {8: "meta", 1: "branch", 2: "leaf", 4: "overflow"}[flags]
        if kind == "overflow":
            run = struct.unpack_from("<I", data, pgno * PAGE + 12)[0]
        kinds += [kind] + ["overflow data"] * (run - 1)
        pgno += run
    return kinds


def mutants(data, rng):
    """(description, damaged bytes, set of damaged offsets) for 300+ kinds of damage."""
    pages = len(data) // PAGE
    kinds = page_kinds(data)
    out = []
    for k in range(pages + 1):  # cut at every page boundary, and somewhere inside every page
        cut = k * PAGE
        if cut < len(data):
            out.append((f"cut at page {k}", data[:cut], set(range(cut, len(data)))))
        if k < pages:
            cut = k * PAGE + rng.randrange(1, PAGE)
            out.append((f"cut at byte {cut}", data[:cut], set(range(cut, len(data)))))
    by_kind = {kind: [p for p in range(pages) if kinds[p] == kind] for kind in set(kinds)}
    flips = {"meta": 50, "branch": 40, "leaf": 60, "overflow": 40, "overflow data": 10}
    for kind, n in flips.items():
        for _ in range(n):
            page = rng.choice(by_kind[kind])
            # Mostly the header, node offsets and node headers; sometimes anywhere in the page.
            at = page * PAGE + (rng.randrange(160) if rng.random() < 0.7 else rng.randrange(PAGE))
            damaged = bytearray(data)
            damaged[at] ^= 1 << rng.randrange(8)
            out.append((f"bit flip at byte {at} ({kind} page {page})", bytes(damaged), {at}))
    for page in range(pages):
        if page % 3 == 0 or kinds[page] != "overflow data":
            start = page * PAGE
            damaged = data[:start] + bytes(PAGE) + data[start + PAGE:]
            out.append((f"page {page} ({kinds[page]}) zeroed", damaged,
                        set(range(start, start + PAGE))))
    return out


def run_workers(paths, env):
    """{index: result dict}; a worker that dies is restarted after the store it died on."""
    results, todo = {}, list(range(len(paths)))
    while todo:
        proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        stdin = "".join(f"{i} {paths[i]}\n" for i in todo)
        try:
            stdout, stderr = proc.communicate(stdin, timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        current = None
        for line in stdout.splitlines():
            message = json.loads(line)
            if "start" in message:
                current = message["start"]
            else:
                results[message["done"]] = message
                current = None
        if proc.returncode != 0 and current is None:
            raise AssertionError(f"worker failed outside a store: {stderr[-2000:]}")
        if current is not None:  # died (or hung) while reading this store
            status = proc.returncode
            how = signal.Signals(-status).name if status < 0 else f"exit status {status}"
            results[current] = {"crash": f"{how}: {stderr[-500:]}"}
        todo = [i for i in todo if i not in results]
    return results


def test_damaged_stores_are_refused_never_a_crash(tmp_path):
    store = tmp_path / "store.lmdb"
    values = [value(i) for i in range(COUNT)]
    records.write_lmdb(store, values)
    data = store.read_bytes()
    kinds = page_kinds(data)
    assert {"branch", "leaf", "overflow", "overflow data"} <= set(kinds), kinds
    where = [data.find(v) for v in values]  # each value's bytes, inline or on overflow pages
    assert all(w > 0 for w in where)

    cases = mutants(data, random.Random(0))
    assert len(cases) >= 300
    paths = []
    for n, (_, damaged, _) in enumerate(cases):
        paths.append(str(tmp_path / f"damaged{n:03d}.lmdb"))
        with open(paths[-1], "wb") as f:
            f.write(damaged)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    results = run_workers(paths, env)

    failures, outcomes = [], {}
    for n, (what, _, hit) in enumerate(cases):
        result, path = results[n], paths[n]

        def clear(kind, message):  # one line, naming the file
            return kind == "RuntimeError" and path in message and "\n" not in message

        if "crash" in result:
            failures.append(f"{what}: crashed ({result['crash']})")
        elif "refused" in result:
            outcomes[what] = "refused"
            if not clear(*result["refused"]):
                failures.append(f"{what}: unclear error {result['refused']}")
        elif len(result["opened"]) != COUNT:
            failures.append(f"{what}: {len(result['opened'])} records, not {COUNT}")
        else:
            outcomes[what] = "read"
            for i, item in enumerate(result["opened"]):
                own_bytes = any(where[i] <= at < where[i] + len(values[i]) for at in hit)
                if item[0] == "error":
                    if not clear(item[1], item[2]):
                        failures.append(f"{what}: record {i}: unclear error {item[1:]}")
                elif (bytes.fromhex(item[1]), item[2]) != (image(i), i % 10) and not own_bytes:
                    failures.append(f"{what}: record {i} reads wrong, its bytes undamaged")
    assert not failures, f"{len(failures)} of {len(cases)}:\n" + "\n".join(failures[:20])
    # A store cut short, or with a page of LMDB's own structure zeroed, never opens.
    for what, outcome in outcomes.items():
        if what.startswith("cut") or ("zeroed" in what and "overflow data" not in what):
            assert outcome == "refused", what


def test_store_error_messages(tmp_path):
    path = tmp_path / "store.lmdb"
    records.write_lmdb(path, [value(i) for i in range(COUNT)])
    data = path.read_bytes()

    def refused(damaged, match):
        path.write_bytes(damaged)
        with pytest.raises(RuntimeError, match=f"^\\[LMDBDataset\\] {path}: {match}"):
            records.LMDBImageDataset(path, shape=SHAPE)

    pages = len(data) // PAGE
    refused(data[:-PAGE], f"file is {len(data) - PAGE} bytes but its meta page says the last "
                          f"page is {pages - 1} \\(page size 4096\\)")
    refused(data[:100], "file is 100 bytes, too short for an LMDB meta page")
    refused(b"\0" * 3 * PAGE, "page 0 is not a meta page")
    refused(data[:16] + b"\0\0\0\0" + data[20:], "not an LMDB file \\(meta page 0 has magic 0x0\\)")
    refused(data[:20] + b"\2\0\0\0" + data[24:], "LMDB data format version 2 in meta page 0")
    kinds = page_kinds(data)
    leaf = kinds.index("leaf")
    damaged = bytearray(data)
    struct.pack_into("<H", damaged, leaf * PAGE + 16, PAGE - 4)  # node 0 at the page's last bytes
    refused(bytes(damaged), f"page {leaf}: node 0 at offset 4092 lies outside the node area")
    branch = kinds.index("branch")
    first, second = struct.unpack_from("<HH", data, branch * PAGE + 16)
    damaged = bytearray(data)  # the branch's second child made its first again
    damaged[branch * PAGE + second:branch * PAGE + second + 6] = \
        data[branch * PAGE + first:branch * PAGE + first + 6]
    child = struct.unpack_from("<I", data, branch * PAGE + first)[0]
    refused(bytes(damaged), f"page {child} is reached twice \\(a cycle or a shared page\\)")
    overflow = kinds.index("overflow")
    damaged = bytearray(data)
    struct.pack_into("<H", damaged, overflow * PAGE + 10, 2)  # no longer an overflow page
    refused(bytes(damaged), f"overflow page {overflow} of key \"000000[0-9][0-9]\" has page number")

    # A file cut short after it was opened: refused at the next read, not a SIGBUS.
    path.write_bytes(data)
    ds = records.LMDBImageDataset(path, shape=SHAPE)
    assert ds[0][1] == 0
    with open(path, "r+b") as f:
        f.truncate(3 * PAGE)
    with pytest.raises(RuntimeError, match="the file changed since it was opened"):
        ds[1]
