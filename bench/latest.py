#!/usr/bin/env python3
"""The latest same-run benchmark figures in one JSON file, bench/latest.json (issue 32, goal 4).

Reads the standard output of the benchmark programs of ONE device run and writes one key per
table row, in µs (numbers rounded to 2 decimals), ssmv's beside its competitors', so that a
regression shows at a glance:

  --ssmv-ssu LOG          bench/ssu/ssu_bench: ssu_b{batch}_t{tokens}_{state}_us from the first row
                          of each (state, batch, tokens) (the kernel launch() picks), and
                          ssu_b..._{kernel}_us from each other kernel's row after it (per_item,
                          octet, tokens)
  --flashinfer LOG...     scripts/flashinfer/fi_bench.cu (fi_bench_nt2, _nt4, _nt8):
                          flashinfer_ssu_b{batch}_t{tokens}_{state}_us
  --triton-ssu LOG        scripts/triton/ssu_bench.py (mamba_ssm): triton_ssu_b..._us
  --vllm-ssu LOG          scripts/triton/vllm_ssu_bench.py: vllm_ssu_b..._us
  --ssmv-chunk-scan LOG   bench/chunk_scan/chunk_scan_bench: from the "S x T tokens production"
                          line (stage (e) on mma.sync), chunk_scan_{S}x{T}_us (its total),
                          chunk_scan_{S}x{T}_stage_a_us .. _stage_e_us, chunk_scan_{S}x{T}_floor_us
                          and chunk_scan_{S}x{T}_stage_e_kernel (a string)
  --triton-chunk-scan LOG scripts/triton/chunk_scan_bench.py: triton_chunk_scan_1x{T}_us
                          (rows of kernel mamba_ssm; vllm_chunk_scan_1x{T}_us for rows of vllm)

Each option takes one or more logs and may be repeated; at least one is needed. A log is either
the program's output alone or a log of bench/device_steps.sh steps (bench/ssu/device_run.sh's
$OUT/log: "=== CMD (time)" ... "=== rc=N: CMD"), of which only the steps whose command names the
program are read (./ssu_bench, not ./ssu_bench_g1; fi_bench_nt*; .../ssu_bench.py, and so on),
so that one such log can be given to several options.

Besides the figures: "commit" (ssmv's: --commit, else `git rev-parse HEAD` of this checkout; pass
the commit the binaries were built from when it is not HEAD), "date" (--date, else the earliest
step time of the logs, else now; UTC ISO 8601), "device" (the GPU of the logs' "device NAME, N
SMs" lines or nvidia-smi's CSV, null if none) and "sources": for each input the logs it came from
(their file names), their header lines (FlashInfer's, mamba_ssm's and vLLM's name the commit where
the program prints it) and the keys that more than one row gave with the same value ("repeated").

Refused, with a message, exit status 1 and nothing written: a missing log, a log with no rows for
its option, two different values of one key, logs of different GPUs, a (state, batch, tokens) of
ssu_bench with one kernel's row twice in one step. The file is written to a
temporary name beside --out (default bench/latest.json of this checkout) and renamed.

Usage, with the logs of one device call in R (bench/ssu/device_run.sh's step log R/log holds
ssu_bench, fi_bench_nt* and scripts/triton/ssu_bench.py; the other three programs' standard
output redirected to a file each in the same call):
  /usr/bin/python3 bench/latest.py --commit SHA --ssmv-ssu R/log --flashinfer R/log \\
      --triton-ssu R/log --vllm-ssu R/vllm_ssu.log --ssmv-chunk-scan R/chunk_scan.log \\
      --triton-chunk-scan R/triton_chunk_scan.log
It needs Python's standard library only, so it may also end the device call itself
(--out $OUT/latest.json; --commit where the device's copy of the tree is not a git checkout).
Tests: bench/tests/latest_test.py (CTest latest_test).
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUM = r"(\d+(?:\.\d+)?)"


class LatestError(Exception):
    """A refusal: the message says why; nothing is written."""


# ssu_bench.cu: "%-6s %6d %6d %-9s %10.2f %10.2f %10.0f %10.0f %7.0f%% %7.0f%%"
SSU_ROW = re.compile(rf"^(fp32|bf16|fp16)\s+(\d+)\s+(\d+)\s+(\S+)\s+{NUM}\s+{NUM}\s+\S+\s+\S+\s+\S+%\s+\S+%\s*$")
# fi_bench.cu, scripts/triton/ssu_bench.py, vllm_ssu_bench.py: "%-6s %6d %6d %10.2f"
STATE_ROW = re.compile(rf"^(fp32|bf16|fp16)\s+(\d+)\s+(\d+)\s+{NUM}\s*$")
# chunk_scan_bench.cpp: "%-22s %-10s e:%-8s total %8.1f us | a %6.1f b %6.1f c %6.1f d %6.1f e %6.1f
# | floor %.1f us (...)"
CHUNK_ROW = re.compile(rf"^(\d+) x (\d+) tokens\s+production\s+e:(\S+)\s+total\s+{NUM}\s+us\s+\|"
                       + "".join(rf"\s+{s}\s+{NUM}" for s in "abcde") + rf"\s+\|\s+floor\s+{NUM}\s+us")
# scripts/triton/chunk_scan_bench.py: "%-10s %6d %10.2f"
KERNEL_ROW = re.compile(rf"^(mamba_ssm|vllm)\s+(\d+)\s+{NUM}\s*$")
DEVICE_LINE = re.compile(r"^device (.+?), \d+ SMs")
STEP_HEAD = re.compile(r"^=== (.*) \((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\)$")
STEP_END = re.compile(r"^=== rc=-?\d+: ")


def parse_ssmv_ssu(lines):
    """(key, value) of ssu_bench's rows: the first of each (state, batch, tokens) is the automatic choice
    (ssu_b256_t2_bf16_us), the others name their kernel (ssu_b256_t2_bf16_per_item_us, …_octet_us)."""
    rows, kernels = [], {}
    for line in lines:
        m = SSU_ROW.match(line)
        if not m:
            continue
        state, batch, tokens, kernel, us = m.group(1, 2, 3, 4, 6)
        base = f"ssu_b{batch}_t{tokens}_{state}"
        seen = kernels.setdefault(base, [])
        if kernel in seen:
            raise LatestError(f"{state} batch {batch} tokens {tokens}: row {len(seen) + 1} repeats kernel {kernel}; "
                              "ssu_bench prints the automatic choice, then each other kernel once (two runs in one "
                              "step?)")
        seen.append(kernel)
        rows.append((base + "_us" if len(seen) == 1 else f"{base}_{kernel.replace('-', '_')}_us", us))
    return rows


def state_rows(prefix):
    """The parser of the "state batch tokens us" tables, keys {prefix}_b{batch}_t{tokens}_{state}_us."""
    def parse(lines):
        return [(f"{prefix}_b{m.group(2)}_t{m.group(3)}_{m.group(1)}_us", m.group(4))
                for m in map(STATE_ROW.match, lines) if m]
    return parse


def parse_ssmv_chunk_scan(lines):
    """(key, value) of chunk_scan_bench's production lines (stage (e) on mma.sync): the shape's
    keys. The first line of each (shape, stage-e kernel) counts."""
    rows, seen = [], set()
    for m in map(CHUNK_ROW.match, lines):
        if not m or m.group(1, 2, 3) in seen:
            continue
        seen.add(m.group(1, 2, 3))
        base = f"chunk_scan_{m.group(1)}x{m.group(2)}"
        rows += [(base + "_us", m.group(4)), (base + "_stage_e_kernel", m.group(3)), (base + "_floor_us", m.group(10))]
        rows += [(f"{base}_stage_{s}_us", m.group(5 + i)) for i, s in enumerate("abcde")]
    return rows


def parse_triton_chunk_scan(lines):
    prefix = {"mamba_ssm": "triton", "vllm": "vllm"}
    return [(f"{prefix[m.group(1)]}_chunk_scan_1x{m.group(2)}_us", m.group(3)) for m in map(KERNEL_ROW.match, lines) if m]


# (option's name, the program, its command's basename in a step log, parser, its header lines)
INPUTS = (
    ("ssmv_ssu", "bench/ssu/ssu_bench", r"ssu_bench", parse_ssmv_ssu, r"device "),
    ("flashinfer", "fi_bench_nt* (scripts/flashinfer/fi_bench.cu)", r"fi_bench_nt\d+", state_rows("flashinfer_ssu"),
     r"FlashInfer |[0-9a-f]{40}$"),
    ("triton_ssu", "scripts/triton/ssu_bench.py", r"ssu_bench\.py", state_rows("triton_ssu"), r"mamba_ssm \S+ Triton "),
    ("vllm_ssu", "scripts/triton/vllm_ssu_bench.py", r"vllm_ssu_bench\.py", state_rows("vllm_ssu"), r"vLLM \S+ Triton "),
    ("ssmv_chunk_scan", "bench/chunk_scan/chunk_scan_bench", r"chunk_scan_bench", parse_ssmv_chunk_scan, r"device "),
    ("triton_chunk_scan", "scripts/triton/chunk_scan_bench.py", r"chunk_scan_bench\.py", parse_triton_chunk_scan,
     r"device |(mamba_ssm|vLLM) \S+ Triton "),
)


def option(name):
    return "--" + name.replace("_", "-")


def steps(lines, program):
    """The parts of a log the program wrote, and the step times: the whole log if it has no
    bench/device_steps.sh headers, else each step whose command has a word of basename program."""
    if not any(STEP_HEAD.match(line) for line in lines):
        return [lines], []
    parts, times, part = [], [], None
    for line in lines:
        head = None if STEP_END.match(line) else STEP_HEAD.match(line)
        if head:
            times.append(head.group(2))
            ours = any(re.fullmatch(program, os.path.basename(w)) for w in head.group(1).split())
            part = [] if ours else None
            if ours:
                parts.append(part)
        elif STEP_END.match(line):
            part = None
        elif part is not None:
            part.append(line)
    return parts, times


def devices(lines):
    """GPU names of the "device NAME, N SMs" lines and of nvidia-smi's CSV (the line after its header)."""
    names = {m.group(1) for m in map(DEVICE_LINE.match, lines) if m}
    names |= {lines[i + 1].split(",")[0].strip() for i, line in enumerate(lines[:-1]) if line.startswith("name, ")}
    return names


