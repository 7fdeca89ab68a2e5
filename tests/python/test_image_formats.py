"""wick.datasets.ImageFolder (PNG and JPEG files decoded by libpng and libjpeg-turbo) and
wick.records' LMDB stores, on the committed MNIST digits written out by
scripts/write_digit_formats.py: the same pixels as MNIST's IDX files (PNG, LMDB exactly; JPEG
as Pillow decodes it), torchvision's ImageFolder as the reference, and damaged files that raise
errors naming the file or key, in the loader's threads too."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import wick
from wick import records
from wick.utils.data import DataLoader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FORMATS = wick._C._data.has_formats()
COUNT = 120


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    out = tmp_path_factory.mktemp("digits")
    env = dict(os.environ, WICK_BUILD_DIR=os.environ.get("WICK_BUILD_DIR", "build"))
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "write_digit_formats.py"),
                    str(out), "--count", str(COUNT)], check=True, env=env, cwd=ROOT,
                   capture_output=True)
    mnist = wick.datasets.MNIST(train=False)
    return out, [mnist[i] for i in range(COUNT)]


def in_label_order(reference):
    """ImageFolder's order: by class folder, then by file name (the digit's number)."""
    return sorted(range(len(reference)), key=lambda i: (reference[i][1], i))


needs_png = pytest.mark.skipif(not FORMATS["png"], reason="wick built without libpng")
needs_jpeg = pytest.mark.skipif(not FORMATS["jpeg"], reason="wick built without libjpeg")
needs_lmdb = pytest.mark.skipif(not FORMATS["lmdb"], reason="wick built without liblmdb")


@needs_png
def test_png_folder_gives_mnists_pixels(digits):
    out, reference = digits
    ds = wick.datasets.ImageFolder(out / "png", mode="L")
    assert len(ds) == COUNT and ds.classes == [str(d) for d in range(10)]
    assert ds.class_to_idx["7"] == 7 and ds._cpp is not None
    for position, i in enumerate(in_label_order(reference)):
        image, label = ds[position]
        assert label == reference[i][1] and ds.targets[position] == label
        assert wick.equal(image, reference[i][0])


@needs_png
def test_rgb_matches_torchvisions_image_folder(digits):
    torchvision = pytest.importorskip("torchvision")
    out, _ = digits
    ours = wick.datasets.ImageFolder(out / "png")
    theirs = torchvision.datasets.ImageFolder(str(out / "png"),
                                              transform=torchvision.transforms.ToTensor())
    assert ours.classes == theirs.classes and [p for p, _ in ours.samples] == [p for p, _ in theirs.samples]
    for i in (0, 57, COUNT - 1):
        np.testing.assert_array_equal(ours[i][0].numpy(), theirs[i][0].numpy())
        assert ours[i][1] == theirs[i][1]


@needs_jpeg
def test_jpeg_folder_decodes_as_pillow_does(digits):
    from PIL import Image
    out, reference = digits
    ds = wick.datasets.ImageFolder(out / "jpeg", mode="L")
    for position in (0, 33, COUNT - 1):
        path, _ = ds.samples[position]
        pillow = np.asarray(Image.open(path).convert("L"), dtype=np.float32) / 255
        np.testing.assert_allclose(ds[position][0].numpy()[0], pillow, atol=1.5 / 255)
    # Lossy: close to the original digits, not equal.
    i = in_label_order(reference)[0]
    error = np.abs(ds[0][0].numpy() - reference[i][0].numpy()).max()
    assert 0 < error < 0.35


@needs_png
def test_image_folder_through_the_loader(digits):
    out, reference = digits
    ds = wick.datasets.ImageFolder(out / "png", mode="L")
    images, labels = [], []
    for x, y in DataLoader(ds, batch_size=32, num_workers=2):
        images.append(x)
        labels += y.tolist()
    order = in_label_order(reference)
    assert labels == [reference[i][1] for i in order]
    assert wick.equal(wick.cat(images), wick.stack([reference[i][0] for i in order]))


@needs_png
def test_undecodable_images_name_the_file(digits, tmp_path):
    out, _ = digits
    root = tmp_path / "folder"
    shutil.copytree(out / "png", root)
    victim = sorted((root / "3").iterdir())[0]
    data = victim.read_bytes()
    ds = wick.datasets.ImageFolder(root, mode="L")
    position = [p for p, _ in ds.samples].index(str(victim))
    for damaged, words in [(data[:40], "not a readable PNG|corrupt PNG"),
                           (data[:-20], "corrupt PNG"),
                           (b"GIF89a" + data, "neither a PNG nor a JPEG"),
                           (b"", "neither a PNG nor a JPEG")]:
        victim.write_bytes(damaged)
        with pytest.raises(RuntimeError, match=f"{victim}: ({words})"):
            ds[position]
    with pytest.raises(RuntimeError, match=str(victim)):  # from a worker thread: raised, no hang
        list(DataLoader(ds, batch_size=16, num_workers=2, timeout=30))


@needs_jpeg
def test_truncated_jpeg_names_the_file(digits, tmp_path):
    out, _ = digits
    victim = tmp_path / "0" / "x.jpg"
    victim.parent.mkdir()
    data = sorted((out / "jpeg" / "0").iterdir())[0].read_bytes()
    victim.write_bytes(data[:len(data) // 2])
    ds = wick.datasets.ImageFolder(tmp_path, mode="L")
    # libjpeg would pad the missing scan with grey and warn: a warning is an error here
    with pytest.raises(RuntimeError, match=f"{victim}: corrupt JPEG: Premature end"):
        ds[0]
    victim.write_bytes(data[:3] + b"\x00" * 50)
    with pytest.raises(RuntimeError, match=f"{victim}: corrupt JPEG"):
        ds[0]


def test_image_folder_bad_arguments(tmp_path):
    with pytest.raises(RuntimeError, match="is not a directory"):
        wick.datasets.ImageFolder(tmp_path / "missing")
    with pytest.raises(RuntimeError, match="has no class folders"):
        wick.datasets.ImageFolder(tmp_path)
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "notes.txt").write_text("not an image")
    with pytest.raises(RuntimeError, match="has no .png, .jpg or .jpeg files in its 1 class"):
        wick.datasets.ImageFolder(tmp_path)
    with pytest.raises(ValueError, match="mode must be 'RGB' or 'L'; got 'CMYK'"):
        wick.datasets.ImageFolder(tmp_path, mode="CMYK")


@needs_lmdb
def test_lmdb_gives_mnists_pixels(digits):
    out, reference = digits
    ds = records.LMDBImageDataset(out / "digits.lmdb", shape=(1, 28, 28))
    assert len(ds) == COUNT
    for i in (0, 1, 77, COUNT - 1):
        assert ds[i][1] == reference[i][1] and wick.equal(ds[i][0], reference[i][0])
    batches = list(DataLoader(ds, batch_size=25, num_workers=2))
    assert wick.equal(wick.cat([b[0] for b in batches]), wick.stack([r[0] for r in reference]))


@needs_lmdb
def test_damaged_lmdb_stores(digits, tmp_path):
    out, _ = digits
    data = (out / "digits.lmdb").read_bytes()
    path = tmp_path / "damaged.lmdb"
    for damaged in (b"", b"not an lmdb file at all" * 100, data[:4096 + 100]):
        path.write_bytes(damaged)
        with pytest.raises(RuntimeError, match=f"LMDBDataset\\] {path}"):
            records.LMDBImageDataset(path, shape=(1, 28, 28))
    # A value whose bytes are not an Example: LMDB keeps no checksums, the decoder catches it.
    records.write_lmdb(path, [records.encode_example({"image": [bytes(784)], "label": 4}), b"\xff\xff"])
    ds = records.LMDBImageDataset(path, shape=(1, 28, 28))
    assert ds[0][1] == 4
    with pytest.raises(RuntimeError, match=f"{path}: key 00000001 is not a valid tf.train.Example"):
        ds[1]
    with records.LMDBWriter(path) as w:
        w.put("zebra", b"x")
    with pytest.raises(RuntimeError, match="key \"zebra\" where 00000000 was expected"):
        records.LMDBImageDataset(path, shape=(1, 28, 28))
    w = records.LMDBWriter(path)
    w.commit()
    with pytest.raises(RuntimeError, match="after commit"):
        w.put("00000000", b"x")
    with pytest.raises(TypeError, match="a value is bytes"):
        records.LMDBWriter(path).put("00000000", "text")
