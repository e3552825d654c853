#!/usr/bin/python3
"""The CTest report_schema: the JSON reports that `ssmv check`, `ssmv run` and `ssmv compare`
write (report.cpp, report_to_json) validate against docs/report.schema.json (JSON Schema draft
2020-12, python3-jsonschema), and the schema is not vacuous: reports with a field added, a
field missing, an unknown verdict or a ratio that is neither a number nor "inf" are refused.

    report_schema_test.py SSMV_BINARY

The cases: a passing check (the sharp verdict evaluated), a check with a VIOLATION and an
INVALID element (a fixture with one y value changed and one state value NaN), a hand-off (the
sharp verdict not applicable), a block-scaled int16 state, `ssmv run` on the twins (with its
comparison) and `ssmv compare`. Exit 0 when all pass; otherwise each failure names the case and
the JSON path of the field."""

import copy
import json
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SCHEMA = REPO / "docs" / "report.schema.json"
TRITON = REPO / "verify" / "tests" / "triton_fixtures"
FLASHINFER = REPO / "verify" / "tests" / "flashinfer_fixtures"

try:
    from jsonschema import Draft202012Validator
except ImportError:
    sys.exit("report_schema: python3-jsonschema is not installed (Debian: apt-get install python3-jsonschema; "
             "scripts/install-deps.sh)")


def npy_data_offset(entry):
    """Where a .npy entry's data starts (format 1.0: 2-byte header length; 2.0 and 3.0: 4-byte)."""
    major = entry[6]
    if major == 1:
        return 10 + struct.unpack("<H", entry[8:10])[0]
    return 12 + struct.unpack("<I", entry[8:12])[0]


def broken_copy(src, dst):
    """src with y[0] (bf16 patterns) set to 0x4300 (128: far outside any bound) and
    final_states[0] (fp32) set to NaN: a VIOLATION and an INVALID element."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = bytearray(zin.read(info))
            off = npy_data_offset(data)
            header = bytes(data[:off])
            if info.filename == "y.npy":
                assert b"'<i2'" in header or b"'<u2'" in header, header
                data[off:off + 2] = struct.pack("<H", 0x4300)
            elif info.filename == "final_states.npy":
                assert b"'<f4'" in header, header
                data[off:off + 4] = struct.pack("<I", 0x7FC00000)
            zout.writestr(info.filename, bytes(data))


def run(ssmv, args, out, expect_rc):
    proc = subprocess.run([ssmv, *args, "--json", str(out)], capture_output=True, text=True)
    if proc.returncode != expect_rc:
        raise AssertionError(f"ssmv {' '.join(args)}: exit {proc.returncode}, expected {expect_rc}: "
                             f"{proc.stderr.strip()[-2000:]}")
    return json.loads(out.read_text())


def tensors(report):
    return [t for e in report["entries"] for t in e["tensors"]]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    ssmv = sys.argv[1]
    schema = json.loads(SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    failures = []
    with tempfile.TemporaryDirectory(prefix="ssmv-report-schema-") as tmp:
        tmp = Path(tmp)
        broken = tmp / "broken.npz"
        broken_copy(TRITON / "ssu_bf16in_fp32state_z_D_T4.npz", broken)
        cases = {
            "check, passing": (["check", str(TRITON / "ssu_bf16in_fp32state_z_D_T4.npz"), "--quiet"], 0),
            "check, VIOLATION and INVALID": (["check", str(broken), "--quiet"], 1),
            "check, hand-off": (["check", str(TRITON / "example_handoff_K200_fp32state.npz"), "--quiet"], 0),
            "check, int16_scaled state": (["check", str(FLASHINFER / "mtp4_int16state.npz"), "--quiet"], 0),
            "run, twins": (["run", "--device", "twin"], 0),
            "compare": (["compare", "--a", str(TRITON / "example_chunk_scan_T300.npz"),
                         "--b", str(TRITON / "example_ssu_T300_fp32state.npz")], 0),
        }
        reports = {}
        for i, (case, (args, rc)) in enumerate(cases.items()):
            try:
                reports[case] = run(ssmv, args, tmp / f"report{i}.json", rc)
            except AssertionError as e:
                failures.append(f"{case}: {e}")
                continue
            errors = sorted(validator.iter_errors(reports[case]), key=lambda e: e.json_path)
            for e in errors[:10]:
                failures.append(f"{case}: {e.json_path}: {e.message[:300]}")
            print(f"report_schema: {case}: {'ok' if not errors else f'{len(errors)} errors'}")

    # Not vacuous: the cases hold what they are meant to.
    def expect(cond, what):
        if not cond:
            failures.append(f"the cases do not cover {what}")
    if len(reports) == len(cases):
        bad = reports["check, VIOLATION and INVALID"]
        expect({t["verdict"] for t in tensors(bad)} == {"VIOLATION", "INVALID"}, "a VIOLATION and an INVALID tensor")
        expect(any(t["sharp"] and t["sharp"].get("attribution") for t in tensors(bad)), "a sharp attribution")
        expect(all(t["sharp"]["evaluated"] for t in tensors(reports["check, passing"])), "an evaluated sharp verdict")
        expect(not any(t["sharp"]["evaluated"] for t in tensors(reports["check, hand-off"])),
               "a sharp verdict not evaluated (why_not)")
        expect("int16_scaled" in {t["format"] for t in tensors(reports["check, int16_scaled state"])},
               "an int16_scaled tensor")
        expect(all(t["sharp"] is None for t in tensors(reports["run, twins"])), "a report without sharp verdicts")
        expect(reports["compare"]["comparisons"] and reports["compare"]["comparisons"][0]["tensors"][0]["worst"],
               "a comparison with a worst divergent element")

        # The schema refuses what the writer never writes.
        good = reports["check, passing"]
        mutations = {
            "a field added to a tensor": lambda r: r["entries"][0]["tensors"][0].update(extra=1),
            "a required field removed": lambda r: r["entries"][0]["tensors"][0].pop("ulp"),
            "an unknown verdict": lambda r: r["entries"][0].update(verdict="MAYBE"),
            "a ratio that is a string other than 'inf'": lambda r: r["entries"][0]["tensors"][0].update(
                max_bound_usage="1.5"),
            "a format value without its bits": lambda r: r["entries"][0]["tensors"][0]["worst"]["computed"].pop(
                "bits"),
            "an unknown bound source": lambda r: r["entries"][0]["tensors"][0]["worst_bound_sources"][0].update(
                source="luck"),
        }
        for what, mutate in mutations.items():
            r = copy.deepcopy(good)
            mutate(r)
            if validator.is_valid(r):
                failures.append(f"the schema accepts a report with {what}")

    for f in failures:
        print(f"report_schema: FAILED: {f}", file=sys.stderr)
    if failures:
        sys.exit(1)
    print(f"report_schema: {len(reports)} reports valid against {SCHEMA.relative_to(REPO)}")


if __name__ == "__main__":
    main()
