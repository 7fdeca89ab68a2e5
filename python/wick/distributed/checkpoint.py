"""Sharded checkpoints of FSDP models: each rank writes only its shard, and a checkpoint written
by N ranks loads on M ranks (resharding).

    save_sharded(model, optimizer, "ckpt")     # ckpt/metadata.json, ckpt/shard-00001-of-00004.wick
    load_sharded(model, optimizer, "ckpt")     # any world size; the same model structure

Note [resharding]
A unit's flat vector is the same whatever the world size; only its padding and the slice each
rank keeps change. So loading concatenates the N saved slices of each unit, cuts the old padding
off (metadata.json records every unit's true size), pads for the new world size and keeps this
rank's slice - for the parameters and for every optimizer state tensor shaped like the shard
(SGD's momentum, Adam's moments); step counts and options are the same on every rank and come
from shard 0. Each rank reads every shard file here, which is simple and costs one whole model
of memory while loading; PyTorch's torch.distributed.checkpoint reads only the byte ranges a rank
needs.
"""

import json
import os

import wick
from wick import _C
from wick.distributed.fsdp._unit import FullyShardedDataParallel

_d = _C._distributed

__all__ = ["save_sharded", "load_sharded"]

_FORMAT = "wick-fsdp-sharded-1"


def _units(model):
    fsdp = [(path, m) for path, m in model.named_modules()
            if isinstance(m, FullyShardedDataParallel)]
    units = [(path, m) for path, m in fsdp if m._numel > 0]  # containers of units hold nothing
    if not fsdp:
        raise TypeError("sharded checkpoints hold FullyShardedDataParallel models; got "
                        f"{type(model).__name__} with no FSDP unit")
    return units


def _shard_file(path, rank, world):
    return os.path.join(path, f"shard-{rank:05d}-of-{world:05d}.wick")


def save_sharded(model, optimizer, path):
    """Collective: every rank writes its shard of model (and of optimizer's state) under path."""
    if optimizer is not None and not hasattr(optimizer, "state_dict"):
        raise TypeError(f"save_sharded: optimizer must be a wick.optim optimizer or None; got "
                        f"{type(optimizer).__name__}")
    rank, world = _d.get_rank(), _d.get_world_size()
    units = _units(model)
    if rank == 0:
        os.makedirs(path, exist_ok=True)
    _d.barrier(False)
    shard = {"units": {path_: unit._flat_param.detach() for path_, unit in units}}
    if optimizer is not None:
        shard["optimizer"] = optimizer.state_dict()
    if rank == 0:
        shard["buffers"] = {name: b for name, b in model.named_buffers()}
    wick.save(shard, _shard_file(path, rank, world))
    if rank == 0:
        metadata = {"format": _FORMAT, "world_size": world,
                    "units": {p: {"numel": u._numel, "shard_numel": u._shard_numel}
                              for p, u in units}}
        with open(os.path.join(path, "metadata.json"), "w") as f:
            json.dump(metadata, f, indent=1)
    _d.barrier(False)  # the checkpoint is complete when save_sharded returns on any rank


def _read_metadata(path, units):
    name = "load_sharded"
    meta_file = os.path.join(path, "metadata.json")
    if not os.path.isfile(meta_file):
        raise FileNotFoundError(f"{name}: {meta_file} does not exist (not a sharded checkpoint "
                                "written by save_sharded?)")
    with open(meta_file) as f:
        try:
            meta = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{name}: {meta_file} is not valid JSON: {e}") from None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise ValueError(f"{name}: {meta_file} is not a {_FORMAT} checkpoint")
    saved = meta.get("units", {})
    if not isinstance(saved, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("numel"), int) and
            isinstance(v.get("shard_numel"), int) for v in saved.values()):
        raise ValueError(f"{name}: {meta_file} has malformed 'units' (expected "
                         f"{{path: {{'numel': int, 'shard_numel': int}}}}); got {saved!r:.200}")
    mine = {p: u._numel for p, u in units}
    if set(saved) != set(mine) or any(saved[p]["numel"] != n for p, n in mine.items()):
        raise ValueError(f"{name}: the checkpoint's units do not match the model's: saved "
                         f"{ {p: v['numel'] for p, v in saved.items()} }, model {mine}")
    world = meta.get("world_size")
    if not isinstance(world, int) or world < 1:
        raise ValueError(f"{name}: {meta_file} has an invalid world_size {world!r}")
    return meta


