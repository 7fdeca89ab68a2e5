"""Training keeps its memory flat: 20 epochs of the MNIST MLP (scripts/memory_over_epochs.py, in a
process of its own so nothing else in the test run moves its RSS) may grow after the warm-up
epochs by at most a small bound. One step's leaked batch is ~100 KB, 1.6 MiB an epoch, so
a per-step leak shows as over 10 MiB; the bound leaves room for the allocator's noise only.
A run that deliberately leaks (--keep-batches) shows the check can fail."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "memory_over_epochs.py")
WARMUP = 5         # epochs for caches, the allocator and the optimizer's state to settle
BOUND_MIB = 2.0    # growth allowed from the end of the warm-up to the last epoch


def rss_per_epoch(*flags):
    env = dict(os.environ)
    env.setdefault("WICK_BUILD_DIR", "build")
    out = subprocess.run([sys.executable, SCRIPT, "--warmup", str(WARMUP), *flags], env=env,
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def growth_after_warmup(rss):
    return max(rss[WARMUP:]) - rss[WARMUP - 1]


def test_training_memory_is_flat_over_20_epochs():
    result = rss_per_epoch("--epochs", "20")
    rss = result["rss_mib"]
    assert len(rss) == 20
    assert result["loss"][-1] < result["loss"][0]  # it did train
    growth = growth_after_warmup(rss)
    assert growth < BOUND_MIB, "RSS grew %.1f MiB after epoch %d: %s" % (growth, WARMUP, rss)


def test_the_check_notices_a_leak():
    rss = rss_per_epoch("--epochs", "12", "--keep-batches")["rss_mib"]
    assert growth_after_warmup(rss) > BOUND_MIB, rss
