#!/usr/bin/env python3
"""A memory snapshot (wick.memory._dump_snapshot) as one self-contained HTML page.

    /usr/bin/python3 tools/memory_viewer.py snapshot.json memory.html [--compare caching,bfc]

Open the page in any browser, offline: allocated memory over the history stacked by owner (the
op and module that allocated it) under the reserved line, the segment map at the moment the
slider picks, and the same allocations replayed under two policies side by side. Exit status 2
with one line on stderr for a bad snapshot or policy."""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BUILD = os.path.join(ROOT, os.environ.get("WICK_BUILD_DIR", "build"), "python")
if os.path.isdir(os.path.join(_BUILD, "wick")):
    sys.path[:0] = [os.path.join(ROOT, "python"), _BUILD]

import wick  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("snapshot", help="snapshot JSON (wick.memory._dump_snapshot)")
    parser.add_argument("output", help="the HTML file to write")
    parser.add_argument("--compare", default="caching,bfc_growth",
                        help="two policies to replay the history under (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        snapshot = wick.memory.load_snapshot(args.snapshot)
        wick.memory.viewer(snapshot, args.output, compare=args.compare.split(","))
    except (OSError, ValueError, TypeError) as e:
        print(f"memory_viewer: {e}", file=sys.stderr)
        return 2
    print(f"memory_viewer: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
