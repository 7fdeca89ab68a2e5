"""wick.records: TFRecord framing and tf.train.Example records, against files TensorFlow wrote
(tests/fixtures/tfrecord/, made by make_tfrecord_fixtures.py), so TensorFlow is not needed here:
wick reads TensorFlow's files, decodes what TensorFlow decoded, and writes them back byte for
byte. Then indexes, the three datasets, and every way a file can be damaged."""

import base64
import hashlib
import json
import os
import shutil
import struct

import numpy as np
import pytest

import wick
from wick import records
from wick.utils.data import DataLoader

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures",
                        "tfrecord")
DIGITS = os.path.join(FIXTURES, "digits.tfrecord")
FEATURES = os.path.join(FIXTURES, "features.tfrecord")


def mnist_test_digits(n):
    mnist = wick.datasets.MNIST(train=False)
    return ([mnist[i][0] for i in range(n)], [mnist[i][1] for i in range(n)])


def as_explicit(values):
    if values is None:
        return ("none", [])
    if isinstance(values, list):
        return ("bytes", values)
    return ("float" if values.dtype == np.float32 else "int64", values)


def rewrite(source, target):
    with records.TFRecordWriter(target) as w:
        for record in records.tf_record_iterator(source):
            features = records.decode_example(record)
            w.write(records.encode_example({k: as_explicit(v) for k, v in features.items()}))
    return open(target, "rb").read()


# --- checksums and framing -------------------------------------------------------------------

def test_crc32c_known_values():
    # RFC 3720 (iSCSI) test vectors and the classic check value.
    assert wick._C._data.crc32c(b"123456789") == 0xE3069283
    assert wick._C._data.crc32c(bytes(32)) == 0x8A9136AA
    assert wick._C._data.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert wick._C._data.crc32c(bytes(range(32))) == 0x46DD794E
    assert wick._C._data.crc32c(b"") == 0


def test_written_file_is_the_framing(tmp_path):
    payloads = [b"", b"x", bytes(range(256)) * 5]
    with records.TFRecordWriter(tmp_path / "a.tfrecord") as w:
        for p in payloads:
            w.write(p)
        assert w.records_written == 3
    data = open(tmp_path / "a.tfrecord", "rb").read()
    mask, crc = wick._C._data.mask_crc, wick._C._data.crc32c
    offset = 0
    for p in payloads:
        (length,) = struct.unpack_from("<Q", data, offset)
        assert length == len(p)
        assert struct.unpack_from("<I", data, offset + 8)[0] == mask(crc(data[offset:offset + 8]))
        assert data[offset + 12:offset + 12 + length] == p
        assert struct.unpack_from("<I", data, offset + 12 + length)[0] == mask(crc(p))
        offset += 16 + length
    assert offset == len(data)
    assert list(records.tf_record_iterator(tmp_path / "a.tfrecord")) == payloads


# --- TensorFlow's files ----------------------------------------------------------------------

def test_reads_tensorflows_digits():
    images, labels = mnist_test_digits(64)
    decoded = [records.decode_example(r) for r in records.tf_record_iterator(DIGITS)]
    assert len(decoded) == 64
    for features, image, label in zip(decoded, images, labels):
        assert sorted(features) == ["image", "label"]
        pixels = np.frombuffer(features["image"][0], np.uint8).reshape(1, 28, 28)
        np.testing.assert_array_equal(pixels.astype(np.float32) / np.float32(255), image.numpy())
        assert features["label"].tolist() == [label]


def _summary(value):
    if len(value) <= 1024:
        return base64.b64encode(value).decode()
    return "sha256:" + hashlib.sha256(value).hexdigest()


def test_decodes_what_tensorflow_decoded():
    expected = json.load(open(os.path.join(FIXTURES, "features.json"), encoding="utf-8"))
    got = [records.decode_example(r) for r in records.tf_record_iterator(FEATURES)]
    assert len(got) == len(expected) == 8
    for features, want in zip(got, expected):
        assert set(features) == set(want)
        for name, (kind, values) in want.items():
            value = features[name]
            if kind == "none":
                assert value is None
            elif kind == "bytes":
                assert [_summary(v) for v in value] == values
            elif kind == "float":
                assert value.dtype == np.float32
                assert [struct.pack("<f", v).hex() for v in value] == values  # bit-exact: NaN, -0
            else:
                assert value.dtype == np.int64 and [str(v) for v in value] == values


