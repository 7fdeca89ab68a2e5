#!/usr/bin/env python3
"""Writes the committed MNIST digits (assets/mnist) in the storage formats a training pipeline
meets, for benchmarks/data_formats.py, the tests and the labs:

    OUT/png/<label>/<n>.png      one PNG file per digit (ImageFolder's layout), by Pillow
    OUT/jpeg/<label>/<n>.jpg     the same as JPEG, quality 90, by Pillow
    OUT/digits.tfrecord (+.idx)  tf.train.Example records: "image" = 784 raw bytes, "label"
    OUT/digits.lmdb              the same Examples in an LMDB store, keys 00000000, 00000001, ...

    python3 scripts/write_digit_formats.py OUT [--count N] [--train]
"""

import argparse
import gzip
import io
import os
import struct
import sys
import time

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_digits(train, count):
    prefix = "train" if train else "t10k"
    with gzip.open(os.path.join(ROOT, "assets", "mnist", f"{prefix}-images-idx3-ubyte.gz")) as f:
        data = f.read()
    _, n, rows, cols = struct.unpack(">IIII", data[:16])
    count = n if count is None else min(count, n)
    images = np.frombuffer(data, np.uint8, count * rows * cols, 16).reshape(count, rows, cols)
    with gzip.open(os.path.join(ROOT, "assets", "mnist", f"{prefix}-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, count, 8)
    return images, labels


def image_file_bytes(image, fmt):
    out = io.BytesIO()
    Image.fromarray(image, mode="L").save(out, format=fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return out.getvalue()


def write_all(out, images, labels):
    import wick.records as records

    sizes = {}
    for fmt, ext in (("PNG", "png"), ("JPEG", "jpg")):
        total = 0
        for n, (image, label) in enumerate(zip(images, labels)):
            folder = os.path.join(out, fmt.lower(), str(label))
            os.makedirs(folder, exist_ok=True)
            data = image_file_bytes(image, fmt)
            with open(os.path.join(folder, f"{n:05d}.{ext}"), "wb") as f:
                f.write(data)
            total += len(data)
        sizes[fmt.lower()] = total
    examples = [records.encode_example({"image": [image.tobytes()], "label": int(label)})
                for image, label in zip(images, labels)]
    with records.TFRecordWriter(os.path.join(out, "digits.tfrecord")) as w:
        for e in examples:
            w.write(e)
    records.write_index(os.path.join(out, "digits.tfrecord"))
    sizes["tfrecord"] = os.path.getsize(os.path.join(out, "digits.tfrecord"))
    records.write_lmdb(os.path.join(out, "digits.lmdb"), examples, map_bytes=1 << 28)
    sizes["lmdb"] = os.path.getsize(os.path.join(out, "digits.lmdb"))
    return sizes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=None, help="digits to write (default: all)")
    parser.add_argument("--train", action="store_true", help="the training digits (default: test)")
    args = parser.parse_args()
    if args.count is not None and args.count < 1:
        parser.error(f"--count must be >= 1; got {args.count}")
    build = os.environ.get("WICK_BUILD_DIR", os.path.join(ROOT, "build"))
    sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(build, "python")]
    images, labels = read_digits(args.train, args.count)
    start = time.perf_counter()
    sizes = write_all(args.out, images, labels)
    print(f"wrote {len(images)} digits to {args.out} in {time.perf_counter() - start:.1f} s: " +
          ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in sizes.items()))


if __name__ == "__main__":
    main()
