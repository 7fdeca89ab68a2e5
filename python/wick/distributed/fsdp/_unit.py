"""FullyShardedDataParallel: one unit of a fully sharded model (ZeRO-3; ZeRO-2 with SHARD_GRAD_OP).

Note [FSDP units]
A unit owns the parameters of the module it wraps that no nested unit owns. Flattened in
registration order and padded to a multiple of the world size N, they form one flat vector of
which rank r keeps only the slice [r*S, (r+1)*S), S = padded / N: the unit's `_flat_param`, the
one Parameter the optimizer sees. So parameters, gradients and optimizer state all cost 1/N per
rank between steps. While the unit runs, the whole vector lives in `_full`, filled by one
all-gather; the module's attributes (`linear.weight`) are views into it, leaves that require grad.

    forward:   gather _full (or wait for the prefetch started by the unit before) -> run ->
               free _full's bytes (FULL_SHARD; SHARD_GRAD_OP keeps them until after backward)
    backward:  the first gradient reaching the unit's outputs (a tensor hook) gathers _full again;
               when every view's gradient has accumulated (post-accumulate-grad hooks), the
               gradients are flattened, reduce-scattered with AVG into this rank's slice, added to
               _flat_param.grad, and _full is freed.

Autograd saved views of the parameters during forward, and those views must see the gathered
values in backward, so freeing keeps the Storage object and drops only its bytes
(Tensor._free_storage, Note [freed storage] in core/storage.h; PyTorch's storage.resize_(0)).

Note [FSDP prefetch]
Units record the order their forwards ran in (the root keeps it). With forward_prefetch, a unit
starts the asynchronous all-gather of the next unit before running its own module; with
backward_prefetch=BACKWARD_PRE, a unit's pre-backward starts the gather of the unit that ran
before it in forward (the next one backward reaches). Every rank runs the same code, so every
rank launches the same collectives in the same order, as MPI and NCCL require. On MPI the
gather advances on the group's progress thread while this thread computes.

Not here (said in docs/distributed.md): NO_SHARD (that is DDP), no_sync() (each backward
reduce-scatters and adds into the shard's gradient instead), mixed dtypes within one unit, and
parameters that get no gradient (the next forward raises, naming the unit, instead of stepping
with a stale gradient).
"""

import contextlib
import enum
import math

import wick
from wick import _C
from wick.nn.modules import Module
from wick.nn.parallel import _find_tensors
from wick.nn.parameter import Parameter

_d = _C._distributed

_WRAPPED = "_fsdp_wrapped_module"


class ShardingStrategy(enum.Enum):
    FULL_SHARD = 1  # ZeRO-3: parameters, gradients and optimizer state sharded
    SHARD_GRAD_OP = 2  # ZeRO-2: parameters whole from forward until after backward
    NO_SHARD = 3  # DDP: not implemented here (use DistributedDataParallel)


class BackwardPrefetch(enum.Enum):
    BACKWARD_PRE = 1


def clean_name(name):
    """A parameter's name in the model as it was before wrapping."""
    return name.replace(_WRAPPED + ".", "").replace("." + _WRAPPED, "").replace(_WRAPPED, "")


class _RunState:
    """Shared by the units of one root: the forward order (Note [FSDP prefetch])."""

    def __init__(self):
        self.order = []  # the units as the last complete forward ran them
        self.running = []


class _ParamSlot:
    def __init__(self, name, owners, shape, offset, numel, requires_grad):
        self.name = name  # relative to the wrapped module
        self.owners = owners  # (module, attribute) pairs: a shared parameter has several
        self.shape = shape
        self.offset = offset
        self.numel = numel
        self.requires_grad = requires_grad
        self.view = None


def _own_parameters(module):
    """(name, owner, attribute, parameter) of module's parameters outside nested units."""
    found = []

    def visit(m, prefix):
        for attr, p in m._parameters.items():
            if p is not None:
                found.append((prefix + attr, m, attr, p))
        for child_name, child in m._modules.items():
            if child is not None and not isinstance(child, FullyShardedDataParallel):
                visit(child, prefix + child_name + ".")

    visit(module, "")
    return found


