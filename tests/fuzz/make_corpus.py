#!/usr/bin/env python3
"""Writes the committed seed corpora under tests/fuzz/corpus/<fuzzer>/ (a few small valid or
nearly valid inputs each, so that fuzzing starts past the format checks). Rerun to rebuild them;
findings' reproducers are added next to these by hand (named finding-*). The checkpoint seeds
come from the harness itself (WICK_FUZZ_WRITE_SEEDS, see fuzz_checkpoint.cpp): run.sh passes it.

usage: make_corpus.py [build-fuzz]
"""
import gzip
import json
import os
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def put(fuzzer, name, data):
    os.makedirs(os.path.join(CORPUS, fuzzer), exist_ok=True)
    with open(os.path.join(CORPUS, fuzzer, name), "wb") as f:
        f.write(data)


def gz(data):
    return gzip.compress(data, mtime=0)


def safetensors(tensors, metadata=None):
    """tensors: name -> (dtype, shape, bytes)."""
    header, blobs, offset = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        blobs += data
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + blobs


def crc32c(data):
    """Bitwise CRC-32C (the fuzz seeds are tiny; data/records/crc32c.cpp is the fast one)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def tfrecord(payloads):
    def masked(crc):
        return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
    out = b""
    for p in payloads:
        header = struct.pack("<Q", len(p))
        out += header + struct.pack("<I", masked(crc32c(header))) + p
        out += struct.pack("<I", masked(crc32c(p)))
    return out


def fixture_records(name):
    """The payloads of a committed TFRecord fixture (framing skipped, not checked)."""
    data = open(os.path.join(ROOT, "tests", "fixtures", "tfrecord", name), "rb").read()
    offset, out = 0, []
    while offset < len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        out.append(data[offset + 12:offset + 12 + length])
        offset += 16 + length
    return out


def main():
    put("fuzz_safetensors", "empty_header", safetensors({}))
    put("fuzz_safetensors", "f32_metadata", safetensors(
        {"w": ("F32", [2, 3], struct.pack("<6f", *range(6)))}, {"format": "pt"}))
    put("fuzz_safetensors", "mixed_dtypes", safetensors({
        "a": ("I64", [2], struct.pack("<2q", -1, 7)),
        "b": ("BOOL", [3], b"\x00\x01\x01"),
        "c": ("BF16", [1, 1], b"\x80\x3f"),
        "d": ("U8", [0, 4], b""),
        "e": ("F16", [], b"\x00\x3c"),
    }))
    with open(os.path.join(ROOT, "tests", "fixtures", "reference.safetensors"), "rb") as f:
        put("fuzz_safetensors", "reference", f.read())

    # MNIST: 4-byte length of the image file, the image file, the label file.
    with gzip.open(os.path.join(ROOT, "assets", "mnist", "t10k-images-idx3-ubyte.gz")) as f:
        pixels = f.read()[16:16 + 3 * 784]
    labels = bytes([7, 2, 1])

    def mnist(count, images, labels_file):
        image_file = struct.pack(">IIII", 2051, count, 28, 28) + images
        return struct.pack("<I", len(image_file)) + image_file + labels_file

    label_file = struct.pack(">II", 2049, 3) + labels
    put("fuzz_mnist", "three_digits", mnist(3, pixels, label_file))
    image_gz = gz(struct.pack(">IIII", 2051, 1, 28, 28) + pixels[:784])
    put("fuzz_mnist", "one_digit_gzip",
        struct.pack("<I", len(image_gz)) + image_gz + gz(struct.pack(">II", 2049, 1) + labels[:1]))
    put("fuzz_mnist", "empty_sets", mnist(0, b"", struct.pack(">II", 2049, 0)))

    # CIFAR-10: 3073-byte records, a label byte then 3072 pixel bytes.
    record = lambda label, seed: bytes([label]) + bytes((i * seed) % 256 for i in range(3072))
    put("fuzz_cifar10", "two_records", record(3, 7) + record(9, 13))
    put("fuzz_cifar10", "one_record_gzip", gz(record(0, 5)))

    events = [("alloc", 1, 1024, 0), ("alloc", 2, 3 << 20, 0), ("free", 1, 1024, 0),
              ("alloc", 3, 25 << 20, 1), ("free", 2, 3 << 20, 0), ("free", 3, 25 << 20, 1)]
    lines = "".join(
        '{"event":"%s","ptr":%d,"size":%d,"stream":%d,"t_us":%.3f}\n' % (e, p, s, st, i * 1.5)
        for i, (e, p, s, st) in enumerate(events))
    put("fuzz_trace", "mixed_streams", lines.encode())
    put("fuzz_trace", "one_alloc", b'{"event":"alloc","ptr":140234,"size":512}\n\n')

    for i, text in enumerate([
            "max_split_size_mb:128,garbage_collection_threshold:0.8",
            "roundup_power2_divisions:[64:8,256:4,1024:4,>:1]",
            "roundup_power2_divisions:4,policy:bfc",
            "max_non_split_rounding_mb:40,policy:bfc_growth"]):
        put("fuzz_alloc_config", "conf%d" % i, text.encode())

    # tf.train.Example payloads TensorFlow wrote (all but the 100 kB one), and small shards of
    # 4x4 images in the layout the fuzzed TFRecordDataset expects.
    for i, payload in enumerate(fixture_records("features.tfrecord")[:7]):
        put("fuzz_example", "tensorflow%d" % i, payload)
    digit = fixture_records("digits.tfrecord")[0]
    put("fuzz_example", "digit", digit)
    def field(number, payload):  # a length-delimited protobuf field (payloads < 128 bytes)
        return bytes([number << 3 | 2, len(payload)]) + payload

    def entry(name, feature):
        return field(1, field(1, name) + field(2, feature))
    # image: 16 raw bytes (Feature.bytes_list), label: 7 (Feature.int64_list, packed)
    tiny = field(1, entry(b"image", field(1, field(1, bytes(range(16))))) +
                 entry(b"label", field(3, field(1, b"\x07"))))
    put("fuzz_tfrecord", "two_tiny_images", tfrecord([tiny, tiny]))
    put("fuzz_tfrecord", "digit_and_empty", tfrecord([digit, b""]))

    # Small PNG and JPEG files (Pillow writes them; the fuzzer mutates from real headers).
    try:
        import io
        from PIL import Image
        digit_image = Image.frombytes("L", (28, 28), bytes((i * 7) % 256 for i in range(784)))
        for fmt, mode in (("PNG", "L"), ("PNG", "RGB"), ("JPEG", "L"), ("JPEG", "RGB")):
            buffer = io.BytesIO()
            digit_image.convert(mode).save(buffer, format=fmt)
            put("fuzz_image", f"{fmt.lower()}_{mode.lower()}", buffer.getvalue())
    except ImportError:
        print("make_corpus: Pillow missing; image seeds not written")

    # Structure-aware checkpoint inputs are choices, not files: a few byte strings to start from.
    for i, seed in enumerate([b"\x00\x01\x02\x03", b"\x01" * 16, b"\x02\xff\x10\x80" * 8]):
        put("fuzz_checkpoint_struct", "choices%d" % i, seed)

    # Valid checkpoints of the harness's own model and optimizers, and small LMDB stores written
    # by liblmdb, each written by its harness.
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build-fuzz")
    for fuzzer in ("fuzz_checkpoint", "fuzz_lmdb"):
        binary = os.path.join(build, "tests", "fuzz", fuzzer)
        if os.path.exists(binary):
            out = os.path.join(CORPUS, fuzzer)
            os.makedirs(out, exist_ok=True)
            env = dict(os.environ, WICK_FUZZ_WRITE_SEEDS=out)
            subprocess.run([binary, "-runs=0"], env=env, check=True, capture_output=True)
        else:
            print("make_corpus: %s not built; its seeds not written" % binary)


if __name__ == "__main__":
    main()
