"""wick.records: TFRecord files and tf.train.Example records, byte-compatible with TensorFlow.

    with wick.records.TFRecordWriter("digits-00000-of-00002.tfrecord") as w:     # tf.io.TFRecordWriter
        w.write(wick.records.encode_example({"image": [png_or_raw_bytes], "label": [7]}))
    for record in wick.records.tf_record_iterator(path):                       # TF 1.x's iterator
        features = wick.records.decode_example(record)

LMDB stores of the same Example records: LMDBWriter / write_lmdb and LMDBImageDataset.

Three ways to read shards, for three kinds of pipeline:
  - TFRecordImageDataset: map-style images and labels served by the C++ reader (so the C++
    DataLoader can run it on its threads); random access through a per-shard index.
  - TFRecordDataset: map-style, each item a record's bytes (or parse(bytes)), random access too.
  - StreamingRecordDataset: an IterableDataset reading shards front to back with a shuffle buffer,
    tf.data's and WebDataset's design: no index, sequential reads only, an approximate shuffle.

The framing, the CRC-32C and the Example encoding are C++ (data/records/); a corrupt or truncated
file raises RuntimeError naming the file, the record and its byte offset.
"""

import numbers
import os
import random

from wick import _C
from wick.datasets import _CppVisionDataset
from wick.utils.data._worker import get_worker_info
from wick.utils.data.dataset import Dataset
from wick.utils.data.iterable import IterableDataset

_BYTES, _FLOAT, _INT64 = 1, 2, 3  # the Feature oneof's field numbers


class TFRecordWriter:
    """Writes records to a new TFRecord file (tf.io.TFRecordWriter); a context manager."""

    def __init__(self, path):
        self._writer = _C._data.TFRecordWriter(os.fspath(path))

    def write(self, record):
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(f"TFRecordWriter.write: a record is bytes; got {type(record).__name__}")
        self._writer.write(bytes(record))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    @property
    def records_written(self):
        return self._writer.records_written

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def tf_record_iterator(path):
    """Yields the records of one file in order (tf.compat.v1.io.tf_record_iterator)."""
    file = _C._data.TFRecordFile(os.fspath(path))
    while (record := file.next()) is not None:
        yield record


def record_index(path):
    """[(offset, length)] of every record in the file, from one scan of its headers."""
    return _C._data.TFRecordFile(os.fspath(path)).record_index()


def write_index(path):
    """Writes `path`.idx ("offset length" per line, DALI's tfrecord2idx layout); returns its
    path. Datasets opened afterwards use it instead of scanning the shard."""
    _C._data.index_tfrecord_shard(os.fspath(path))
    return os.fspath(path) + ".idx"


def _feature_to_wire(name, value):
    import numpy as np  # here, not at the top: `import wick` does not need numpy

    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            return _FLOAT, value.reshape(-1)
        if value.dtype.kind in "iub":
            return _INT64, value.reshape(-1).astype(np.int64)
        raise TypeError(f"encode_example: feature {name!r} is a {value.dtype} array; a feature "
                        f"holds bytes, floats or int64s")
    if isinstance(value, (bytes, str, int, float)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"encode_example: feature {name!r} must be a list of bytes, floats or "
                        f"ints, or a numpy array; got {type(value).__name__}")
    if not value:
        raise TypeError(f"encode_example: feature {name!r} is an empty list, whose kind is "
                        f"unknown; pass ('bytes', []), ('float', []) or ('int64', []), or an "
                        f"empty numpy array")
    kinds = {type(v) for v in value}
    if kinds <= {bytes, str}:
        return _BYTES, [v.encode() if isinstance(v, str) else v for v in value]
    if kinds <= {int, bool}:
        return _INT64, _int64_array(name, value)
    if kinds <= {int, float}:
        return _FLOAT, np.array(value, dtype=np.float32)
    raise TypeError(f"encode_example: feature {name!r} mixes {sorted(k.__name__ for k in kinds)}; "
                    f"a feature holds one kind: bytes, floats or int64s")


def _explicit_values(name, kind_name, kind, values):
    """The values of an explicitly typed feature, checked here: the C++ encoder would see a
    string among floats only as a failed numpy conversion."""
    import numpy as np

    values = list(values)
    if kind == _BYTES:
        values = [v.encode() if isinstance(v, str) else v for v in values]
        wrong = [v for v in values if not isinstance(v, (bytes, bytearray))]
    else:
        wrong = [v for v in values if isinstance(v, (str, bytes, bytearray)) or
                 not isinstance(v, (int, float, np.number))]
        if kind == _INT64:
            wrong += [v for v in values if isinstance(v, (float, np.floating))]
    if wrong:
        raise TypeError(f"encode_example: feature {name!r} is declared {kind_name!r} but holds "
                        f"{wrong[0]!r} ({type(wrong[0]).__name__})")
    if kind == _INT64:
        return _int64_array(name, values)
    return values