def _auto_wrap(module, policy, kwargs):
    for name, child in list(module._modules.items()):
        if child is None or isinstance(child, FullyShardedDataParallel):
            continue
        _auto_wrap(child, policy, kwargs)
        numel = sum(p.numel() for _, _, _, p in _own_parameters(child))
        if policy(module=child, recurse=False, nonwrapped_numel=numel):
            module._modules[name] = FullyShardedDataParallel(child, **kwargs)


class FullyShardedDataParallel(Module):
    """PyTorch's FSDP for wick modules on the default process group (Note [FSDP units]).

        model = FullyShardedDataParallel(Net(), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
        optimizer = wick.optim.SGD(model.parameters(), lr=0.1)   # the flat shards
        loss = F.cross_entropy(model(x), y); loss.backward(); optimizer.step()
    """

    def __init__(self, module, process_group=None, sharding_strategy=None, auto_wrap_policy=None,
                 backward_prefetch=BackwardPrefetch.BACKWARD_PRE, forward_prefetch=False,
                 sync_module_states=False, device_id=None, use_orig_params=False):
        super().__init__()
        if process_group is not None and process_group is not _d.default_group():
            raise ValueError("FullyShardedDataParallel: wick has only the default process group; "
                             "pass process_group=None")
        if not isinstance(module, Module):
            raise TypeError("FullyShardedDataParallel: module must be a wick.nn.Module; got "
                            f"{type(module).__name__}")
        if isinstance(module, FullyShardedDataParallel):
            raise ValueError("FullyShardedDataParallel: the module is already an FSDP unit")
        strategy = ShardingStrategy.FULL_SHARD if sharding_strategy is None else sharding_strategy
        if not isinstance(strategy, ShardingStrategy):
            raise TypeError("FullyShardedDataParallel: sharding_strategy must be a "
                            f"ShardingStrategy; got {sharding_strategy!r}")
        if strategy is ShardingStrategy.NO_SHARD:
            raise NotImplementedError("FullyShardedDataParallel: NO_SHARD is plain data "
                                      "parallelism; use wick.nn.parallel.DistributedDataParallel")
        if backward_prefetch not in (None, BackwardPrefetch.BACKWARD_PRE):
            raise ValueError("FullyShardedDataParallel: backward_prefetch must be BACKWARD_PRE "
                             f"or None; got {backward_prefetch!r}")
        self.sharding_strategy = strategy
        self.forward_prefetch = bool(forward_prefetch)
        self.backward_prefetch = backward_prefetch
        self.rank, self.world_size = _d.get_rank(), _d.get_world_size()
        if auto_wrap_policy is not None:
            _auto_wrap(module, auto_wrap_policy, dict(
                sharding_strategy=strategy, backward_prefetch=backward_prefetch,
                forward_prefetch=forward_prefetch, sync_module_states=sync_module_states))
        self._fsdp_wrapped_module = module
        self._state = _RunState()
        self._is_root = True
        self._all_units = [self]
        for m in module.modules():
            if isinstance(m, FullyShardedDataParallel):
                m._is_root = False
                m._state = self._state
                self._all_units.append(m)
        self._flatten(sync_module_states)

    # ---- construction ----

    def _flatten(self, sync_module_states):
        found = _own_parameters(self._fsdp_wrapped_module)
        slots, by_id, tensors = [], {}, []
        for name, owner, attr, p in found:
            if id(p) in by_id:  # a shared parameter: one slot, several owners
                by_id[id(p)].owners.append((owner, attr))
                continue
            offset = sum(s.numel for s in slots)
            slot = _ParamSlot(name, [(owner, attr)], tuple(p.shape), offset, p.numel(),
                              p.requires_grad)
            by_id[id(p)] = slot
            slots.append(slot)
            tensors.append(p)
        dtypes = {p.dtype for p in tensors}
        devices = {str(p.device) for p in tensors}
        if len(dtypes) > 1 or len(devices) > 1:
            raise ValueError(f"FullyShardedDataParallel({type(self._fsdp_wrapped_module).__name__})"
                             f": a unit flattens parameters of one dtype and device; got "
                             f"{sorted(map(str, dtypes))} on {sorted(devices)} - wrap the "
                             "submodules that differ as units of their own")
        if sync_module_states and tensors:
            _d.broadcast_coalesced(tensors, 0)
        self._slots = slots
        self._numel = sum(s.numel for s in slots)
        n = self.world_size
        self._shard_numel = math.ceil(self._numel / n) if self._numel else 0
        self._padded = self._shard_numel * n
        dtype = tensors[0].dtype if tensors else wick.float32
        device = tensors[0].device if tensors else wick.device("cpu")
        with wick.no_grad():
            full = wick.zeros((self._padded,), dtype=dtype, device=device)
            for slot, p in zip(slots, tensors):
                full[slot.offset:slot.offset + slot.numel].copy_(p.detach().reshape(-1))
            lo = self.rank * self._shard_numel
            shard = full[lo:lo + self._shard_numel].clone()
        self._full = full
        flat_param = Parameter(shard, requires_grad=any(s.requires_grad for s in slots))
        if slots:
            self._flat_param = flat_param
        else:  # a unit with nothing of its own (a container of units) gives the optimizer nothing
            self.__dict__["_flat_param"] = flat_param
        for slot in slots:
            view = full[slot.offset:slot.offset + slot.numel].view(slot.shape)
            if slot.requires_grad:
                view.requires_grad_(True)
                view.register_post_accumulate_grad_hook(self._on_view_grad)
            slot.view = view
            for owner, attr in slot.owners:
                del owner._parameters[attr]
                owner.__dict__[attr] = view
        self._expected_grads = sum(1 for s in slots if s.requires_grad)
        self._ready_grads = 0
        self._gather_work = None
        self._full_ready = True
        self._pre_backward_done = False
        self._grads_reduced = False
        self._flat_grad = None
        self._reshard()

    # ---- gathering and freeing the whole parameters ----

    def _prefetch(self):
        if self._grads_reduced:
            # A backward prefetch reaching a unit whose backward is over (the root's parameters
            # are used everywhere): gathered now, it would hold pre-step values after the
            # optimizer's update. The next forward gathers it.
            return
        self._start_gather()

    def _start_gather(self):
        if self._full_ready or self._gather_work is not None or not self._padded:
            return
        self._full._alloc_storage()
        self._gather_work = _d.all_gather_into_tensor(self._full, self._flat_param.detach(), True)

    def _unshard(self):
        if self._full_ready:
            return
        self._start_gather()
        if self._gather_work is not None:
            self._gather_work.wait()
            self._gather_work = None
        self._full_ready = True

    def _reshard(self):
        if self._gather_work is not None:  # never free bytes a collective still writes
            self._gather_work.wait()
            self._gather_work = None
        if self._padded:
            self._full._free_storage()
        self._full_ready = False

    # ---- forward ----

    def forward(self, *args, **kwargs):
        if 0 < self._ready_grads < self._expected_grads:
            missing = [s.name for s in self._slots if s.requires_grad and s.view.grad is None]
            raise RuntimeError(
                f"FullyShardedDataParallel({type(self._fsdp_wrapped_module).__name__}): the last "
                f"backward gave no gradient to {missing}; FSDP reduces a unit's gradients once "
                "all have arrived, so every parameter must take part in the loss")
        state = self._state
        if self._is_root:
            state.running = []
            # Whole parameters still held from the last step predate the optimizer's update of
            # the shards (a prefetch can even gather a unit whose backward is over): drop them.
            for unit in self._all_units:
                unit._reshard()
                unit._grads_reduced = False
        previous_order = state.order
        state.running.append(self)
        self._unshard()
        if self.forward_prefetch and self in previous_order:
            i = previous_order.index(self)
            if i + 1 < len(previous_order):
                previous_order[i + 1]._prefetch()
        grad = _C.is_grad_enabled()
        self._pre_backward_done = False
        output = self._fsdp_wrapped_module(*args, **kwargs)
        if grad:
            for t in _find_tensors(output, []):
                if t.requires_grad:
                    t.register_hook(self._pre_backward_hook)
        keep_for_backward = grad and (self._is_root or
                                      self.sharding_strategy is ShardingStrategy.SHARD_GRAD_OP)
        if not keep_for_backward:
            self._reshard()
        if self._is_root:
            state.order = state.running
        return output

    # ---- backward ----

    def _pre_backward_hook(self, grad):
        if self._pre_backward_done:
            return None
        self._pre_backward_done = True
        self._unshard()
        self._prepare_flat_grad()
        order = self._state.order
        if self.backward_prefetch is not None and self in order:
            i = order.index(self)
            if i > 0:
                order[i - 1]._prefetch()
        return None

    def _prepare_flat_grad(self):
        """The views' .grad become views of one zeroed flat buffer, so backward accumulates
        straight into what the reduce-scatter sends (one whole copy fewer at the peak)."""
        if self._flat_grad is not None or not self._expected_grads:
            return
        with wick.no_grad():
            self._flat_grad = wick.zeros((self._padded,), dtype=self._full.dtype,
                                         device=self._full.device)
            for slot in self._slots:
                if slot.requires_grad and slot.view.grad is None:
                    slot.view.grad = self._flat_grad[slot.offset:slot.offset + slot.numel].view(
                        slot.shape)

    def _on_view_grad(self, view):
        self._ready_grads += 1
        if self._ready_grads == self._expected_grads:
            self._reduce_gradients()

    def _reduce_gradients(self):
        with wick.no_grad():
            flat = self._flat_grad
            if flat is None:  # the backward did not start at the unit's outputs
                flat = wick.zeros((self._padded,), dtype=self._full.dtype,
                                  device=self._full.device)
                for slot in self._slots:
                    if slot.view.grad is not None:
                        flat[slot.offset:slot.offset + slot.numel].copy_(
                            slot.view.grad.reshape(-1))
            for slot in self._slots:
                slot.view.grad = None
            self._flat_grad = None
            shard = wick.empty((self._shard_numel,), dtype=flat.dtype, device=flat.device)
            _d.reduce_scatter_tensor(shard, flat, _d.ReduceOp.AVG, False)
            if self._flat_param.grad is None:
                self._flat_param.grad = shard
            else:
                self._flat_param.grad.add_(shard)
        self._ready_grads = 0
        self._grads_reduced = True
        self._reshard()

    # ---- whole parameters on demand ----

    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(module, writeback=True):
        """Inside, every unit under `module` holds its whole parameters (the module's attributes
        read as in the unwrapped model); on exit, with writeback, each rank copies its slice of
        what is there back into its shard, then the whole parameters are freed again."""
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        for unit in units:  # whole parameters still held may predate an optimizer step
            unit._reshard()
        for unit in units:
            unit._unshard()
        try:
            yield module
        finally:
            for unit in units:
                if writeback and unit._padded:
                    lo = unit.rank * unit._shard_numel
                    with wick.no_grad():
                        unit._flat_param.copy_(unit._full[lo:lo + unit._shard_numel])
                unit._reshard()

    def full_state_dict(self):
        """The unwrapped model's state_dict (names without _fsdp_wrapped_module), on every rank:
        parameters gathered, buffers as this rank holds them."""
        result = {}
        with FullyShardedDataParallel.summon_full_params(self, writeback=False):
            for path, unit in self.named_modules():
                if not isinstance(unit, FullyShardedDataParallel):
                    continue
                for slot in unit._slots:
                    name = ".".join(p for p in (path, _WRAPPED, slot.name) if p)
                    result[clean_name(name)] = slot.view.detach().clone()
            for name, buffer in self.named_buffers():
                result[clean_name(name)] = buffer.detach().clone()
        return result

    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        """Clips the gradients of every shard by their total norm over all ranks (the shards'
        padding is zero, so it adds nothing)."""
        if float(norm_type) != 2.0:
            raise ValueError(f"FullyShardedDataParallel.clip_grad_norm_: only norm_type=2 is "
                             f"supported; got {norm_type}")
        grads = [p.grad for p in self.parameters() if p.grad is not None]
        total = wick.zeros((1,), dtype=wick.float64)
        for g in grads:
            total += (g.double() ** 2).sum()
        _d.all_reduce(total, _d.ReduceOp.SUM, False)
        norm = math.sqrt(float(total))
        scale = float(max_norm) / (norm + 1e-6)
        if scale < 1.0:
            with wick.no_grad():
                for g in grads:
                    g.mul_(scale)
        return wick.tensor(norm)

    def extra_repr(self):
        return (f"sharding_strategy={self.sharding_strategy.name}, params={self._numel}, "
                f"shard={self._shard_numel} of {self.world_size}")
