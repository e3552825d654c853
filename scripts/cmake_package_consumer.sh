#!/usr/bin/env bash
# The cmake_package_consumer test (cmake/ssmv_install.cmake): ssmv as a kernel author gets
# it. Installs the build tree BUILD_DIR into a temporary prefix (cmake --install), checks
# the installed package (no CUDA, no kernel library, no path into the source or build
# tree, every quoted include of an installed header installed), then configures and
# builds the consumer project CONSUMER_DIR (cmake/consumer_test: find_package(ssmv
# CONFIG REQUIRED), ssmv::verify, GoogleTest) against that prefix alone and runs its test.
#
#   scripts/cmake_package_consumer.sh BUILD_DIR CONSUMER_DIR [CXX_COMPILER]
#
# Exits 0 when every step passes; otherwise names the failed step, prints the end of its
# log and keeps the temporary folder for a look.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR CONSUMER_DIR [CXX_COMPILER]" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
consumer_dir=$(cd "$2" && pwd)
cxx=${3:-}
source_dir=$(cd "$(dirname "$0")/.." && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/ssmv_consumer.XXXXXX")
prefix=$work/prefix
consumer_build=$work/build
step=""
log=""

on_exit() {
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "cmake_package_consumer: FAILED at step '$step' (exit $rc)" >&2
    if [[ -n $log && -s $log ]]; then
      echo "--- last lines of $log ---" >&2
      tail -n 60 "$log" >&2
    fi
    echo "cmake_package_consumer: kept $work for inspection" >&2
  else
    rm -rf "$work"
  fi
}
trap on_exit EXIT

fail() {
  echo "cmake_package_consumer: $step: $*" >&2
  exit 1
}

# run STEP_NAME LOG_FILE COMMAND...: runs the command with its output in LOG_FILE, timed.
run() {
  step=$1
  log=$2
  shift 2
  local start=$SECONDS
  "$@" >"$log" 2>&1
  echo "cmake_package_consumer: $step: ok ($((SECONDS - start)) s)"
}

run install "$work/install.log" cmake --install "$build_dir" --prefix "$work/staging"
mv "$work/staging" "$prefix"  # relocated: nothing may point into where it was installed

step="check the installed package"
log=""
config=$(find "$prefix" -name ssmvConfig.cmake -print -quit)
[[ -n $config ]] || fail "no ssmvConfig.cmake under $prefix"
package_dir=$(dirname "$config")
for f in ssmvConfigVersion.cmake ssmvTargets.cmake FindMPFR.cmake; do
  [[ -f $package_dir/$f ]] || fail "$package_dir/$f is missing"
done
if grep -n -i cuda "$package_dir"/ssmvTargets*.cmake; then
  fail "the exported targets mention CUDA (lines above): the package must not force CUDA on its users"
fi
if grep -n -F -e "$source_dir" -e "$build_dir" -e "$work/staging" "$package_dir"/*.cmake; then
  fail "the package's CMake files name the source or build tree or the install prefix (lines above): not relocatable"
fi
for lib in ssmv_run ssmv_ssu ssmv_chunk_scan ssmv_fast_device ssmv_cuda_common ssmv_verify; do
  if [[ -n $(find "$prefix" -name "lib$lib.*" -print -quit) ]]; then
    fail "lib$lib is installed: kernels (and the build tree's ssmv_verify, which links them) are not part of the package"
  fi
done
# Every quoted include of an installed header must be installed too.
missing=0
while IFS= read -r header; do
  while IFS= read -r inc; do
    if [[ ! -f $prefix/include/$inc && ! -f $(dirname "$header")/$inc ]]; then
      echo "  ${header#"$prefix"/} includes \"$inc\", which is not installed" >&2
      missing=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$header")
done < <(find "$prefix/include" -type f -name '*.h')
[[ $missing -eq 0 ]] || fail "installed headers include headers that are not installed (above)"
echo "cmake_package_consumer: $step: ok ($(find "$prefix/include" -type f | wc -l) headers)"

configure_args=(-S "$consumer_dir" -B "$consumer_build"
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_PREFIX_PATH="$prefix"
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DSSMV_EXPECTED_DIR="$package_dir")
[[ -z $cxx ]] || configure_args+=(-DCMAKE_CXX_COMPILER="$cxx")
run "configure the consumer" "$work/configure.log" cmake "${configure_args[@]}"
run "build the consumer" "$work/build.log" cmake --build "$consumer_build" -j 2
run "run the consumer's test" "$work/test.log" "$consumer_build/consumer_test"
grep -E '^\[( +OK|  PASSED|  FAILED) ' "$work/test.log" || true