def _int64_array(name, values):
    import numpy as np

    too_big = [v for v in values if isinstance(v, int) and not -2**63 <= v < 2**63]
    if too_big:
        raise ValueError(f"encode_example: feature {name!r} holds {too_big[0]}, outside int64's "
                         f"range [-2**63, 2**63)")
    return np.array(values, dtype=np.int64)


def encode_example(features):
    """A serialized tf.train.Example from {name: values}: bytes/str values make a bytes_list,
    ints an int64_list, floats (or a float array) a float_list. An explicit kind, needed for an
    empty list, is a pair: ("bytes" | "float" | "int64", values), or ("none", []) for a feature
    whose kind is unset. Keys are written in sorted
    order, as TensorFlow's SerializeToString(deterministic=True)."""
    if not isinstance(features, dict):
        raise TypeError(f"encode_example: features must be a dict; got {type(features).__name__}")
    wire = {}
    for name, value in features.items():
        if not isinstance(name, str):
            raise TypeError(f"encode_example: feature names are str; got {name!r}")
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
            kind = {"none": 0, "bytes": _BYTES, "float": _FLOAT, "int64": _INT64}.get(value[0])
            if kind is None:
                raise ValueError(f"encode_example: feature {name!r} has kind {value[0]!r}; "
                                 f"expected 'bytes', 'float', 'int64' or 'none' (unset)")
            wire[name] = (kind, _explicit_values(name, value[0], kind, value[1]))
        else:
            wire[name] = _feature_to_wire(name, value)
    return _C._data.encode_example(wire)


def decode_example(record):
    """{name: values} from a serialized tf.train.Example: a list of bytes for a bytes_list, a
    float32 array for a float_list, an int64 array for an int64_list, None for an unset feature."""
    if not isinstance(record, (bytes, bytearray, memoryview)):
        raise TypeError(f"decode_example: a record is bytes; got {type(record).__name__}")
    return {name: values for name, (_, values) in _C._data.decode_example(bytes(record)).items()}


def _shard_list(files):
    files = [os.fspath(files)] if isinstance(files, (str, os.PathLike)) else [os.fspath(f) for f in files]
    if not files:
        raise ValueError("TFRecord datasets need at least one file")
    return files


class TFRecordDataset(Dataset):
    """Map-style: item i is record i of the shards taken in order, as bytes, or parse(bytes).
    Random access comes from each shard's .idx file, or one scan of its headers."""

    def __init__(self, files, parse=None):
        self.files = _shard_list(files)
        self.parse = parse
        self._shards = [_C._data.TFRecordFile(f) for f in self.files]
        self._records = []  # (shard, number in shard, offset, length)
        for s, shard in enumerate(self._shards):
            idx = shard.path + ".idx"
            index = _C._data.read_record_index(idx, shard) if os.path.isfile(idx) else shard.record_index()
            self._records += [(s, n, offset, length) for n, (offset, length) in enumerate(index)]

    def __len__(self):
        return len(self._records)

    def __getitem__(self, index):
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise TypeError(f"TFRecordDataset: an index is an int; got {type(index).__name__} "
                            f"({index!r})")
        if not -len(self) <= index < len(self):
            raise IndexError(f"TFRecordDataset: index {index} is out of range for {len(self)} records")
        shard, number, offset, length = self._records[index]
        record = self._shards[shard].read(offset, length, number)
        return record if self.parse is None else self.parse(record)

    def __getstate__(self):  # open files do not pickle: worker processes reopen the shards
        state = self.__dict__.copy()
        del state["_shards"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._shards = [_C._data.TFRecordFile(f) for f in self.files]


class TFRecordImageDataset(_CppVisionDataset):
    """Images and labels from tf.train.Example shards: the pixels under image_key (raw uint8
    bytes, scaled to [0, 1], or a float list) reshaped to `shape`, an int label under label_key.
    Read by C++, so with C++ transforms the C++ DataLoader serves it from its threads."""

    def __init__(self, files, shape, image_key="image", label_key="label", transform=None,
                 target_transform=None):
        files = _shard_list(files)
        shape = _image_shape(shape, "TFRecordImageDataset")
        self.files, self.shape = files, shape

        def make(root, train, cpp_transform):
            return _C._data.TFRecordImageDataset(files, shape, image_key, label_key, cpp_transform)

        super().__init__(make, files[0], True, transform, target_transform)

    def __repr__(self):
        return (f"Dataset TFRecordImageDataset\n    Number of datapoints: {len(self)}\n"
                f"    Shards: {len(self.files)}\n    Image shape: {tuple(self.shape)}")


def _image_shape(shape, where):
    """shape as a list of ints >= 1 whose product fits int64 (the C++ reader multiplies them)."""
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"{where}: shape must be a sequence of ints; got {shape!r}")
    shape = list(shape)
    numel = 1
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise TypeError(f"{where}: shape must be a sequence of ints; got {tuple(shape)!r}")
        if d < 1:
            raise ValueError(f"{where}: image shape {tuple(shape)} has a dimension < 1")
        numel *= int(d)
    if numel >= 2**63:
        raise RuntimeError(f"{where}: image shape {tuple(shape)} has {numel} elements: overflow "
                           f"of int64")
    return [int(d) for d in shape]


