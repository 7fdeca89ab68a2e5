"""Lab 18: a static memory planner for wick's traced graphs.

A graph (wick.jit.Graph, from wick.jit.trace or wick.compile) lists its values and nodes:

- graph.values[i]: {"id", "kind" ("input", "param", "constant", "internal"), "name", "shape",
  "dtype", "nbytes" (of the storage the value lives on), "base" (the id of the value owning that
  storage: itself for a fresh output, its source for a view or an in-place version)};
- graph.node_info[j]: {"name", "kind" ("kernel", "view", "fused"), "params" (one value id per
  tensor parameter, -1 for none), "roles" ("read", "write" a fresh output, "update" in place),
  "outputs"};
- graph.outputs: the ids the graph returns.

Nodes run in list order. Only internal storages are planned (inputs, parameters and constants
belong to the caller), and not the storages of the graph's outputs, which are returned and so
allocated on each run."""

ALIGNMENT = 64  # bytes: a cache line, and a multiple of every dtype's size


def round_up(nbytes):
    """nbytes rounded up to a multiple of ALIGNMENT (every planned buffer takes this many)."""
    # TODO(18): round_up: the smallest multiple of ALIGNMENT that is >= nbytes
    raise NotImplementedError("round_up: the smallest multiple of ALIGNMENT that is >= nbytes")


def lifetimes(graph):
    """{base id: (first, last)} for every storage to plan: first is the index of the node that
    writes it (its first "write"), last the index of the last node whose params name any value
    on that storage (any role). Leaves' storages and the outputs' storages are left out, and so
    are storages no node writes and empty ones (0 bytes: a batch of 0 has nothing to place)."""
    values = graph.values
    # TODO(18): lifetimes: one pass over the nodes; a param's storage is values[p]["base"]
    raise NotImplementedError("lifetimes: one pass over the nodes; a param's storage is values[p][\"base\"]")


def live_peak(graph, spans):
    """The most bytes (rounded) live at any one node: a lower bound for every plan."""
    values = graph.values
    # TODO(18): live_peak: at each node index, sum round_up(nbytes) of the spans covering it
    raise NotImplementedError("live_peak: at each node index, sum round_up(nbytes) of the spans covering it")


def plan(graph, spans):
    """Greedy by size, as TensorFlow Lite's arena planner: take the storages largest first (by
    nbytes; equal sizes in id order) and put each at the lowest offset where its round_up(nbytes)
    bytes overlap no placed storage whose span overlaps its span (spans are inclusive).
    Returns ({base id: offset}, arena bytes = the largest offset + rounded size)."""
    values = graph.values
    # TODO(18): plan: sort, then for each one scan the busy intervals of overlapping ones by offset
    raise NotImplementedError("plan: sort, then for each one scan the busy intervals of overlapping ones by offset")
