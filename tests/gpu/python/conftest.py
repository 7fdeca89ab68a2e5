"""pytest set-up for the Python GPU tests: import wick from the source tree (python/) and the
extension from $WICK_BUILD_DIR (else build/), as tests/python/conftest.py does."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build"))
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
if os.path.isdir(os.path.join(BUILD, "python", "wick")):
    sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(BUILD, "python")]