class StreamingRecordDataset(IterableDataset):
    """Records streamed from the shards in order, through a shuffle buffer of `shuffle_buffer`
    records (0: no shuffle), tf.data's Dataset.shuffle: the buffer is filled, then each record
    read replaces a randomly chosen one, which is yielded. A larger buffer mixes better and holds
    more memory; a buffer of the whole dataset is a full shuffle.

    With DataLoader workers, worker w reads shards w, w + W, ... (or, with fewer shards than
    workers, every W-th record of each), so each record is read once per epoch. Call
    set_epoch(e) for a new order each epoch."""

    def __init__(self, files, shuffle_buffer=0, seed=0, parse=None):
        if isinstance(shuffle_buffer, bool) or not isinstance(shuffle_buffer, int):
            raise TypeError(f"StreamingRecordDataset: shuffle_buffer must be an int >= 0; got "
                            f"{shuffle_buffer!r}")
        if shuffle_buffer < 0:
            raise ValueError(f"StreamingRecordDataset: shuffle_buffer must be an int >= 0; got "
                             f"{shuffle_buffer!r}")
        self.files = _shard_list(files)
        self.shuffle_buffer, self.seed, self.parse, self.epoch = shuffle_buffer, seed, parse, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def _my_records(self):
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        if len(self.files) >= workers:
            for path in self.files[worker::workers]:
                yield from tf_record_iterator(path)
        else:
            for path in self.files:
                for n, record in enumerate(tf_record_iterator(path)):
                    if n % workers == worker:
                        yield record

    def __iter__(self):
        info = get_worker_info()
        rng = random.Random(hash((self.seed, self.epoch, 0 if info is None else info.id)))
        buffer = []
        for record in self._my_records():
            if len(buffer) < self.shuffle_buffer:
                buffer.append(record)
                continue
            if self.shuffle_buffer == 0:
                out = record
            else:
                i = rng.randrange(len(buffer))
                out, buffer[i] = buffer[i], record
            yield out if self.parse is None else self.parse(out)
        rng.shuffle(buffer)
        for record in buffer:
            yield record if self.parse is None else self.parse(record)


class LMDBWriter:
    """A new LMDB store at `path` (one file), filled with put(key, value) and made durable by
    commit() (a context manager commits on a clean exit)."""

    def __init__(self, path, map_bytes=1 << 30):
        self._writer = _C._data.LMDBWriter(os.fspath(path), map_bytes)

    def put(self, key, value):
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"LMDBWriter.put: a value is bytes; got {type(value).__name__}")
        self._writer.put(str(key), bytes(value))

    def commit(self):
        self._writer.commit()

    @property
    def entries(self):
        return self._writer.entries

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None:
            self.commit()


def write_lmdb(path, records, map_bytes=1 << 30):
    """Stores serialized Examples under keys "00000000", "00000001", ... (the order
    LMDBImageDataset reads them in); returns how many."""
    with LMDBWriter(path, map_bytes) as w:
        for i, record in enumerate(records):
            w.put(_C._data.lmdb_key(i), record)
    return w.entries


class LMDBImageDataset(_CppVisionDataset):
    """Images and labels from an LMDB store of tf.train.Example records (write_lmdb's layout),
    decoded like TFRecordImageDataset's; read by C++ through LMDB's memory map once the file
    has passed a structural check, so a truncated or damaged store raises RuntimeError naming
    the file instead of crashing inside liblmdb (data/lmdb_check.h)."""

    def __init__(self, path, shape, image_key="image", label_key="label", transform=None,
                 target_transform=None):
        path, shape = os.fspath(path), [int(d) for d in shape]
        self.path, self.shape = path, shape

        def make(root, train, cpp_transform):
            return _C._data.LMDBImageDataset(path, shape, image_key, label_key, cpp_transform)

        super().__init__(make, path, True, transform, target_transform)

    def __repr__(self):
        return (f"Dataset LMDBImageDataset\n    Number of datapoints: {len(self)}\n"
                f"    Path: {self.path}\n    Image shape: {tuple(self.shape)}")
