"""check / assert_within_contract on problems made here: an honest fp32 decode passes, a
planted error is found and named, the kept dump re-runs with `ssmv check`."""

import json
import subprocess
import zipfile

import numpy as np
import pytest

import ssmv
from recurrence import decode_fp32, honest_case

BAD = (6, 1, 2)  # token 6 (sequence 1, token 1), head 1, dim 2: flat index (6·2 + 1)·4 + 2 = 54


def test_honest_fp32_decode_is_within_the_ssu_contract():
    r = ssmv.check(**honest_case())
    assert r.ok and r.verdict in ("EXACT", "WITHIN_CONTRACT"), r
    assert [t.name for t in r.entry.tensors] == ["y", "final_state"]
    y = r["y"]
    assert y.format == "fp32" and y.elements == 8 * 2 * 4
    assert sum(y.counts.values()) == y.elements and y.counts["WITHIN_CONTRACT"] > 0  # not vacuous
    assert 0 < y.max_bound_usage <= 1
    assert y.coord_names == ("sequence", "token", "head", "dim")
    assert y.worst_bound_sources and abs(sum(b.share for b in y.worst_bound_sources) - 1) < 1e-9
    assert r.entry.kernel == "ssu" and r.entry.contract == "ssu"
    assert r.dump is None  # a passing check keeps nothing unless asked
    # What was inferred is said.
    assert "input_format fp32: inferred from the dtype of x, dt, B, C, z (float32)" in r.notes
    assert any(n.startswith("contract not given") for n in r.notes)


def test_batched_layout_and_triton_contract():
    case = honest_case(seqlens=(4, 4), initial_states=False)
    case.pop("cu_seqlens")
    for k in ("x", "dt", "B", "C", "z", "y"):
        case[k] = case[k].reshape((2, 4) + case[k].shape[1:])  # [batch, L, ...]
    r = ssmv.assert_within_contract(**case, contract="triton.ssu")
    assert r.ok and r.entry.contract == "triton.ssu"


def test_planted_error_fails_naming_the_element(cex_dir, ssmv_binary):
    case = honest_case()
    case["y"] = case["y"].copy()
    case["y"][BAD] += 1.0
    with pytest.raises(AssertionError) as info:
        ssmv.assert_within_contract(**case, msg="my_kernel's outputs")
    m = str(info.value)
    assert m.startswith("Expected my_kernel's outputs to be within its contract.\n"), m
    assert "tensor 'y' (fp32, 64 elements): VIOLATION" in m
    assert "Mismatched elements (VIOLATION + INVALID): 1 / 64 (1.56%)" in m
    where = "(sequence 1, token 1, head 1, dim 2)"
    assert f"Greatest absolute difference: " in m and f"at index {where} [flat 54]" in m
    assert f"worst element: {where} [flat index 54]: VIOLATION" in m
    assert "bound of worst y[1,1,1,2]:" in m
    assert "tensor 'final_state' (fp32, 256 elements): WITHIN_CONTRACT" in m
    assert "How to read this: docs/report-schema.md" in m
    # The dump is kept where the message says, and `ssmv check DUMP` re-runs it: exit 1.
    dumps = list(cex_dir.glob("*.npz"))
    assert len(dumps) == 1 and f"Dump kept at {dumps[0]} (re-run: ssmv check {dumps[0]})" in m
    assert dumps[0].name.startswith("test_check.py_test_planted_error_fails_naming_the_element")
    assert subprocess.run([ssmv_binary, "check", str(dumps[0])], capture_output=True).returncode == 1


def test_check_returns_the_failing_report_and_keeps_its_dump(cex_dir):
    case = honest_case()
    case["y"] = case["y"].copy()
    case["y"][BAD] = np.nan
    r = ssmv.check(**case)
    assert not r.ok and r["y"].verdict == "INVALID" and r["y"].counts["INVALID"] == 1
    w = r["y"].worst
    assert w.coords == (1, 1, 1, 2) and w.index == 54 and w.ulps is None and w.computed.decimal == "nan"
    assert r.dump and r.dump.startswith(str(cex_dir))