def gather(inputs):
    """{key: value text}, sources, devices, step times of [(name, paths)]."""
    values, sources, gpus, times = {}, {}, set(), []
    for name, paths in inputs:
        _, what, program, parse, header = next(i for i in INPUTS if i[0] == name)
        # File names only: the folder is the device call's ($OUT), a path of that machine.
        source = sources[name] = {"logs": [os.path.basename(q) for q in paths], "lines": []}
        repeated = set()
        for path in paths:
            with open(path, errors="replace") as f:
                lines = f.read().splitlines()
            gpus |= devices(lines)
            parts, step_times = steps(lines, program)
            times += step_times
            found = False
            for part in parts:
                source["lines"] += [s for s in part if re.match(header, s) and s not in source["lines"]]
                try:
                    rows = parse(part)
                except LatestError as e:
                    raise LatestError(f"{path}: {e}") from None
                found = found or bool(rows)
                for key, value in rows:
                    if key in values and values[key][0] != value:
                        raise LatestError(f"{key}: {values[key][0]} in {values[key][1]}, {value} in {path} "
                                          "(two values: not one run?)")
                    if key in values:
                        repeated.add(key)
                    values[key] = (value, path)
            if not found:
                raise LatestError(f"{path}: no rows of {what} ({option(name)})")
        if repeated:
            source["repeated"] = sorted(repeated)
    return {k: v for k, (v, _) in values.items()}, sources, gpus, times


