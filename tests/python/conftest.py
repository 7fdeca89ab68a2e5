"""pytest set-up: import wick from the source tree (python/) and the extension from a build tree.

The build folder is $WICK_BUILD_DIR, else build/ (what scripts/build.sh makes); its python/wick/
holds wick._C, which the package finds through pkgutil.extend_path (python/wick/__init__.py). An
installed wick (pip install .) is used when neither is there."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build"))
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
if os.path.isdir(os.path.join(BUILD, "python", "wick")):
    sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(BUILD, "python")]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