def _message_lines(m):
    """The lines of one failing tensor's part, by their first words."""
    return [line.strip().split(":")[0] for line in m.splitlines()]


def test_message_has_the_cxx_assertions_facts_in_its_order(tmp_path, ssmv_binary):
    """The same lines as verify/reports/report_text.cpp's check_failure_message, in its order: the
    worst element's lines, the verdict counts and the bound sources as ssmv itself prints
    them (its Markdown report and table print them with the same C++ functions)."""
    case = honest_case()
    case["y"] = case["y"].copy()
    case["y"][BAD] += 1.0
    dump = tmp_path / "planted.npz"
    r = ssmv.check(**case, dump=dump)
    assert r.dump == str(dump.resolve()) and not r.ok
    m = r.failure_message()
    assert _message_lines(m)[:14] == [
        "kernel ssu (contract ssu, device external)",
        "tensor 'y' (fp32, 64 elements)",
        "Mismatched elements (VIOLATION + INVALID)",
        "Greatest absolute difference",
        "Greatest relative difference",
        "Verdicts",
        "ULP distance p50 / p99 / max (valid elements)",
        "Max bound usage (error / bound)",
        "worst element",
        "computed",
        "exact",
        "error",
        "bound of worst y[1,1,1,2]",
        "tensor 'final_state' (fp32, 256 elements)",
    ]
    md = tmp_path / "r.md"
    out = subprocess.run([ssmv_binary, "check", str(dump), "--markdown", str(md)], capture_output=True, text=True)
    markdown = md.read_text()
    y = r["y"]
    for line in y.worst_element_lines():
        assert line in markdown, line
    verdicts = next(line.strip() for line in m.splitlines() if line.strip().startswith("Verdicts:"))
    assert verdicts in markdown
    for t in r.entry.tensors:
        assert t.bound_sources_text() in out.stdout, t.bound_sources_text()


def test_kept_dump_is_self_describing(tmp_path, ssmv_binary):
    case = honest_case()
    r = ssmv.check(**case, dump=tmp_path, contract="triton.ssu", dt_limit=(0.0, float("inf")), source="test")
    with zipfile.ZipFile(r.dump) as z:
        assert "__metadata__.npy" in z.namelist()
    meta = json.loads(bytes(np.load(r.dump)["__metadata__"]))
    assert meta["ssmv.kernel"] == "ssu" and meta["ssmv.contract"] == "triton.ssu"
    assert meta["ssmv.dt_limit"] == "0x0.0p+0,inf" and meta["ssmv.dt_softplus"] == "true"
    assert meta["ssmv.input_format"] == "fp32" and meta["ssmv.source"].endswith(": test")
    again = subprocess.run([ssmv_binary, "check", r.dump, "--json", str(tmp_path / "r.json")], capture_output=True)
    assert again.returncode == 0
    assert json.loads((tmp_path / "r.json").read_text())["entries"][0]["tensors"] == r.json["entries"][0]["tensors"]


def test_dt_limit_must_be_fp32_unless_rounded():
    p = honest_case()
    p.pop("y"), p.pop("final_states")
    y, final = decode_fp32(**{k: v for k, v in p.items() if k != "kernel"}, dt_limit=(0.0, float(np.float32(0.1))))
    with pytest.raises(ValueError, match=r"dt_limit=\(0.0, 0.1\): hi = 0.1 is not an fp32 value .*0x1.99999ap-4"):
        ssmv.check(**p, y=y, final_states=final, dt_limit=(0.0, 0.1))
    r = ssmv.check(**p, y=y, final_states=final, dt_limit=(0.0, 0.1), round_dt_limit=True)
    assert r.ok, r
    assert any("rounded to the nearest fp32, 0x1.99999ap-4 = 0.10000000149011612" in n for n in r.notes)
