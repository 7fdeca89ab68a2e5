"""wick.nn.parallel.DistributedDataParallel: PyTorch's DDP for wick's Python modules.

    dist.init_process_group("mpi")
    model = DistributedDataParallel(Net())     # rank 0's parameters and buffers on every rank
    loss = F.cross_entropy(model(x), y)        # x: this rank's shard of the batch
    loss.backward()                            # gradients averaged over ranks, in buckets
    optimizer.step()

The gradient work is done by the C++ Reducer (distributed/reducer.h: buckets in reverse
parameter order, the first 1 MiB and the rest bucket_cap_mb; each bucket's all-reduce launched
from post-accumulate-grad hooks as soon as its gradients are ready, overlapping the rest of
backward); this class gathers the parameters, runs the forward and prepares the Reducer.
"""

import contextlib

from wick import _C
from wick.nn.modules import Module

_d = _C._distributed

__all__ = ["DistributedDataParallel"]


def _find_tensors(obj, out):
    if isinstance(obj, _C.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _find_tensors(item, out)
    elif isinstance(obj, dict):
        for item in obj.values():
            _find_tensors(item, out)
    return out


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=25,
                 find_unused_parameters=False, gradient_as_bucket_view=False,
                 static_graph=False):
        super().__init__()
        if process_group is not None and process_group is not _d.default_group():
            raise ValueError("wick has only the default process group; pass process_group=None")
        if dim != 0:
            raise ValueError("DistributedDataParallel: only dim=0 is supported")
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        # PyTorch's parameter list: those that require grad, each shared one once.
        names, params, seen = [], [], set()
        for name, p in module.named_parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                names.append(name)
                params.append(p)
        self._buffers_to_sync = [b for _, b in module.named_buffers()]
        # Replicas start equal: check the shapes, then copy rank 0's state to every rank.
        _d.verify_same_shapes(params + self._buffers_to_sync, "parameters and buffers")
        _d.broadcast_coalesced(params + self._buffers_to_sync, 0)
        self.reducer = _d.Reducer(params, names, bucket_cap_mb=float(bucket_cap_mb),
                                  find_unused_parameters=find_unused_parameters)

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers and self.require_backward_grad_sync and self._buffers_to_sync:
            _d.broadcast_coalesced(self._buffers_to_sync, 0)
        output = self.module(*inputs, **kwargs)
        if _C.is_grad_enabled():
            self.reducer.prepare_for_backward(_find_tensors(output, []),
                                              self.require_backward_grad_sync)
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside only accumulate gradients locally; the first synchronised
        backward after it reduces the accumulated sum."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