def _reshard(pieces, numel, unit):
    """Note [resharding]: this rank's slice of the vector the saved pieces form."""
    whole = wick.cat([p.reshape(-1) for p in pieces])[:numel]
    lo = unit.rank * unit._shard_numel
    padded = wick.zeros((unit._padded,), dtype=whole.dtype)
    padded[:numel].copy_(whole)
    return padded[lo:lo + unit._shard_numel].clone()


def _check_shard(shard, file, units, meta):
    """A shard holds each unit's slice: a 1-D tensor of the saved shard size (checked before
    anything is copied, so a bad shard leaves the model as it was)."""
    slices = shard.get("units") if isinstance(shard, dict) else None
    if not isinstance(slices, dict):
        raise ValueError(f"load_sharded: {file} is not a shard written by save_sharded (no "
                         f"'units')")
    for p, _ in units:
        t = slices.get(p)
        expected = (meta["units"][p]["shard_numel"],)
        if not isinstance(t, _C.Tensor) or tuple(t.shape) != expected:
            got = tuple(t.shape) if isinstance(t, _C.Tensor) else type(t).__name__
            raise ValueError(f"load_sharded: {file} holds {got} for unit '{p}'; metadata.json "
                             f"says each shard holds {expected}")
    return shard


def load_sharded(model, optimizer, path):
    """Loads what save_sharded wrote, at this or any other world size (Note [resharding])."""
    units = _units(model)
    meta = _read_metadata(path, units)
    old_world = meta["world_size"]
    shards = []
    for r in range(old_world):
        f = _shard_file(path, r, old_world)
        if not os.path.isfile(f):
            raise FileNotFoundError(f"load_sharded: {f} is missing; the checkpoint was written "
                                    f"by {old_world} ranks")
        shards.append(_check_shard(wick.load(f), f, units, meta))
    with wick.no_grad():
        for p, unit in units:
            pieces = [s["units"][p] for s in shards]
            unit._flat_param.copy_(_reshard(pieces, unit._numel, unit))
        buffers = dict(model.named_buffers())
        for name, value in shards[0].get("buffers", {}).items():
            if name in buffers:
                buffers[name].copy_(value)
    if optimizer is not None:
        if "optimizer" not in shards[0]:
            raise ValueError(f"load_sharded: {path} holds no optimizer state")
        flat_params = [u._flat_param for _, u in units]
        order = {id(p): i for i, p in enumerate(model.parameters())}
        unit_of_index = {order[id(fp)]: u for fp, (_, u) in zip(flat_params, units)}
        state = {}
        for index, entries in shards[0]["optimizer"]["state"].items():
            unit = unit_of_index.get(index)
            state[index] = {}
            for key, value in entries.items():
                old_shape = (meta["units"][_path_of(units, unit)]["shard_numel"],) if unit else None
                if isinstance(value, _C.Tensor) and unit is not None and \
                        tuple(value.shape) == old_shape:
                    pieces = [s["optimizer"]["state"][index][key] for s in shards]
                    state[index][key] = _reshard(pieces, unit._numel, unit)
                else:
                    state[index][key] = value
        optimizer.load_state_dict({"state": state,
                                   "param_groups": shards[0]["optimizer"]["param_groups"]})
    _d.barrier(False)


def _path_of(units, unit):
    return next(p for p, u in units if u is unit)
