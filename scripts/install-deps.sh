#!/usr/bin/env bash
# Installs the Debian 12 packages the build needs, only those that are missing; with nothing
# missing it needs no root and never calls apt. CUDA is expected at /usr/local/cuda.
#   scripts/install-deps.sh [--check] [--with-mpi] [--with-plots]
#   --check       list what is missing and exit 1 if anything is (never installs)
#   --with-mpi    also Open MPI, for campaigns over MPI ranks (or SSMV_WITH_MPI=1)
#   --with-plots  also matplotlib, for scripts/plot_bounds.py (or SSMV_WITH_PLOTS=1)
# Missing packages are installed with apt-get as root, or through sudo when it is there;
# otherwise the script names them and the command that installs them, and fails.
set -euo pipefail

check=0
with_mpi=${SSMV_WITH_MPI:-0}
with_plots=${SSMV_WITH_PLOTS:-0}
for arg in "$@"; do
  case $arg in
    --check) check=1 ;;
    --with-mpi) with_mpi=1 ;;
    --with-plots) with_plots=1 ;;
    -h|--help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "install-deps: unknown option $arg (--help lists them)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libmpfr-dev libgmp-dev
  librapidcheck-dev libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev  # the tensor-file fuzzer (verify/tensor_file/fuzz/)
  zlib1g-dev
  nlohmann-json3-dev libcli11-dev  # JSON (verify/json) and the command line (verify/cli)
  python3-numpy python3-pip python3-setuptools python3-pytest  # the Python package (python/)
  python3-venv python3-jsonschema  # plain venvs (python/tests/test_install.py), the report_schema test
)
if [ "$with_mpi" = 1 ]; then
  packages+=(openmpi-bin libopenmpi-dev)  # MPI campaigns (properties/campaign/)
fi
if [ "$with_plots" = 1 ]; then
  packages+=(python3-matplotlib)  # the plots of `ssmv bounds` (scripts/plot_bounds.py)
fi

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
if [ "$check" = 1 ]; then
  echo "install-deps: missing ${missing[*]}" >&2
  exit 1
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo > /dev/null; then
    echo "install-deps: missing Debian packages: ${missing[*]}" >&2
    echo "install-deps: not root and no sudo; as root run:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
