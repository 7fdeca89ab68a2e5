"""wick.datasets: MNIST and CIFAR-10 from their standard files, and ImageFolder over PNG/JPEG
files (torchvision.datasets), read and decoded by the C++ readers of data/. wick has no network access, so download=True only checks that the
files are there."""

import os

from wick import _C
from wick import transforms as _transforms
from wick.utils.data.dataset import Dataset

# The repository's 10,000-digit MNIST subset, when running from a source tree.
_REPO_MNIST = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "assets", "mnist")


class _CppVisionDataset(Dataset):
    def __init__(self, make, root, train, transform, target_transform):
        self.root = root
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        native, cpp_transform = _transforms._to_cpp(transform)
        # Python transforms run in __getitem__ (and so in the Python DataLoader); C++ ones run
        # inside the C++ dataset, which the C++ DataLoader can then serve directly.
        self._dataset = make(root, train, cpp_transform if native else None)
        self._python_transform = None if native else transform
        if native and target_transform is None:
            self._cpp = self._dataset

    def __len__(self):
        return len(self._dataset)

    def __getitem__(self, index):
        image, target = self._dataset[index]
        if self._python_transform is not None:
            image = self._python_transform(image)
        target = int(target.item())
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __repr__(self):
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n"
                f"    Root location: {self.root}\n    Split: {'Train' if self.train else 'Test'}")


class MNIST(_CppVisionDataset):
    """MNIST digits: images float32 [1, 28, 28] in [0, 1] (then transformed), int labels.

    root holds the IDX files (raw or .gz), or root/MNIST/raw does (torchvision's layout);
    None means the repository's assets/mnist subset."""

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root=None, train=True, transform=None, target_transform=None,
                 download=False):
        root = _REPO_MNIST if root is None else os.fspath(root)
        raw = os.path.join(root, "MNIST", "raw")
        folder = raw if os.path.isdir(raw) else root
        super().__init__(_C._data.MNIST, folder, train, transform, target_transform)

    @property
    def data(self):
        return _C._data.mnist_arrays(self._dataset)[0]

    @property
    def targets(self):
        return _C._data.mnist_arrays(self._dataset)[1]


class CIFAR10(_CppVisionDataset):
    """CIFAR-10 from the binary version's files: images float32 [3, 32, 32] in [0, 1]."""

    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
               "truck"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(_C._data.CIFAR10, os.fspath(root), train, transform, target_transform)


class ImageFolder(_CppVisionDataset):
    """torchvision's ImageFolder: root/<class>/<file>.png|.jpg|.jpeg, classes in sorted order.
    Each item is read and decoded (libpng, libjpeg-turbo) when asked for: images float32
    [C, H, W] in [0, 1], C = 3 for mode "RGB" (torchvision's default loader converts to RGB) or
    1 for "L" (grey)."""

    def __init__(self, root, transform=None, target_transform=None, mode="RGB"):
        channels = {"RGB": 3, "L": 1}.get(mode)
        if channels is None:
            raise ValueError(f"ImageFolder: mode must be 'RGB' or 'L'; got {mode!r}")
        self.mode = mode

        def make(root, train, cpp_transform):
            return _C._data.ImageFolder(root, channels, cpp_transform)

        super().__init__(make, os.fspath(root), True, transform, target_transform)
        self.classes, self.samples = _C._data.image_folder_samples(self._dataset)
        self.class_to_idx = {name: i for i, name in enumerate(self.classes)}
        self.imgs = self.samples
        self.targets = [label for _, label in self.samples]

    def __repr__(self):
        return (f"Dataset ImageFolder\n    Number of datapoints: {len(self)}\n"
                f"    Root location: {self.root}")
