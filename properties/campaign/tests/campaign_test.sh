#!/usr/bin/env bash
# ssmv-campaign end to end (CTest campaign_test, label unit; a few seconds on 2 cores):
#   1. one process, --jobs 2 and `mpirun -n 2` give byte-identical reports for one seed;
#   2. a rank killed mid-campaign (SSMV_CAMPAIGN_KILL) leaves a report naming the missing
#      units and their rerun commands; rerunning one unit with --only merges into the same
#      report, resuming the rest gives the uninterrupted report byte for byte;
#   3. a failing property (one that fails on purpose): exit 1, its counterexamples gathered, same report;
#   4. bad input: more processes than units, fewer cases than units, a GPU property without
#      a GPU, a corrupt unit result on resume, another plan in the folder — each exit 2 with
#      a message naming it.
# Usage: campaign_test.sh SSMV_CAMPAIGN_BINARY [MPIRUN [SSMV_BINARY]]. Without MPIRUN the MPI
# steps are skipped and, if nothing else failed, the test exits 77 (CTest: skipped) — never
# silently passes. With SSMV_BINARY the --jobs run goes through `ssmv campaign`.
set -euo pipefail
bin=$1
mpirun=${2:-}
ssmv=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
small=(--properties SsuContract.StateFp32,Generators.NormalValuesExact,ChunkScanContract.Production64
       --cases 40 --multiplier 1 --units 4 --seed 7)
