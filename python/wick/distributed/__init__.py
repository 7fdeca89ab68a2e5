"""wick.distributed: process groups and collectives for data-parallel training (torch.distributed).

A job is N processes started by mpirun, one rank each; the "mpi" backend reduces CPU tensors and
"nccl" CUDA tensors (one GPU per rank). The names and arguments are PyTorch's:

    import wick
    import wick.distributed as dist

    dist.init_process_group("mpi")        # mpirun -np 2 python3 train.py
    x = wick.full((4,), float(dist.get_rank() + 1))
    dist.all_reduce(x)                    # every rank: 1 + 2 + ... + N
    dist.destroy_process_group()

all_reduce runs MPI's (NCCL's) algorithm, or wick's own ring (distributed/ring_all_reduce.h) with
init_process_group(..., all_reduce_algorithm="ring") or WICK_ALL_REDUCE_ALGORITHM=ring; sharded
training is in wick.distributed.fsdp (ZeRO-2/3), wick.distributed.optim (ZeRO-1) and
wick.distributed.checkpoint (sharded checkpoints).

Every wait is bounded by the group's timeout (30 s by default): a rank that died or hung makes the
others raise DistBackendError instead of hanging. The C++ side is distributed/process_group.h.
"""

import datetime as _datetime

from wick import _C

_d = _C._distributed

ReduceOp = _d.ReduceOp
Work = _d.Work
DistBackendError = _d.DistBackendError

__all__ = [
    "ReduceOp", "Work", "DistBackendError", "init_process_group", "destroy_process_group",
    "is_available", "is_initialized", "is_mpi_available", "is_nccl_available", "get_rank",
    "get_world_size", "get_backend", "all_reduce", "broadcast", "all_gather",
    "all_gather_into_tensor", "reduce_scatter_tensor", "barrier", "ring_all_reduce", "send_recv",
    "get_all_reduce_algorithm",
]


def is_available():
    """True: wick always has the distributed package (its backends may still be missing)."""
    return True


def is_mpi_available():
    return _d.mpi_built()


def is_nccl_available():
    return _d.nccl_built()


def is_initialized():
    return _d.is_initialized()


def _seconds(timeout):
    if timeout is None:
        return 30.0
    if isinstance(timeout, _datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _check_group(group):
    if group is not None and group is not _d.default_group():
        raise ValueError("wick has only the default process group; pass group=None")


def init_process_group(backend="mpi", init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", device_id=None, all_reduce_algorithm="native"):
    """Joins the ranks mpirun started. backend: "mpi" (CPU tensors) or "nccl" (CUDA tensors).
    all_reduce_algorithm: "native" (the library's) or "ring" (wick's own, for study).

    mpirun decides ranks and addresses, so init_method and store must be None (or "env://");
    world_size and rank, when given, are checked against what mpirun started. timeout is a
    datetime.timedelta or seconds."""
    if init_method not in (None, "env://") or store is not None:
        raise ValueError(f"init_process_group: wick's process groups are set up by mpirun: pass "
                         f"neither init_method nor store (got init_method={init_method!r}), and "
                         f"launch with `mpirun -np N python3 ...`")
    device = -1
    if device_id is not None:
        device = device_id if isinstance(device_id, int) else (device_id.index or 0)
    _d.init_process_group(backend, _seconds(timeout), world_size, device, all_reduce_algorithm)
    if rank not in (-1, None) and rank != _d.get_rank():
        actual = _d.get_rank()
        raise ValueError(f"init_process_group: rank={rank} was passed but mpirun made this "
                         f"process rank {actual}")


def destroy_process_group(group=None):
    _check_group(group)
    _d.destroy_process_group()


def get_rank(group=None):
    _check_group(group)
    return _d.get_rank()


def get_world_size(group=None):
    _check_group(group)
    return _d.get_world_size()


def get_backend(group=None):
    _check_group(group)
    return _d.default_group().backend()


def _result(work, async_op):
    return work if async_op else None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """In place: every rank ends with the sum (avg, max, min) over ranks."""
    _check_group(group)
    return _result(_d.all_reduce(tensor, op, async_op), async_op)


def broadcast(tensor, src=0, group=None, async_op=False):
    """In place: every rank ends with rank src's tensor."""
    _check_group(group)
    return _result(_d.broadcast(tensor, src, async_op), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor (world_size times input's rows) receives every rank's input, in rank order."""
    _check_group(group)
    return _result(_d.all_gather_into_tensor(output_tensor, input_tensor, async_op), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] receives rank r's tensor (one list entry per rank)."""
    _check_group(group)
    world = _d.get_world_size()
    if len(tensor_list) != world:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} entries for a world "
                         f"size of {world}")
    import wick

    flat = wick.empty((world * tensor.numel(),), dtype=tensor.dtype, device=tensor.device)
    work = _d.all_gather_into_tensor(flat, tensor.contiguous().reshape(-1), False)
    for r, out in enumerate(tensor_list):
        out.copy_(flat[r * tensor.numel():(r + 1) * tensor.numel()].reshape(tensor.shape))
    return _result(work, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces input (world_size chunks) over ranks; rank r keeps chunk r in output."""
    _check_group(group)
    return _result(_d.reduce_scatter_tensor(output, input, op, async_op), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    _check_group(group)
    return _result(_d.barrier(async_op), async_op)


def get_all_reduce_algorithm(group=None):
    """"native" or "ring": what all_reduce runs on this group."""
    _check_group(group)
    return _d.default_group().all_reduce_algorithm


def ring_all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """all_reduce by wick's ring of send_recv steps (Note [ring all-reduce]), whatever the
    group's algorithm."""
    _check_group(group)
    return _result(_d.ring_all_reduce(tensor, op, async_op), async_op)


def send_recv(send, dst, recv, src, tag=0, group=None, async_op=False):
    """Sends `send` to rank dst and receives `recv` from rank src at once (MPI_Sendrecv); only the
    ranks involved call it."""
    _check_group(group)
    return _result(_d.send_recv(send, dst, recv, src, tag, async_op), async_op)
