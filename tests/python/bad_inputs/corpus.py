"""The bad-input corpus: tables of calls that must fail cleanly (PyTorch's OpInfo `error_inputs`
idea, applied to ops, files, the loader, modules, optimizers and tools).

A case is one call with what it must raise: the exception type PyTorch (or Python) raises for the
same mistake, the name of the op or function the message must mention, and the offending values it
must quote. Each table lives in a test_*.py module of this folder as a list named CASES and is run by
`check`; test_corpus_size.py counts the rows of every table."""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, Sequence, Tuple, Type, Union

import pytest

ExcTypes = Union[Type[BaseException], Tuple[Type[BaseException], ...]]


@dataclasses.dataclass(frozen=True)
class Bad:
    id: str                        # short, unique within its table: the pytest id
    call: Callable[[], object]     # the bad call; must raise
    exc: ExcTypes                  # the type PyTorch raises for the same mistake
    names: str                     # the op or function the message must name
    values: Sequence[str] = ()     # substrings quoting the offending values


def check(case: Bad) -> None:
    """Runs the call; it must raise case.exc with a one-line message naming case.names and each of
    case.values. Anything else - no error, another type, a vague message - fails the test."""
    with pytest.raises(case.exc) as info:
        case.call()
    message = str(info.value)
    assert message.strip(), f"{case.id}: empty message from {type(info.value).__name__}"
    assert case.names.lower() in message.lower(), \
        f"{case.id}: message does not name {case.names!r}: {message!r}"
    for value in case.values:
        assert value in message, f"{case.id}: message does not quote {value!r}: {message!r}"
    assert "incompatible function arguments" not in message, \
        f"{case.id}: pybind11's overload dump instead of a one-line TypeError: {message!r}"


def parametrize(cases: Sequence[Bad]):
    """pytest.mark.parametrize over a table, with each row's id; duplicate ids are a table bug."""
    ids = [c.id for c in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"duplicate case ids: {duplicates}"
    return pytest.mark.parametrize("case", cases, ids=ids)
