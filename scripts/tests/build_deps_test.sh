#!/usr/bin/env bash
# scripts/build.sh and scripts/install-deps.sh without building or installing anything: a
# PATH of stubs (dpkg-query answers from $STUB_MISSING, id -u from $STUB_UID; cmake, apt-get
# and sudo only record their call) and the few real tools the scripts use. Asserts that with
# every package present nothing needs root (no sudo, no apt-get); that a missing package is
# named, and installed through apt only then; that MPI and matplotlib are asked for only with
# --with-mpi / --with-plots (or SSMV_WITH_MPI / SSMV_WITH_PLOTS); that --check-deps builds
# nothing; that SSMV_BUILD_PLANTED / --with-planted reach CMake; and that a build without a
# CUDA compiler says so on stderr. Usage: build_deps_test.sh SOURCE_DIR
set -uo pipefail
# The cases set these themselves; a caller's (CI's .ci/run exports all three) must not leak in.
unset SSMV_WITH_MPI SSMV_WITH_PLOTS SSMV_BUILD_PLANTED
src=${1:?usage: build_deps_test.sh SOURCE_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

stubs=$work/bin
mkdir -p "$stubs"
for tool in bash cat dirname grep sed nproc env; do
  real=$(command -v "$tool") || { echo "build_deps_test: $tool not found" >&2; exit 1; }
  ln -s "$real" "$stubs/$tool"
done
calls=$work/calls  # one line per stubbed call that would build or install: NAME ARGS...
queried=$work/queried  # the packages dpkg-query was asked about
for tool in cmake apt-get sudo; do
  printf '#!%s\necho "%s $*" >> "%s"\n' "$(command -v bash)" "$tool" "$calls" > "$stubs/$tool"
done
cat > "$stubs/dpkg-query" <<EOF
#!$(command -v bash)
pkg=\${!#}
echo "\$pkg" >> "$queried"
for m in \${STUB_MISSING:-}; do [ "\$m" = "\$pkg" ] && exit 1; done
printf 'install ok installed'
EOF
cat > "$stubs/id" <<EOF
#!$(command -v bash)
echo "\${STUB_UID:-1000}"
EOF
printf '#!%s\nexit 0\n' "$(command -v bash)" > "$work/nvcc"
chmod +x "$stubs"/* "$work/nvcc"

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# run NAME SCRIPT ARGS...: runs SCRIPT of the source tree on the stub PATH, with a working
# CUDA compiler unless CUDACXX is given; sets rc, out (stdout+stderr), err (stderr).
run() {
  local name=$1 script=$2
  shift 2
  rm -f "$calls" "$queried"
  touch "$calls" "$queried"
  env -i PATH="$stubs" HOME="$work" CUDACXX="${CUDACXX:-$work/nvcc}" \
    ${STUB_MISSING:+STUB_MISSING="$STUB_MISSING"} ${STUB_UID:+STUB_UID="$STUB_UID"} \
    ${SSMV_WITH_MPI:+SSMV_WITH_MPI="$SSMV_WITH_MPI"} ${SSMV_WITH_PLOTS:+SSMV_WITH_PLOTS="$SSMV_WITH_PLOTS"} \
    ${SSMV_BUILD_PLANTED:+SSMV_BUILD_PLANTED="$SSMV_BUILD_PLANTED"} \
    "$stubs/bash" "$src/scripts/$script" "$@" > "$work/$name.out" 2> "$work/$name.err"
  rc=$?
  err=$(cat "$work/$name.err")
  out="$(cat "$work/$name.out")$err"
  echo "== $name: rc=$rc; calls: $(tr '\n' ';' < "$calls")"
}
called() { grep -q "^$1" "$calls"; }
asked() { grep -qx "$1" "$queried"; }

# Everything present, not root: the check and the build need no root and never call apt.
run check build.sh --check-deps
[ $rc -eq 0 ] || fail "--check-deps with every package present: exit $rc ($out)"
[ -s "$calls" ] && fail "--check-deps called $(cat "$calls")"
case $err in *WARNING*) fail "--check-deps warned with a CUDA compiler present: $err" ;; esac
for p in openmpi-bin libopenmpi-dev python3-matplotlib; do
  asked "$p" && fail "$p is asked for without --with-mpi / --with-plots"
done
asked libmpfr-dev || fail "libmpfr-dev not checked"

run build build.sh
[ $rc -eq 0 ] || fail "build.sh with every package present, not root: exit $rc ($out)"
called sudo && fail "build.sh called sudo with every package present"
called apt-get && fail "build.sh called apt-get with every package present"
grep -qx "cmake --preset release" "$calls" || fail "build.sh did not configure the release preset"
grep -q "^cmake --build --preset release" "$calls" || fail "build.sh did not build"
grep -q PLANTED "$calls" && fail "build.sh passed SSMV_BUILD_PLANTED unasked"

SSMV_BUILD_PLANTED=1 run build_planted_env build.sh
grep -qx "cmake --preset release -DSSMV_BUILD_PLANTED=ON" "$calls" ||
  fail "SSMV_BUILD_PLANTED=1 did not reach CMake"
run build_planted_option build.sh --with-planted
grep -qx "cmake --preset release -DSSMV_BUILD_PLANTED=ON" "$calls" ||
  fail "--with-planted did not reach CMake"

# MPI and matplotlib only when asked (option or environment).
run check_optional build.sh --check-deps --with-mpi --with-plots
for p in openmpi-bin libopenmpi-dev python3-matplotlib; do
  asked "$p" || fail "$p not asked for with --with-mpi --with-plots"
done
SSMV_WITH_MPI=1 SSMV_WITH_PLOTS=1 run check_optional_env install-deps.sh --check
for p in openmpi-bin python3-matplotlib; do
  asked "$p" || fail "$p not asked for with SSMV_WITH_MPI=1 SSMV_WITH_PLOTS=1"
done

# A missing package: named; --check-deps and a non-root run without sudo install nothing.
STUB_MISSING="libmpfr-dev" run check_missing build.sh --check-deps
[ $rc -ne 0 ] || fail "--check-deps with libmpfr-dev missing: exit 0"
case $out in *libmpfr-dev*) ;; *) fail "--check-deps does not name the missing libmpfr-dev: $out" ;; esac
[ -s "$calls" ] && fail "--check-deps with a package missing called $(cat "$calls")"

STUB_MISSING="libmpfr-dev" run missing_sudo install-deps.sh
grep -q "^sudo env DEBIAN_FRONTEND=noninteractive apt-get install .*libmpfr-dev" "$calls" ||
  fail "not root, sudo present, libmpfr-dev missing: not installed through sudo"

rm "$stubs/sudo"
STUB_MISSING="libmpfr-dev" run missing_no_sudo install-deps.sh
[ $rc -ne 0 ] || fail "install-deps, not root, no sudo, libmpfr-dev missing: exit 0"
case $err in *libmpfr-dev*apt-get*) ;; *) fail "no sudo: the message names neither the package nor the command: $err" ;; esac
[ -s "$calls" ] && fail "install-deps without root or sudo called $(cat "$calls")"

STUB_MISSING="libmpfr-dev" STUB_UID=0 run missing_root install-deps.sh
grep -q "^apt-get install .*libmpfr-dev" "$calls" || fail "as root, libmpfr-dev missing: not installed"
grep -q "^apt-get install .*libgmp-dev" "$calls" && fail "as root: installs a package already present"

# No CUDA compiler: a loud, multi-line warning on stderr (before and after the build).
CUDACXX=$work/no-cuda/nvcc run no_cuda build.sh
[ $rc -eq 0 ] || fail "build.sh without CUDA: exit $rc"
[ "$(grep -c "WARNING: no CUDA compiler" "$work/no_cuda.err")" -eq 2 ] ||
  fail "build.sh without CUDA: the warning is not printed before and after the build: $err"
[ "$(grep -c "^build.sh:" "$work/no_cuda.err")" -ge 10 ] || fail "the no-CUDA warning is not multi-line: $err"
grep -q "WARNING" "$work/no_cuda.out" && fail "the no-CUDA warning went to stdout"
CUDACXX=$work/no-cuda/nvcc run no_cuda_check build.sh --check-deps
case $err in *"WARNING: no CUDA compiler"*) ;; *) fail "--check-deps does not say CUDA is missing: $err" ;; esac

if [ $failures -ne 0 ]; then
  echo "build_deps_test: $failures failure(s)" >&2
  exit 1
fi
echo "build_deps_test: all passed"
