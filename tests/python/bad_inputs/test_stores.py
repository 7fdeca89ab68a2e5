"""Bad inputs to the record and image stores: TFRecord files (writer, reader, index files),
tf.train.Example encoding and decoding, TFRecordDataset / TFRecordImageDataset /
StreamingRecordDataset, ImageFolder and the MNIST / CIFAR-10 readers. LMDB stores are tested in
their own fuzzer.

How the types were checked: PyTorch has no TFRecord reader, so those rows use Python's convention
(TypeError for a wrong type, ValueError for a bad value, IndexError for an index) and the rule
of wick.records' docstring, which TensorFlow's DataLossError inspired: a corrupt or truncated
record file is a RuntimeError naming the file, the record and its byte offset. The image rows
follow torchvision 0.14's (torchvision.io.decode_image: RuntimeError for an undecodable file;
datasets.MNIST / CIFAR10: RuntimeError when the files are not there)."""

import atexit
import os
import shutil
import struct
import tempfile

import numpy as np

from wick import _C, datasets, records

from bad_inputs.corpus import Bad, check, parametrize

_DIR = tempfile.mkdtemp(prefix="wick-bad-stores-")
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)


def _path(*parts):
    return os.path.join(_DIR, *parts)


def _file(name, data):
    path = _path(name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data):
    """TFRecord's masked CRC-32C, so a test can write a header whose checksum is right."""
    c = _crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


# Three records of 4 raw pixels and a label each.
_GOOD = _path("good.tfrecord")
with records.TFRecordWriter(_GOOD) as _w:
    for _i in range(3):
        _w.write(records.encode_example({"image": [bytes(range(4))], "label": [_i]}))
with open(_GOOD, "rb") as _f:
    _BYTES = _f.read()


def _flipped(name, at):
    data = bytearray(_BYTES)
    data[at] ^= 0xFF
    return _file(name, bytes(data))


def _header_claiming(name, length):
    """One record whose length (with a correct length checksum) runs past the end of the file."""
    header = struct.pack("<Q", length)
    return _file(name, header + struct.pack("<I", _masked_crc(header)) + b"hello" + b"\0" * 4)


def _with_index(name, index_text):
    shard = _file(name, _BYTES)
    _file(name + ".idx", index_text.encode())
    return shard


_TRUNCATED = _file("truncated.tfrecord", _BYTES[:-3])
_HEADER_CUT = _file("header-cut.tfrecord", _BYTES[:5])
_LENGTH_CRC = _flipped("length-crc.tfrecord", 8)
_DATA_CRC = _flipped("data-crc.tfrecord", 14)
_GARBAGE = _file("garbage.tfrecord", b"hello world, this is not a record file")
_HUGE = _header_claiming("huge-length.tfrecord", 2**62)
_ALL_ONES = _header_claiming("all-ones-length.tfrecord", 2**64 - 1)
_IDX_TEXT = _with_index("idx-text.tfrecord", "hello\n")
_IDX_OFFSET = _with_index("idx-offset.tfrecord", "5 10\n")
_IDX_PAST_END = _with_index("idx-past-end.tfrecord", "0 99999\n")
_IDX_NEGATIVE = _with_index("idx-negative.tfrecord", "-1 10\n")