mpi=()
if [ -n "$mpirun" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # CI runs as root in a container
  mpi=("$mpirun" --allow-run-as-root --oversubscribe -n 2)
fi
fail() { echo "FAIL: $*" >&2; exit 1; }
same() { cmp -s "$1/report.json" "$2/report.json" && cmp -s "$1/report.md" "$2/report.md" ||
  fail "reports of $1 and $2 differ"; }
expect_error() {  # expect_error PATTERN COMMAND...: exit 2 and PATTERN on stderr
  local pattern=$1; shift
  set +e; "$@" > "$work/out" 2> "$work/err"; local rc=$?; set -e
  [ "$rc" = 2 ] || fail "exit $rc (want 2): $*"
  grep -q -- "$pattern" "$work/err" || fail "no '$pattern' in: $(cat "$work/err")"
}

# 1. One process = forked jobs = MPI ranks.
"$bin" run "$work/one" "${small[@]}" > /dev/null
grep -q '"status": "complete"' "$work/one/report.json" || fail "single-process campaign incomplete"
grep -q '"cases_passed": 120' "$work/one/report.json" || fail "single-process campaign: not 120 cases"
if [ -n "$ssmv" ]; then
  "$ssmv" campaign run "$work/jobs" "${small[@]}" --jobs 2 > /dev/null  # ssmv execs ssmv-campaign
else
  "$bin" run "$work/jobs" "${small[@]}" --jobs 2 > /dev/null
fi
same "$work/one" "$work/jobs"
if [ ${#mpi[@]} -gt 0 ]; then
  "${mpi[@]}" "$bin" run "$work/mpi" "${small[@]}" > /dev/null 2>&1
  same "$work/one" "$work/mpi"
  grep -q '"rank": 1' "$work/mpi/units/"*.json || fail "rank 1 ran no unit"
fi

# 2. A killed rank (or job): rank 1 dies after its first unit.
kill_and_resume() {  # kill_and_resume FOLDER JOBS LAUNCHER...
  local dir=$1 jobs=$2; shift 2
  set +e; SSMV_CAMPAIGN_KILL=1:1 "$@" "$bin" run "$dir" "${small[@]}" --jobs "$jobs" > /dev/null 2>&1; set -e
  grep -q '"status": "incomplete"' "$dir/report.json" || fail "$dir: report not incomplete after the kill"
  local rerun first
  rerun=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["missing"][0]["rerun"])' "$dir/report.json")
  first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["missing"][0]["unit"])' "$dir/report.json")
  case "$rerun" in *"--only $first"*) ;; *) fail "rerun line '$rerun' does not name $first";; esac
  set +e; eval "$rerun" > /dev/null 2>&1; set -e  # exit 3 while other units are still missing
  [ -f "$dir/units/$first.json" ] || fail "rerun of $first wrote no result"
  if python3 -c 'import json,sys; sys.exit(sys.argv[2] not in [m["unit"] for m in json.load(open(sys.argv[1]))["missing"]])' \
      "$dir/report.json" "$first"; then fail "report still names $first missing after its rerun"; fi
  "$@" "$bin" run "$dir" > /dev/null 2>&1  # resume: the rest
  same "$work/one" "$dir"
}
kill_and_resume "$work/killed-job" 2 env  # no MPI: job 1 of --jobs 2 dies
if [ ${#mpi[@]} -gt 0 ]; then kill_and_resume "$work/killed-rank" 1 "${mpi[@]}"; fi

# 3. A failing property (Campaign.FailsLargeDecodeCases, failing_properties.cpp): exit 1, each unit's shrunk
#    counterexample in counterexamples/ and in the report, the same report on 1 and 2 processes.
failing=(--properties Campaign.FailsLargeDecodeCases,SsuContract.StateFp32 --cases 60 --multiplier 1 --units 2)
failing_campaign() {  # failing_campaign FOLDER LAUNCHER...
  local dir=$1; shift
  set +e; "$@" "$bin" run "$dir" "${failing[@]}" > /dev/null 2>&1; local rc=$?; set -e
  [ "$rc" = 1 ] || fail "$dir: exit $rc for a failing campaign (want 1)"
  for k in 0 1; do
    grep -q '"verdict": "VIOLATION"' "$dir/counterexamples/Campaign.FailsLargeDecodeCases.unit$k.json" ||
      fail "$dir: no VIOLATION counterexample for unit $k"
  done
  grep -q '"counterexamples": 2' "$dir/report.json" || fail "$dir: report does not count 2 counterexamples"
}
failing_campaign "$work/failing-one" env
if [ ${#mpi[@]} -gt 0 ]; then failing_campaign "$work/failing-mpi" "${mpi[@]}"; same "$work/failing-one" "$work/failing-mpi"; fi

# 4. Bad input.
expect_error "use at most 4" "$bin" run "$work/b1" --properties SsuContract.StateFp32 --cases 8 --multiplier 1 --units 4 --jobs 5
expect_error "fewer than the 4 units" "$bin" run "$work/b2" --properties SsuContract.StateFp32 --cases 3 --multiplier 1 --units 4
if [ "$("$bin" gpus)" = 0 ]; then
  expect_error "needs a GPU and no rank has one" "$bin" run "$work/b3" --properties GpuProperty.SsuContract --cases 4 --multiplier 1 --units 2
fi
cp -r "$work/one" "$work/corrupt"
rm "$work/corrupt/units/SsuContract.StateFp32#2.json"
head -c 50 "$work/one/units/SsuContract.StateFp32#1.json" > "$work/corrupt/units/SsuContract.StateFp32#1.json"
expect_error "corrupt unit result .*SsuContract.StateFp32#1.json" "$bin" run "$work/corrupt"
cp -r "$work/one" "$work/wrongtype"
sed -i 's/"cases_passed": [0-9]*/"cases_passed": "ten"/' "$work/wrongtype/units/Generators.NormalValuesExact#0.json"
expect_error "corrupt unit result .*Generators.NormalValuesExact#0.json" "$bin" run "$work/wrongtype"
expect_error "another plan" "$bin" run "$work/one" --seed 8
if [ ${#mpi[@]} -gt 0 ]; then
  expect_error "use at most 1" "${mpi[@]}" "$bin" run "$work/b4" --properties SsuContract.StateFp32 --cases 4 --multiplier 1 --units 1 --only SsuContract.StateFp32#0
fi

if [ ${#mpi[@]} -eq 0 ]; then
  echo "campaign_test: the steps without MPI passed; MPI steps skipped (no mpirun, or a build without MPI)"
  exit 77
fi
echo "campaign_test: all steps passed"
