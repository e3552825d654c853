# Sourced by the device scripts (bench/gpu_suites.sh, bench/ssu/device_run.sh): `step CMD ...`
# runs one step, its output appended to $log (set by the caller) between a header with the time
# and a line with its exit status; `status` keeps the first non-zero one, for the script's exit.
status=0
step() {
  echo "=== $* ($(date -u +%FT%TZ))" | tee -a "$log"
  "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  echo "=== rc=$rc: $*" | tee -a "$log"
  [ $status -eq 0 ] && status=$rc
}