@pytest.mark.parametrize("name", ["digits.tfrecord", "features.tfrecord"])
def test_writes_tensorflows_bytes(tmp_path, name):
    source = os.path.join(FIXTURES, name)
    assert rewrite(source, tmp_path / name) == open(source, "rb").read()


def test_encoding_conveniences():
    a = records.encode_example({"label": 3, "name": "seven", "w": [0.5, 1.0],
                                "v": np.arange(3, dtype=np.float64)})
    back = records.decode_example(a)
    assert back["label"].tolist() == [3] and back["name"] == [b"seven"]
    assert back["w"].dtype == np.float32 and back["w"].tolist() == [0.5, 1.0]
    assert back["v"].tolist() == [0.0, 1.0, 2.0]
    # Keys are sorted as TensorFlow's Python protobuf sorts them: a longer key before its prefix.
    order = records.encode_example({"a": 1, "ab": 2, "": 3, "b": 4})
    positions = [order.index(b"\n\x02ab"), order.index(b"\n\x01a"), order.index(b"\n\x01b")]
    assert positions == sorted(positions) and order.index(b"\n\x00") > positions[-1]


def test_decoder_accepts_any_protobuf_writer():
    # Unpacked repeated scalars, an unknown field, the map entry's value before its key.
    ints_unpacked = b"\x08\x05" + b"\x08\x7f"                  # Int64List.value = 5, 127
    floats_unpacked = b"\x0d" + struct.pack("<f", 2.5)         # FloatList.value = 2.5
    feature_i = b"\x1a" + bytes([len(ints_unpacked)]) + ints_unpacked
    feature_f = b"\x12" + bytes([len(floats_unpacked)]) + floats_unpacked
    entry_i = b"\x12" + bytes([len(feature_i)]) + feature_i + b"\x0a\x01i"   # value, then key
    entry_f = b"\x0a\x01f\x12" + bytes([len(feature_f)]) + feature_f + b"\x18\x01"  # unknown 3
    fmap = b"\x0a" + bytes([len(entry_i)]) + entry_i + b"\x0a" + bytes([len(entry_f)]) + entry_f
    example = b"\x0a" + bytes([len(fmap)]) + fmap + b"\x10\x07"  # unknown field 2 after
    got = records.decode_example(example)
    assert got["i"].tolist() == [5, 127] and got["f"].tolist() == [2.5]


@pytest.mark.parametrize("data,words", [
    (b"\x0a\x05\x0a\x03", "runs past the end"),
    (b"\x0a", "ends inside a varint"),
    (b"\x0b", "wire type 3"),
    (b"\x0a\x04\x0a\x02\x12\x05", "runs past the end"),
    (b"\x00", "field number 0"),
    (b"\x0a" + b"\xff" * 11, "varint longer"),
    (b"\x0a\x0e\x0a\x0c\x0a\x01f\x12\x07\x12\x05\x0a\x03abc", "not a multiple of 4"),
    (b"\x0a\x0a\x0a\x08\x0a\x01f\x12\x03\x12\x01\x0d", "ends inside a 32-bit field"),
])
def test_decoder_rejects_corrupt_examples(data, words):
    with pytest.raises(RuntimeError, match=words):
        records.decode_example(data)


def test_encoder_rejects_bad_features():
    with pytest.raises(TypeError, match="'x' is an empty list"):
        records.encode_example({"x": []})
    with pytest.raises(TypeError, match="mixes"):
        records.encode_example({"x": [1, b"a"]})
    with pytest.raises(TypeError, match="feature names are str"):
        records.encode_example({1: [1]})
    with pytest.raises(ValueError, match="kind 'str'"):
        records.encode_example({"x": ("str", ["a"])})
    with pytest.raises(TypeError, match="must be a dict"):
        records.encode_example([("x", 1)])
    with pytest.raises(TypeError, match="a record is bytes"):
        records.decode_example("text")
    with pytest.raises(TypeError, match="a record is bytes"):
        records.TFRecordWriter("/dev/null").write("text")
    assert records.decode_example(records.encode_example({"x": ("int64", [])}))["x"].size == 0


