#!/usr/bin/env bash
# expect_exit.sh CODE PATTERN COMMAND...: runs COMMAND, passes when it exits with CODE and
# its output (stdout and stderr) contains PATTERN (grep -E). Used by the ssmv CLI tests.
set -u
code=$1; pattern=$2; shift 2
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne "$code" ]; then echo "expect_exit: exit code $rc, expected $code"; exit 1; fi
if ! printf '%s' "$out" | grep -Eq -- "$pattern"; then echo "expect_exit: output lacks /$pattern/"; exit 1; fi
