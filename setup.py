"""pip install support: builds libwick and the wick._C extension with CMake and installs the
python/wick package with both inside it (the extension finds libwick.so next to itself).

Offline, with Debian's Python (the build needs nothing from the network):

    /usr/bin/python3 -m pip install --no-build-isolation --break-system-packages .

or into a virtual environment that sees Debian's numpy and torch:

    /usr/bin/python3 -m venv --system-site-packages /tmp/venv
    /tmp/venv/bin/pip install --no-build-isolation .

Build files go to build-pip/ (WICK_PIP_BUILD_DIR overrides it); ccache is used when present.
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("WICK_PIP_BUILD_DIR", os.path.join(ROOT, "build-pip"))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        cmake_dir = os.path.join(BUILD, "cmake")
        env = dict(os.environ, CCACHE_BASEDIR=ROOT, CCACHE_NOHASHDIR="1")
        subprocess.check_call([
            "cmake", "-S", ROOT, "-B", cmake_dir, "-DCMAKE_BUILD_TYPE=Release",
            "-DWICK_PYTHON=ON", "-DWICK_TESTS=OFF", "-DWICK_BENCHMARKS=OFF",
            "-DWICK_EXAMPLES=OFF", f"-DPython3_EXECUTABLE={sys.executable}"], env=env)
        jobs = str(os.cpu_count() or 2)
        subprocess.check_call(["cmake", "--build", cmake_dir, "--target", "_C", "-j", jobs],
                              env=env)
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        built = glob.glob(os.path.join(cmake_dir, "python", "wick", "_C*.so"))
        if not built:
            raise RuntimeError("CMake did not produce wick/_C*.so")
        shutil.copy2(built[0], target)
        shutil.copy2(os.path.join(cmake_dir, "libwick.so"),
                     os.path.join(os.path.dirname(target), "libwick.so"))


setup(
    name="wick",
    version="0.1.0",
    description="A small deep-learning framework written to be read, with PyTorch's Python API",
    python_requires=">=3.9",
    packages=find_packages("python"),
    package_dir={"": "python"},
    package_data={"wick": ["_C.pyi", "py.typed"]},
    ext_modules=[CMakeExtension("wick._C")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": os.path.join(BUILD, "setuptools")},
             "egg_info": {"egg_base": BUILD}},
    zip_safe=False,
)