# --- indexes and datasets --------------------------------------------------------------------

def test_index_and_random_access(tmp_path):
    shard = str(tmp_path / "digits.tfrecord")
    shutil.copy(DIGITS, shard)
    index = records.record_index(shard)
    assert len(index) == 64 and index[0][0] == 0
    assert all(o2 == o1 + 16 + n1 for (o1, n1), (o2, _) in zip(index, index[1:]))
    everything = list(records.tf_record_iterator(shard))
    ds = records.TFRecordDataset(shard)
    assert len(ds) == 64 and ds[10] == everything[10] and ds[-1] == everything[-1]
    with pytest.raises(IndexError, match="index 64 is out of range for 64"):
        ds[64]
    idx = records.write_index(shard)
    assert open(idx).read().splitlines()[1] == f"{index[1][0]} {index[1][1]}"
    parsed = records.TFRecordDataset([shard, FEATURES], parse=records.decode_example)
    assert len(parsed) == 72 and parsed[64]["label"].tolist() == [3]


def test_stale_and_bad_indexes(tmp_path):
    shard = str(tmp_path / "s.tfrecord")
    shutil.copy(DIGITS, shard)
    records.write_index(shard)
    with open(shard, "ab") as f:  # appended to after indexing
        f.write(open(DIGITS, "rb").read()[:100])
    with pytest.raises(RuntimeError, match="s.tfrecord.idx is stale"):
        records.TFRecordDataset(shard)
    for text, words in [("0 821\nx y\n", "line 2 is not"), ("5 821\n", "starts at byte 5"),
                        ("0 99999999\n", "lies past the end"), ("0 -3\n", "line 1 is not")]:
        shutil.copy(DIGITS, shard)
        open(shard + ".idx", "w").write(text)
        with pytest.raises(RuntimeError, match=words):
            records.TFRecordDataset(shard)


def test_image_dataset_equals_mnist_through_the_cpp_loader():
    images, labels = mnist_test_digits(64)
    ds = records.TFRecordImageDataset(DIGITS, shape=(1, 28, 28))
    assert len(ds) == 64 and ds._cpp is not None
    image, label = ds[5]
    assert label == labels[5] and image.shape == (1, 28, 28)
    assert wick.equal(image, images[5])
    batches = list(DataLoader(ds, batch_size=16, num_workers=2))
    assert len(batches) == 4
    got = wick.cat([b[0] for b in batches])
    assert wick.equal(got, wick.stack(images)) and wick.cat([b[1] for b in batches]).tolist() == labels


def test_image_dataset_reports_the_record(tmp_path):
    with records.TFRecordWriter(tmp_path / "bad.tfrecord") as w:
        w.write(records.encode_example({"image": [bytes(784)], "label": 1}))
        w.write(records.encode_example({"image": [bytes(783)], "label": 2}))
        w.write(records.encode_example({"pixels": [bytes(784)], "label": 3}))
        w.write(b"\xff\xff")
    ds = records.TFRecordImageDataset(tmp_path / "bad.tfrecord", shape=(1, 28, 28))
    assert ds[0][1] == 1
    with pytest.raises(RuntimeError, match=r"bad.tfrecord: record 1: feature \"image\" must hold 784"):
        ds[1]
    with pytest.raises(RuntimeError, match=r"record 2 has no feature \"image\""):
        ds[2]
    with pytest.raises(RuntimeError, match="record 3 is not a valid tf.train.Example"):
        ds[3]
    with pytest.raises(RuntimeError, match="record 1"):  # through the loader's threads too
        list(DataLoader(ds, batch_size=2, num_workers=2))


def test_streaming_dataset_shuffles_every_record_once():
    plain = list(records.StreamingRecordDataset(DIGITS))
    assert plain == list(records.tf_record_iterator(DIGITS))
    ds = records.StreamingRecordDataset([DIGITS, FEATURES], shuffle_buffer=16, seed=3)
    first = list(ds)
    assert sorted(first) == sorted(plain + list(records.tf_record_iterator(FEATURES)))
    assert first != plain + list(records.tf_record_iterator(FEATURES))
    assert list(ds) == first  # same epoch, same order
    ds.set_epoch(1)
    assert list(ds) != first
    with pytest.raises(ValueError, match="shuffle_buffer must be an int >= 0"):
        records.StreamingRecordDataset(DIGITS, shuffle_buffer=-1)


