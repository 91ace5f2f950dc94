#!/usr/bin/env bash
# Installs the Debian packages tbtune builds with, if they are missing. Idempotent: a second run
# installs nothing. The CUDA 13 toolkit (nvcc, NVRTC, static cudart) must already be on the
# machine (/usr/local/cuda); it is not a Debian package.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config python3 libyaml-cpp-dev libcli11-dev libsqlite3-dev
          nlohmann-json3-dev libfmt-dev libgtest-dev libbenchmark-dev gfortran
          slurm-wlm munge  # these two: a one-node Slurm for tests/sweep/slurm_test.sh
          clang libclang-rt-14-dev)  # these two: libFuzzer and its sanitizers, scripts/fuzz.sh

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

if [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] && ! command -v nvcc >/dev/null; then
  echo "install-deps: the CUDA 13 toolkit is missing (expected at /usr/local/cuda); install it first" >&2
  exit 1
fi