def ssmv_commit():
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        raise LatestError(f"git rev-parse HEAD in {REPO} failed ({e}); pass --commit") from None


def build(args):
    """The document to write, from the parsed options."""
    inputs = [(name, getattr(args, name)) for name, *_ in INPUTS if getattr(args, name)]
    missing = [p for _, paths in inputs for p in paths if not os.path.isfile(p)]
    if missing:
        raise LatestError("no such log: " + ", ".join(missing))
    values, sources, gpus, times = gather(inputs)
    if len(gpus) > 1:
        raise LatestError("logs of different GPUs: " + ", ".join(sorted(gpus)) + " (not one run)")
    doc = {k: v if k.endswith("_kernel") else round(float(v), 2) for k, v in values.items()}
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc.update(commit=args.commit or ssmv_commit(), date=args.date or min(times, default=now),
               device=next(iter(gpus), None), sources=sources)
    return doc


def write_atomically(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".latest.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="Details: the docstring of bench/latest.py.")
    for name, what, *_ in INPUTS:
        ap.add_argument(option(name), dest=name, nargs="+", action="extend", metavar="LOG",
                        help=f"output of {what}")
    ap.add_argument("--commit", help="ssmv's commit (default: git rev-parse HEAD)")
    ap.add_argument("--date", help="UTC ISO date of the run (default: the logs' first step time, else now)")
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "latest.json"))
    args = ap.parse_args(argv)
    if not any(getattr(args, name) for name, *_ in INPUTS):
        ap.error("give at least one log")
    try:
        doc = build(args)
        write_atomically(args.out, json.dumps(doc, indent=2, sort_keys=True) + "\n")
    except (LatestError, OSError) as e:
        print(f"latest.py: {e}; nothing written", file=sys.stderr)
        return 1
    figures = sum(1 for k in doc if k.endswith("_us"))
    print(f"{args.out}: {figures} figures, {doc['device']}, commit {doc['commit']}, {doc['date']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
