#!/usr/bin/env bash
# Sets everything up: installs the Debian packages that are missing, configures and builds
# ssmv in build/release (CUDA kernels for sm_90 when /usr/local/cuda/bin/nvcc exists).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j "$(nproc)"
