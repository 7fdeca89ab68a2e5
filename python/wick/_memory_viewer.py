"""wick.memory.viewer: a snapshot as one self-contained HTML page (the page is
_memory_viewer_page.py). The snapshot goes in as JSON; the replays under the compared policies
are computed here, with the allocators themselves, since the page cannot run them."""

import html
import json

from wick import _memory_viewer_page as page


def _data(snapshot, compare):
    from wick import memory
    if not isinstance(compare, (list, tuple)) or not all(isinstance(p, str) for p in compare):
        raise TypeError(f"viewer(): compare must be a list of policy names; got {compare!r}")
    for p in compare:
        if p not in memory.policies():
            raise ValueError(f"viewer(): unknown allocator policy {p!r} "
                             f"(known: {', '.join(memory.policies())})")
    events = memory.trace_from_snapshot(snapshot)
    # On alloc_replay's simulated 80 GiB device (bfc takes nearly all of it, as TensorFlow does).
    runs = [memory.timeline(events, p) for p in compare] if events else []
    keep = ("device", "policy", "max_entries", "dropped_entries", "segments", "device_traces")
    return {"snapshot": {k: snapshot[k] for k in keep if k in snapshot}, "compare": runs}


def render(snapshot, compare=("caching", "bfc_growth"), title="wick memory snapshot"):
    """The page as a string."""
    data = json.dumps(_data(snapshot, compare), separators=(",", ":"))
    # Inside <script>, only "</" could end the element early; JSON allows "<\/" for it.
    data = data.replace("</", "<\\/")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{page.STYLE}</style></head><body>"
            + page.BODY.format(title=html.escape(title))
            + f'<script type="application/json" id="data">{data}</script>'
            + f"<script>{page.SCRIPT}</script></body></html>\n")


def write(snapshot, path, compare=("caching", "bfc_growth")):
    text = render(snapshot, compare)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return str(path)
