"""The corpus must stay at least MINIMUM cases across its areas (1014 rows when this was last
raised); this counts the rows of every table in this folder, so deleting cases to make a suite
pass shows here."""

import importlib
import pathlib

MINIMUM = 1000


def test_corpus_has_at_least_minimum_cases():
    here = pathlib.Path(__file__).parent
    counts = {}
    for path in sorted(here.glob("test_*.py")):
        if path.stem == "test_corpus_size":
            continue
        module = importlib.import_module(f"bad_inputs.{path.stem}")
        counts[path.stem] = len(getattr(module, "CASES", ()))
    total = sum(counts.values())
    assert total >= MINIMUM, f"bad-input corpus has {total} cases ({counts}); need {MINIMUM}"
