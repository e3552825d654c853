#!/usr/bin/env bash
# Sets everything up: installs the Debian packages that are missing (scripts/install-deps.sh;
# nothing missing: no root, no apt), configures and builds ssmv in build/release (CUDA
# kernels for sm_90 when /usr/local/cuda/bin/nvcc exists; without it a warning, and a CPU
# build whose GPU tests skip).
#   scripts/build.sh [--with-mpi] [--with-plots] [--with-planted] [--check-deps] [TARGET...]
#   TARGET...       build only these CMake targets (`build.sh ssmv`: the command alone, the
#                   README's first line; about 44% of the whole build on 2 cores)
#   --with-mpi      also install Open MPI: campaigns over MPI ranks   (or SSMV_WITH_MPI=1)
#   --with-plots    also install matplotlib: scripts/plot_bounds.py   (or SSMV_WITH_PLOTS=1)
#   --with-planted  also build the planted-bug catalogue's binaries and their planted.*
#                   tests (-DSSMV_BUILD_PLANTED=ON; CI does)       (or SSMV_BUILD_PLANTED=1)
#   --check-deps    only say what is missing and whether CUDA is there; build nothing
set -euo pipefail
cd "$(dirname "$0")/.."

check_deps=0
planted=${SSMV_BUILD_PLANTED:-}
deps_args=()
targets=()
for arg in "$@"; do
  case $arg in
    --with-mpi|--with-plots) deps_args+=("$arg") ;;
    --with-planted) planted=1 ;;
    --check-deps) check_deps=1 ;;
    -h|--help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "build.sh: unknown option $arg (--help lists them)" >&2; exit 2 ;;
    *) targets+=(--target "$arg") ;;
  esac
done

# The CUDA compiler CMake will use (CMakeLists.txt): $CUDACXX when set, else
# /usr/local/cuda/bin/nvcc, else nvcc on PATH.
nvcc=${CUDACXX:-/usr/local/cuda/bin/nvcc}
if [ -z "${CUDACXX:-}" ] && [ ! -x "$nvcc" ]; then nvcc=$(command -v nvcc || true); fi
warn_no_cuda() {
  [ -n "$nvcc" ] && [ -x "$nvcc" ] && return
  cat >&2 <<'EOF'
build.sh: ********************************************************************
build.sh: WARNING: no CUDA compiler (no /usr/local/cuda/bin/nvcc, no nvcc on PATH,
build.sh: or $CUDACXX not executable): building WITHOUT the CUDA kernels.
build.sh: ssmv judges the host twins only, `--device gpu` is unavailable and
build.sh: the tests labelled gpu skip. For the GPU build install CUDA 13.0 at
build.sh: /usr/local/cuda (or set CUDACXX), then rerun.
build.sh: ********************************************************************
EOF
}

if [ "$check_deps" = 1 ]; then
  if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then echo "build.sh: CUDA compiler $nvcc"; fi
  warn_no_cuda
  exec ./scripts/install-deps.sh --check "${deps_args[@]}"
fi

warn_no_cuda
./scripts/install-deps.sh "${deps_args[@]}"
configure_args=()
case $planted in
  "") ;;  # as configured before (default OFF)
  1|ON|on|yes) configure_args+=(-DSSMV_BUILD_PLANTED=ON) ;;
  *) configure_args+=(-DSSMV_BUILD_PLANTED=OFF) ;;
esac
cmake --preset release "${configure_args[@]}"
cmake --build --preset release -j "$(nproc)" "${targets[@]}"
warn_no_cuda  # again, under the build's output
