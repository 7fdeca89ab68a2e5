# shellcheck shell=bash
# Sourced by tests/gpu/run.sh and tests/gpu/check_offline_set.sh: turns the offline set that
# tests/gpu/prepare.sh fetched into a local prefix and the CMake arguments that use it.

# offline_unpack SET PREFIX: every .deb of SET unpacked into PREFIX (dpkg -x: no root, no apt),
# the pybind11 wheel into PREFIX/pybind11-wheel, the other (pure-Python) wheels into PREFIX/pylib.
offline_unpack() {
  local set=$1 prefix=$2 deb
  mkdir -p "$prefix"
  for deb in "$set"/debs/*.deb; do
    [ -e "$deb" ] || continue
    dpkg -x "$deb" "$prefix"
  done
  # A package's symbolic links may be absolute (zlib1g-dev's libz.so points at
  # /lib/x86_64-linux-gnu/libz.so.1.2.13): in the prefix they lead to the host's files or to
  # nothing, and CMake then settles for the static libz.a, which cannot be linked into
  # libwick.so. They are pointed at the prefix's own copy instead.
  local link target
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    case "$target" in
      /*) if [ -e "$prefix$target" ]; then ln -sfn "$prefix$target" "$link"; fi ;;
    esac
  done < <(find "$prefix" -type l -print0)
  for whl in "$set"/wheels/*.whl; do
    [ -e "$whl" ] || continue
    case "$(basename "$whl")" in
      pybind11-*) python3 -m zipfile -e "$whl" "$prefix/pybind11-wheel" ;;
      *) python3 -m zipfile -e "$whl" "$prefix/pylib" ;;  # pure-Python: pytest and its deps
    esac
  done
}

# offline_cmake_args SET PREFIX: prints one CMake argument a line, pointing the build at PREFIX
# (and at the set's cuDNN and NCCL headers unless CUDNN_INCLUDE_DIR / NCCL_INCLUDE_DIR are set).
offline_cmake_args() {
  local set=$1 prefix=$2
  echo "-DCMAKE_PREFIX_PATH=$prefix/usr;$prefix/usr/lib/x86_64-linux-gnu/cmake"
  echo "-DZLIB_ROOT=$prefix/usr"
  echo "-DDLPACK_INCLUDE_DIR=$prefix/usr/include"
  if [ -f "$prefix/pybind11-wheel/pybind11/share/cmake/pybind11/pybind11Config.cmake" ]; then
    echo "-Dpybind11_DIR=$prefix/pybind11-wheel/pybind11/share/cmake/pybind11"
  fi
}
