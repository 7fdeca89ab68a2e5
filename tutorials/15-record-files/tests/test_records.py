"""Lab 15's graded tests: the CRC-32C table and checksum against known values and wick's C++
(SSE4.2) one; framing byte-identical to wick.records.TFRecordWriter; reading TensorFlow's own
file, refusing damaged ones with the record's number; an index equal to wick's; protobuf varints
and a tf.train.Example byte-identical to TensorFlow's. Then the figures: checksum speed in Python
against C++, sequential against indexed random reads, and the framing's overhead."""

import os
import random
import shutil
import struct
import time

import pytest
import wick
from labkit import ROOT, figure, impl

L = impl(__file__, "records")
TF_DIGITS = os.path.join(ROOT, "tests", "fixtures", "tfrecord", "digits.tfrecord")


def test_crc32c_table_and_known_values():
    table = L.crc32c_table()
    assert len(table) == 256 and table[0] == 0 and table[1] == 0xF26B8303
    assert table[128] == 0x82F63B78
    assert L.crc32c(b"123456789") == 0xE3069283  # the standard check value
    assert L.crc32c(bytes(32)) == 0x8A9136AA      # RFC 3720's test vectors
    assert L.crc32c(b"\xff" * 32) == 0x62A8AB43


def test_crc32c_equals_wicks_and_continues():
    rng = random.Random(0)
    for size in (0, 1, 7, 64, 1000):
        data = bytes(rng.randrange(256) for _ in range(size))
        assert L.crc32c(data) == wick._C._data.crc32c(data)
        half = size // 2
        assert L.crc32c(data[half:], L.crc32c(data[:half])) == L.crc32c(data)


def test_mask():
    for crc in (0, 1, 0xE3069283, 0xFFFFFFFF):
        assert L.mask(crc) == wick._C._data.mask_crc(crc)
    assert L.mask(0) == 0xA282EAD8


def test_framing_equals_wicks_writer(tmp_path):
    payloads = [b"", b"a", bytes(range(256)) * 3, b"tf.train.Example"]
    L.write_records(tmp_path / "mine.tfrecord", payloads)
    with wick.records.TFRecordWriter(tmp_path / "wick.tfrecord") as w:
        for p in payloads:
            w.write(p)
    assert (tmp_path / "mine.tfrecord").read_bytes() == (tmp_path / "wick.tfrecord").read_bytes()
    assert len(L.frame(b"abc")) == 3 + 16


def test_reads_tensorflows_file():
    mine = list(L.read_records(TF_DIGITS))
    assert len(mine) == 64 and mine == list(wick.records.tf_record_iterator(TF_DIGITS))


@pytest.mark.parametrize("damage,words", [
    (lambda d, o: d[:o + 12 + 400], "record 3"),                       # cut inside record 3
    (lambda d, o: d[:o + 5], "record 3"),                              # cut inside its header
    (lambda d, o: d[:o + 2] + bytes([d[o + 2] ^ 1]) + d[o + 3:], "corrupt length"),
    (lambda d, o: d[:o + 30] + bytes([d[o + 30] ^ 1]) + d[o + 31:], "checksum"),
])
def test_damaged_files_name_the_record(tmp_path, damage, words):
    data = open(TF_DIGITS, "rb").read()
    offset = wick.records.record_index(TF_DIGITS)[3][0]
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(damage(data, offset))
    with pytest.raises(L.CorruptRecord, match=words):
        list(L.read_records(path))


def test_index_and_random_access(tmp_path):
    index = L.build_index(TF_DIGITS)
    assert index == wick.records.record_index(TF_DIGITS)
    payloads = list(wick.records.tf_record_iterator(TF_DIGITS))
    for i in (0, 17, 63):
        assert L.read_at(TF_DIGITS, index, i) == payloads[i]


def test_varint():
    assert L.varint(0) == b"\x00" and L.varint(1) == b"\x01" and L.varint(127) == b"\x7f"
    assert L.varint(300) == b"\xac\x02"
    assert L.varint(-1) == b"\xff" * 9 + b"\x01"
    assert L.varint(2**63 - 1) == b"\xff" * 8 + b"\x7f"


def test_examples_equal_tensorflows_bytes(tmp_path):
    payloads = list(wick.records.tf_record_iterator(TF_DIGITS))
    mnist = wick.datasets.MNIST(train=False)
    rebuilt = []
    for i, payload in enumerate(payloads):
        image = (mnist[i][0] * 255).round().to(wick.uint8).numpy().tobytes()
        rebuilt.append(L.encode_image_example(image, mnist[i][1]))
        assert rebuilt[-1] == payload, f"example {i} differs from TensorFlow's bytes"
    L.write_records(tmp_path / "digits.tfrecord", rebuilt)
    assert (tmp_path / "digits.tfrecord").read_bytes() == open(TF_DIGITS, "rb").read()


def test_figures(tmp_path):
    data = os.urandom(1 << 18)
    start = time.perf_counter()
    L.crc32c(data)
    python_mbs = len(data) / (time.perf_counter() - start) / 1e6
    start = time.perf_counter()
    for _ in range(100):
        wick._C._data.crc32c(data)
    cpp_mbs = 100 * len(data) / (time.perf_counter() - start) / 1e6
    figure("CRC-32C: your Python / wick's C++ with SSE4.2 (MB/s)",
           f"{python_mbs:.1f} / {cpp_mbs:.0f} ({cpp_mbs / python_mbs:.0f}x)")
    shard = tmp_path / "shard.tfrecord"
    for _ in range(8):  # 512 digits
        with open(shard, "ab") as f:
            f.write(open(TF_DIGITS, "rb").read())
    index = L.build_index(shard)
    start = time.perf_counter()
    count = sum(1 for _ in L.read_records(shard))
    sequential = count / (time.perf_counter() - start)
    order = list(range(len(index)))
    random.Random(1).shuffle(order)
    with open(shard, "rb") as f:
        start = time.perf_counter()
        for i in order:
            f.seek(index[i][0])
            L.read_record(f, i)
        shuffled = len(order) / (time.perf_counter() - start)
    figure("records/s, sequential / shuffled through the index (your Python)",
           f"{sequential:.0f} / {shuffled:.0f}")
    start = time.perf_counter()
    count_cpp = sum(1 for _ in wick.records.tf_record_iterator(shard))
    cpp_sequential = count_cpp / (time.perf_counter() - start)
    dataset = wick.records.TFRecordDataset(shard)
    start = time.perf_counter()
    for i in order:
        dataset[i]
    cpp_shuffled = len(order) / (time.perf_counter() - start)
    figure("records/s, sequential / shuffled through the index (wick's C++)",
           f"{cpp_sequential:.0f} / {cpp_shuffled:.0f}")
    figure("framing overhead per 784-pixel digit record (bytes, %)",
           f"16 of {16 + index[0][1]} ({16 / (16 + index[0][1]) * 100:.1f}%)")
    assert count == 512
