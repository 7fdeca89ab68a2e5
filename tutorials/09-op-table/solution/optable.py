"""Lab 09: the op table - one description per op, and what it lets you build.

wick describes every op with a kernel once, in core/ops/op_list.h; wick._C._ops() hands the
same rows to Python as dicts (name, family, inputs, typed attrs, dtype rule, autocast policy,
backward, the devices with a kernel). Here you read the table the way a test generator, a
coverage report or a compiler does, and you add an op the way most ops are added: as a
composition of ops that are already in the table, so it runs on every device and differentiates
for free."""

import wick
from wick import _C

FLOATING = ("float16", "bfloat16", "float32", "float64")


def ops():
    """The op table: a dict from op name to its row."""
    return {op["name"]: op for op in _C._ops()}


def result_dtype(op, dtype):
    """The dtype a unary op's output has for an input of `dtype` (a name such as "int64"), by its
    row's dtype rule; None when the rule rejects the input (the op raises TypeError)."""
    rule = op["dtype_rule"]
    # BEGIN SOLUTION: floating: ints compute in float32; numeric: anything but bool; bool: bool out
    if rule == "floating":
        return dtype if dtype in FLOATING else "float32"
    if rule == "numeric":
        return None if dtype == "bool" else dtype
    if rule == "bool":
        return "bool"
    return dtype
    # END SOLUTION


def ops_without_kernel(table, device):
    """The names of the ops that have no kernel on `device` ("cpu", "cuda"), in table order:
    on that device they run through the CPU fallback (Note [operator fallback])."""
    # BEGIN SOLUTION: each row's "kernels" lists the devices that registered one
    return [name for name, op in table.items() if device not in op["kernels"]]
    # END SOLUTION


def softplus(x, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, as torch.nn.functional.softplus: linear (x itself) where
    beta x > threshold, and without overflow for large x or loss of digits for very negative x.
    Compose it from table ops (exp, log1p, where, ...): no new kernel, and autograd follows."""
    # BEGIN SOLUTION: log1p(exp(z)) keeps digits when exp(z) is tiny; where() picks x past threshold
    z = x * beta
    safe = wick.where(z > threshold, wick.zeros_like(z), z)  # exp never sees a huge argument
    return wick.where(z > threshold, x, wick.log1p(wick.exp(safe)) / beta)
    # END SOLUTION


def table_markdown(table):
    """A Markdown table of the ops: | op | family | dtype rule | autocast | backward |, one row
    per op in table order, after a header and its |---| line (a docs page generated from the
    table, never out of date)."""
    # BEGIN SOLUTION: one header, one separator, then one line per op
    lines = ["| op | family | dtype rule | autocast | backward |", "|---|---|---|---|---|"]
    for name, op in table.items():
        lines.append(f"| {name} | {op['family']} | {op['dtype_rule']} | {op['autocast']} | "
                     f"{op['backward'] or '-'} |")
    return "\n".join(lines)
    # END SOLUTION