def test_streaming_dataset_splits_among_workers():
    ds = records.StreamingRecordDataset([DIGITS, DIGITS, FEATURES], shuffle_buffer=8,
                                        parse=lambda r: len(r))
    sizes = [int(x) for b in DataLoader(ds, batch_size=5, num_workers=2) for x in b]
    expected = [len(r) for f in (DIGITS, DIGITS, FEATURES) for r in records.tf_record_iterator(f)]
    assert sorted(sizes) == sorted(expected)
    one_shard = records.StreamingRecordDataset(DIGITS, parse=lambda r: len(r))
    assert len([x for b in DataLoader(one_shard, batch_size=7, num_workers=3) for x in b]) == 64


# --- damaged files ---------------------------------------------------------------------------

def damaged(tmp_path, change):
    data = bytearray(open(DIGITS, "rb").read())
    data = change(data)
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(bytes(data))
    return str(path)


def read_all(path):
    return list(records.tf_record_iterator(path))


def test_flipped_payload_byte_names_the_record(tmp_path):
    offset = records.record_index(DIGITS)[3][0]

    def flip(d):
        d[offset + 12 + 100] ^= 0x10
        return d
    path = damaged(tmp_path, flip)
    with pytest.raises(RuntimeError, match=f"damaged.tfrecord: record 3 at byte {offset} is corrupt"):
        read_all(path)
    ds = records.TFRecordDataset(path)  # the index only checks lengths...
    assert ds[2] == read_all(DIGITS)[2]
    with pytest.raises(RuntimeError, match="record 3 .* data checksum"):  # ...reading checks data
        ds[3]


def test_flipped_length_byte_is_caught_before_it_is_trusted(tmp_path):
    offset = records.record_index(DIGITS)[5][0]

    def flip(d):
        d[offset + 6] ^= 0x40  # a length of ~2^54 bytes, unless its checksum is checked first
        return d
    with pytest.raises(RuntimeError, match=f"record 5 at byte {offset} has a corrupt length"):
        read_all(damaged(tmp_path, flip))


def test_huge_length_with_a_valid_checksum_is_a_truncation(tmp_path):
    header = struct.pack("<Q", 1 << 60)
    header += struct.pack("<I", wick._C._data.mask_crc(wick._C._data.crc32c(header)))
    path = tmp_path / "huge.tfrecord"
    path.write_bytes(header + b"abc")
    with pytest.raises(RuntimeError, match="is truncated: record 0 at byte 0 says 1152921504606846976"):
        read_all(path)


@pytest.mark.parametrize("cut", [1, 5, 11, 12, 400, 836])
def test_truncated_file(tmp_path, cut):
    size = os.path.getsize(DIGITS)
    path = damaged(tmp_path, lambda d: d[:size - cut])
    with pytest.raises(RuntimeError, match="damaged.tfrecord is truncated: record 63"):
        read_all(path)
    with pytest.raises(RuntimeError, match="truncated: record 63"):
        records.TFRecordDataset(path)


def test_missing_and_odd_files(tmp_path):
    with pytest.raises(RuntimeError, match="cannot open .*nope.tfrecord: No such file"):
        read_all(tmp_path / "nope.tfrecord")
    with pytest.raises(RuntimeError, match="is not a regular file"):
        read_all(tmp_path)
    with pytest.raises(RuntimeError, match="cannot create"):
        records.TFRecordWriter(tmp_path / "no" / "such" / "dir.tfrecord")
    empty = tmp_path / "empty.tfrecord"
    empty.write_bytes(b"")
    assert read_all(empty) == [] and len(records.TFRecordDataset(empty)) == 0
    w = records.TFRecordWriter(tmp_path / "closed.tfrecord")
    w.close()
    w.close()  # twice is fine
    with pytest.raises(RuntimeError, match="after close"):
        w.write(b"x")
    with pytest.raises(ValueError, match="at least one file"):
        records.TFRecordDataset([])
