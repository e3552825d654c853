#!/usr/bin/env bash
# Installs the Debian 12 packages the build needs, only those that are missing.
# Idempotent; run as root (or with sudo available). CUDA is expected at /usr/local/cuda.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libmpfr-dev libgmp-dev
  librapidcheck-dev libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  zlib1g-dev
  nlohmann-json3-dev libcli11-dev  # JSON (verify/json) and the command line (verify/cli)
  python3-numpy python3-pip python3-setuptools python3-pytest  # the Python package (python/)
  python3-matplotlib  # the plots of `ssmv bounds` (scripts/plot_bounds.py)
  openmpi-bin libopenmpi-dev  # MPI campaigns (properties/campaign/; optional: built when found)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