_NOT_AN_IMAGE = _file("folder-text/cat/a.png", b"not a png at all")
_BAD_JPEG = _file("folder-jpeg/dog/a.jpg", b"\xff\xd8\xff\xe0 garbage")
_BAD_PNG = _file("folder-png/dog/a.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 10)


def _writer_after_close():
    w = records.TFRecordWriter(_path("closed.tfrecord"))
    w.close()
    w.write(b"x")


def _read_all(path):
    return list(records.tf_record_iterator(path))


def _image(shape=(4,), **kwargs):
    return records.TFRecordImageDataset(_GOOD, shape, **kwargs)


def _folder(name):
    return datasets.ImageFolder(os.path.dirname(os.path.dirname(name)))


WRITER_AND_READER = [
    Bad("writer-write-str", lambda: records.TFRecordWriter(_path("w.tfrecord")).write("abc"),
        TypeError, "TFRecordWriter.write", ["str"]),
    Bad("writer-write-after-close", _writer_after_close, RuntimeError, "tfrecord",
        ["after close()"]),
    Bad("read-truncated-record", lambda: _read_all(_TRUNCATED), RuntimeError, "tfrecord",
        ["truncated.tfrecord", "record 2"]),
    Bad("read-header-cut", lambda: _read_all(_HEADER_CUT), RuntimeError, "tfrecord",
        ["record 0", "inside its header"]),
    Bad("read-length-checksum", lambda: _read_all(_LENGTH_CRC), RuntimeError, "tfrecord",
        ["length-crc.tfrecord", "corrupt length"]),
    Bad("read-data-checksum", lambda: _read_all(_DATA_CRC), RuntimeError, "tfrecord",
        ["data-crc.tfrecord", "data checksum"]),
    Bad("read-not-a-record-file", lambda: _read_all(_GARBAGE), RuntimeError, "tfrecord",
        ["garbage.tfrecord", "record 0"]),
    Bad("read-length-2-62-valid-crc", lambda: _read_all(_HUGE), RuntimeError, "tfrecord",
        ["4611686018427387904 bytes", "truncated"]),
    Bad("read-length-all-ones-valid-crc", lambda: _read_all(_ALL_ONES), RuntimeError,
        "tfrecord", ["18446744073709551615 bytes"]),
    Bad("index-truncated", lambda: records.record_index(_TRUNCATED), RuntimeError, "tfrecord",
        ["truncated"]),
    Bad("index-huge-length", lambda: records.record_index(_HUGE), RuntimeError, "tfrecord",
        ["4611686018427387904"]),
]

EXAMPLES = [
    # The C++ encoder below records.py's checks: values NumPy cannot convert.
    Bad("encode-cpp-strings-as-int64", lambda: _C._data.encode_example({"a": (3, ["x"])}),
        TypeError, "encode_example", ["int64", "['x']"]),
    Bad("encode-not-a-dict", lambda: records.encode_example([1]), TypeError, "encode_example",
        ["list"]),
    Bad("encode-int-name", lambda: records.encode_example({1: [1]}), TypeError,
        "encode_example", ["got 1"]),
    Bad("encode-empty-list", lambda: records.encode_example({"a": []}), TypeError,
        "encode_example", ["'a'", "empty list"]),
    Bad("encode-mixed-kinds", lambda: records.encode_example({"a": [1, b"x"]}), TypeError,
        "encode_example", ["'a'", "bytes", "int"]),
    Bad("encode-none", lambda: records.encode_example({"a": None}), TypeError,
        "encode_example", ["NoneType"]),
    Bad("encode-nested-list", lambda: records.encode_example({"a": [[1, 2]]}), TypeError,
        "encode_example", ["list"]),
    Bad("encode-unknown-kind", lambda: records.encode_example({"a": ("complex", [1])}),
        ValueError, "encode_example", ["'complex'"]),
    Bad("encode-complex-array", lambda: records.encode_example(
        {"a": np.zeros(2, dtype=np.complex64)}), TypeError, "encode_example", ["complex64"]),
    # silent: these reached the C++ encoder, which raised pybind11's "error_already_set called
    # while Python error indicator not set" or an overload dump instead of naming the value.
    Bad("encode-int64-declared-holds-str", lambda: records.encode_example({"a": ("int64", ["x"])}),
        TypeError, "encode_example", ["'int64'", "'x'"]),
    Bad("encode-float-declared-holds-bytes",
        lambda: records.encode_example({"a": ("float", [b"x"])}), TypeError, "encode_example",
        ["'float'", "b'x'"]),
    Bad("encode-int64-declared-holds-float",
        lambda: records.encode_example({"a": ("int64", [1.5])}), TypeError, "encode_example",
        ["1.5"]),
    Bad("encode-bytes-declared-holds-int", lambda: records.encode_example({"a": ("bytes", [3])}),
        TypeError, "encode_example", ["'bytes'", "3 (int)"]),
    Bad("encode-int-beyond-int64", lambda: records.encode_example({"a": [2**70]}), ValueError,
        "encode_example", ["1180591620717411303424"]),
    Bad("encode-declared-int-beyond-int64",
        lambda: records.encode_example({"a": ("int64", [-2**63 - 1])}), ValueError,
        "encode_example", ["-9223372036854775809"]),
    Bad("decode-str", lambda: records.decode_example("abc"), TypeError, "decode_example",
        ["str"]),
    Bad("decode-unfinished-varint", lambda: records.decode_example(b"\xff\xff\xff\xff"),
        RuntimeError, "tf.train.Example", ["varint"]),
    Bad("decode-field-past-end",
        lambda: records.decode_example(records.encode_example({"a": [b"hello"]})[:-2]),
        RuntimeError, "tf.train.Example", ["past the end"]),
    Bad("decode-wrong-wire-type", lambda: records.decode_example(b"\x0f"), RuntimeError,
        "tf.train.Example", ["wire type 7"]),
]

DATASETS = [
    Bad("dataset-no-files", lambda: records.TFRecordDataset([]), ValueError, "TFRecord",
        ["at least one file"]),
    Bad("dataset-index-past-end", lambda: records.TFRecordDataset(_GOOD)[3], IndexError,
        "TFRecordDataset", ["index 3", "3 records"]),
    Bad("dataset-index-too-negative", lambda: records.TFRecordDataset(_GOOD)[-4], IndexError,
        "TFRecordDataset", ["index -4"]),
    Bad("dataset-index-str", lambda: records.TFRecordDataset(_GOOD)["a"], TypeError,
        "TFRecordDataset", ["str"]),
    Bad("dataset-index-float", lambda: records.TFRecordDataset(_GOOD)[1.5], TypeError,
        "TFRecordDataset", ["1.5"]),
    Bad("dataset-truncated-shard", lambda: records.TFRecordDataset(_TRUNCATED), RuntimeError,
        "tfrecord", ["truncated.tfrecord"]),
    Bad("dataset-index-file-text", lambda: records.TFRecordDataset(_IDX_TEXT), RuntimeError,
        "tfrecord", ["idx-text.tfrecord.idx", "line 1", "hello"]),
    Bad("dataset-index-file-other-offsets", lambda: records.TFRecordDataset(_IDX_OFFSET),
        RuntimeError, "tfrecord", ["byte 5", "another file"]),
    Bad("dataset-index-file-past-end", lambda: records.TFRecordDataset(_IDX_PAST_END),
        RuntimeError, "tfrecord", ["99999 bytes", "past the end"]),
    Bad("dataset-index-file-negative", lambda: records.TFRecordDataset(_IDX_NEGATIVE),
        RuntimeError, "tfrecord", ["-1 10"]),
    Bad("stream-buffer-negative", lambda: records.StreamingRecordDataset(_GOOD, shuffle_buffer=-1),
        ValueError, "StreamingRecordDataset", ["-1"]),
    Bad("stream-buffer-float", lambda: records.StreamingRecordDataset(_GOOD, shuffle_buffer=1.5),
        TypeError, "StreamingRecordDataset", ["1.5"]),
    Bad("stream-no-files", lambda: records.StreamingRecordDataset([]), ValueError, "TFRecord",
        ["at least one file"]),
    Bad("stream-truncated-shard", lambda: list(records.StreamingRecordDataset(_TRUNCATED)),
        RuntimeError, "tfrecord", ["truncated"]),
    Bad("image-shape-mismatch", lambda: _image((3, 4, 4))[0], RuntimeError, "TFRecordDataset",
        ["48 pixels", "(3, 4, 4)"]),
    Bad("image-shape-negative", lambda: _image((-1, 4)), ValueError, "TFRecordImageDataset",
        ["(-1, 4)"]),
    Bad("image-shape-zero", lambda: _image((0, 4)), ValueError, "TFRecordImageDataset",
        ["(0, 4)"]),
    # silent: the product wrapped in C++ ("must hold 0 pixels for shape (2**62, 4)").
    Bad("image-shape-overflow", lambda: _image((2**62, 4)), RuntimeError,
        "TFRecordImageDataset", ["overflow", "4611686018427387904"]),
    Bad("image-shape-beyond-64-bits", lambda: _image((2**64 + 4,)), RuntimeError,
        "TFRecordImageDataset", ["18446744073709551620"]),
    Bad("image-shape-str", lambda: _image("ab"), TypeError, "TFRecordImageDataset", ["'ab'"]),
    Bad("image-shape-float", lambda: _image((2.5, 4)), TypeError, "TFRecordImageDataset",
        ["2.5"]),
    Bad("image-no-image-feature", lambda: _image(image_key="img")[0], RuntimeError,
        "TFRecordDataset", ['"img"', "record 0"]),
    Bad("image-no-label-feature", lambda: _image(label_key="y")[0], RuntimeError,
        "TFRecordDataset", ['"y"']),
    Bad("image-label-is-bytes", lambda: _image(label_key="image")[0], RuntimeError,
        "TFRecordDataset", ["one int64"]),
    Bad("image-index-past-end", lambda: _image()[5], IndexError, "TFRecordDataset",
        ["index 5"]),
]

IMAGES = [
    Bad("imagefolder-mode", lambda: datasets.ImageFolder(_DIR, mode="RGBA"), ValueError,
        "ImageFolder", ["'RGBA'"]),
    Bad("imagefolder-not-an-image", lambda: _folder(_NOT_AN_IMAGE)[0], RuntimeError,
        "decode_image", ["a.png", "neither a PNG nor a JPEG"]),
    Bad("imagefolder-corrupt-jpeg", lambda: _folder(_BAD_JPEG)[0], RuntimeError, "decode_image",
        ["a.jpg", "corrupt JPEG"]),
    Bad("imagefolder-truncated-png", lambda: _folder(_BAD_PNG)[0], RuntimeError, "decode_image",
        ["a.png", "not a readable PNG"]),
    Bad("imagefolder-index-past-end", lambda: _folder(_NOT_AN_IMAGE)[3], IndexError,
        "ImageFolder", ["index 3"]),
    Bad("mnist-no-files", lambda: datasets.MNIST(_path("no-mnist")), RuntimeError, "mnist",
        ["train-images-idx3-ubyte", "no-mnist"]),
    Bad("cifar10-no-files", lambda: datasets.CIFAR10(_path("no-cifar")), RuntimeError,
        "cifar10", ["data_batch_1.bin", "no-cifar"]),
    Bad("mnist-index-past-end", lambda: datasets.MNIST()[10**9], IndexError, "mnist",
        ["1000000000"]),
    Bad("mnist-index-str", lambda: datasets.MNIST()["a"], TypeError, "Dataset.__getitem__",
        ["str"]),
]

CASES = WRITER_AND_READER + EXAMPLES + DATASETS + IMAGES


@parametrize(CASES)
def test_bad_input(case):
    check(case)
