"""check_mamba3 / assert_mamba3_within_contract with kernel='mamba3_prefill' (mamba_ssm's chunked
prefill mamba3_siso_combined) and kernel='mamba3_handoff' (the prefill over each sequence's first
prefill_tokens, then the step kernel from the state it returned).

The stand-in kernel: the prefill and the hand-off compute the same exact function as the step
kernel run token by token (docs/mamba3-semantics.md §3, §4: the chunked form and the hand-off
are the recurrence over all tokens), so mamba3_recurrence.step_float64 over every token, rounded
once to the output and state formats, gives the exact values rounded to nearest (EXACT wherever
float64 decides the rounding, which the step tests already show): within any contract, with no
assumption on how a kernel rounds. A +1.0 on one y element is a VIOLATION.

The sharp verdict beside the rigorous one (docs/sharp-verdicts.md) is not asserted here: it asks
whether the outputs round as the contract's rounding model declares, and the prefill contracts
declare bf16 stores (the angle, the turned q and k) that the exact values do not make, so the
stand-in's state parts may be called SUSPICIOUS (exit code 3 of `ssmv check`) while every element
is EXACT. Report.ok, and so assert_mamba3_within_contract, is the rigorous verdict."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ssmv
from mamba3_recurrence import honest_case

SEQLENS = (6, 2)  # with prefill_tokens 3: sequence 0 three prefill tokens then three steps, sequence 1 prefill only
K = 3


@pytest.fixture
def case():
    return honest_case(seed=11, seqlens=SEQLENS)


def _recheck(binary, report):
    """`ssmv check DUMP` on the kept dump: the same tensors' results, no VIOLATION (exit 0, or 3 when
    the sharp verdict calls a tensor SUSPICIOUS: see above)."""
    out = Path(report.dump).with_suffix(".json")
    rc = subprocess.run([binary, "check", report.dump, "--json", str(out)], capture_output=True).returncode
    assert rc in (0, 3), rc
    assert json.loads(out.read_text())["entries"][0]["tensors"] == report.json["entries"][0]["tensors"]


def _meta(path):
    return json.loads(bytes(np.load(path)["__metadata__"]))


def test_honest_prefill_passes_under_the_default_production_contract(case):
    r = ssmv.check_mamba3(**case, kernel="mamba3_prefill")
    assert r.ok and r.verdict == "EXACT", r
    assert r.entry.kernel == "mamba3_prefill" and r.entry.contract == "mamba3_siso_combined.production"
    assert [t.name for t in r.entry.tensors] == ["y", "final_angle_state", "final_state", "final_B_prev",
                                                 "final_x_prev"]
    y = r["y"]
    assert y.elements == 8 * 2 * 4 and y.counts["EXACT"] == y.elements and 0 < y.max_bound_usage <= 1
    assert "chunk_size not given: ssmv's default 64 (mamba3_siso_combined's default chunk_size)" in r.notes
    assert any(n.startswith("contract not given: ssmv's default mamba3_siso_combined.production") for n in r.notes)


def test_prefill_in_chunks_within_the_host_emulation_contract(case, tmp_path, ssmv_binary):
    """chunk_size 4: sequence 0 one whole chunk and a partial one, sequence 1 shorter than a chunk.
    States one fp32 ULP off the correct rounding (what a kernel's own rounding gives) are
    WITHIN_CONTRACT; the dump carries the kernel and its options for `ssmv check DUMP`."""
    case["final_states"] = (case["final_states"].view(np.uint32) + np.uint32(1)).view(np.float32)
    r = ssmv.assert_mamba3_within_contract(**case, kernel="mamba3_prefill", chunk_size=4,
                                           contract="mamba3_siso_combined.host_emulation", dump=tmp_path)
    assert r.entry.kernel == "mamba3_prefill" and r.entry.contract == "mamba3_siso_combined.host_emulation"
    s = r["final_states"]
    assert s.verdict == "WITHIN_CONTRACT" and s.counts["WITHIN_CONTRACT"] == s.elements, s
    assert not any(n.startswith(("chunk_size not given", "contract not given")) for n in r.notes)
    meta = _meta(r.dump)
    assert (meta["ssmv.kernel"], meta["ssmv.chunk_size"], meta["ssmv.contract"]) == \
        ("mamba3_prefill", "4", "mamba3_siso_combined.host_emulation")
    assert not any(k in meta for k in ("ssmv.prefill_tokens", "ssmv.decode_contract"))
    _recheck(ssmv_binary, r)


def test_honest_handoff_passes(case, tmp_path, ssmv_binary):
    r = ssmv.assert_mamba3_within_contract(**case, kernel="mamba3_handoff", prefill_tokens=K, chunk_size=2,
                                           dump=tmp_path)
    assert r.entry.kernel == "mamba3_handoff"
    assert r.entry.contract == "mamba3_siso_combined.production then mamba3_siso_step.production"
    assert r.verdict == "EXACT" and r["y"].counts["EXACT"] == r["y"].elements
    assert any(n.startswith("decode_contract not given: ssmv's default mamba3_siso_step.production") for n in r.notes)
    meta = _meta(r.dump)
    assert (meta["ssmv.kernel"], meta["ssmv.prefill_tokens"], meta["ssmv.chunk_size"]) == ("mamba3_handoff", "3", "2")
    assert not any(k in meta for k in ("ssmv.contract", "ssmv.decode_contract"))
    _recheck(ssmv_binary, r)
    # Both contracts named: the prefill's (contract) and the step's (decode_contract).
    r = ssmv.check_mamba3(**case, kernel="mamba3_handoff", prefill_tokens=np.int64(K),
                          contract="mamba3_siso_combined.host_emulation",
                          decode_contract="mamba3_siso_step.host_emulation", dump=tmp_path / "both.npz")
    assert r.ok and r.entry.contract == "mamba3_siso_combined.host_emulation then mamba3_siso_step.host_emulation"
    meta = _meta(r.dump)
    assert meta["ssmv.decode_contract"] == "mamba3_siso_step.host_emulation" and "ssmv.chunk_size" not in meta
    assert meta["ssmv.prefill_tokens"] == "3"


@pytest.mark.parametrize("kernel, options, token", [
    ("mamba3_prefill", {}, 7),                               # sequence 1, token 1
    ("mamba3_handoff", {"prefill_tokens": K, "chunk_size": 2}, K),  # sequence 0's first decode step
])
def test_one_wrong_y_element_is_a_violation(case, cex_dir, ssmv_binary, kernel, options, token):
    y = np.asarray(case["y"]).copy()
    y[token, 1, 2] += 1.0
    case["y"] = ssmv.bf16(y)
    with pytest.raises(AssertionError) as info:
        ssmv.assert_mamba3_within_contract(**case, kernel=kernel, **options, msg=f"{kernel}'s outputs")
    m = str(info.value)
    assert m.startswith(f"Expected {kernel}'s outputs to be within its contract.\n"), m
    assert f"kernel {kernel} (contract mamba3_siso_combined.production" in m
    assert "tensor 'y' (bf16, 64 elements): VIOLATION" in m
    assert "Mismatched elements (VIOLATION + INVALID): 1 / 64" in m
    assert "tensor 'final_state' (fp32, 64 elements): EXACT" in m  # the state is not blamed
    dumps = list(cex_dir.glob("*.npz"))
    assert len(dumps) == 1 and _meta(dumps[0])["ssmv.kernel"] == kernel
    assert subprocess.run([ssmv_binary, "check", str(dumps[0])], capture_output=True).returncode == 1
    r = ssmv.check_mamba3(**case, kernel=kernel, **options)
    seq, tok = (0, token) if token < SEQLENS[0] else (1, token - SEQLENS[0])
    assert not r.ok and r["y"].counts["VIOLATION"] == 1 and r["y"].worst.coords == (seq, tok, 1, 2)
    assert r["y"].max_bound_usage > 10


def test_the_kernel_must_be_a_mamba3_kernel(case):
    with pytest.raises(ValueError, match=r"^kernel='mamba3_chunk': expected one of 'mamba3_step', 'mamba3_prefill', "
                                         r"'mamba3_handoff'$"):
        ssmv.check_mamba3(**case, kernel="mamba3_chunk")
    with pytest.raises(ValueError, match=r"^kernel='chunk_scan': expected one of .*'mamba3_handoff' \(Mamba2's kernel: "
                                         r"check it with ssmv.check\(\)\)$"):
        ssmv.assert_mamba3_within_contract(**case, kernel="chunk_scan")
    with pytest.raises(ValueError, match=r"^kernel=None: expected one of"):
        ssmv.check_mamba3(**case, kernel=None)
    assert ssmv.MAMBA3_KERNELS == ("mamba3_step", "mamba3_prefill", "mamba3_handoff")
    # and check() sends every Mamba-3 kernel to check_mamba3()
    with pytest.raises(ValueError, match=r"^kernel='mamba3_prefill': a Mamba-3 kernel, whose tensors are not "
                                         r"Mamba2's: check it with ssmv.check_mamba3\(kernel='mamba3_prefill', "):
        ssmv.check(x=case["x"], y=case["y"], kernel="mamba3_prefill")


def test_options_each_kernel_refuses(case):
    """ssmv's refusals (dump_reading.cpp), raised before anything runs, naming the argument."""
    with pytest.raises(ValueError, match=r"^chunk_size=64 given for kernel='mamba3_step': the step kernel has no "
                                         r"chunks"):
        ssmv.check_mamba3(**case, chunk_size=64)
    with pytest.raises(ValueError, match=r"^prefill_tokens=3 given for kernel='mamba3_prefill': only "
                                         r"kernel='mamba3_handoff' has a prefill part$"):
        ssmv.check_mamba3(**case, kernel="mamba3_prefill", prefill_tokens=3)
    with pytest.raises(ValueError, match=r"^prefill_tokens=3 given for kernel='mamba3_step'"):
        ssmv.assert_mamba3_within_contract(**case, prefill_tokens=3)
    with pytest.raises(ValueError, match=r"^kernel='mamba3_handoff' needs prefill_tokens \(an integer >= 1\)"):
        ssmv.check_mamba3(**case, kernel="mamba3_handoff")
    with pytest.raises(ValueError, match=r"^decode_contract='mamba3_siso_step.production' given for "
                                         r"kernel='mamba3_prefill': only a hand-off \(kernel='mamba3_handoff'\) has a "
                                         r"decode part$"):
        ssmv.check_mamba3(**case, kernel="mamba3_prefill", decode_contract="mamba3_siso_step.production")
    with pytest.raises(ValueError, match=r"^decode_contract='mamba3_siso_step.production' given for "
                                         r"kernel='mamba3_step'"):
        ssmv.check_mamba3(**case, decode_contract="mamba3_siso_step.production")


def test_option_values(case):
    for bad in (0, -1, 2.0, True, "3", [3, 3]):
        with pytest.raises(ValueError, match=r"^prefill_tokens=.*: expected an integer >= 1, the same for every "
                                             r"sequence"):
            ssmv.check_mamba3(**case, kernel="mamba3_handoff", prefill_tokens=bad)
    for bad in (0, 16.0, False):
        with pytest.raises(ValueError, match=r"^chunk_size=.*: expected an integer >= 1$"):
            ssmv.check_mamba3(**case, kernel="mamba3_prefill", chunk_size=bad)
    with pytest.raises(TypeError, match=r"^decode_contract=3: expected a preset name"):
        ssmv.check_mamba3(**case, kernel="mamba3_handoff", prefill_tokens=K, decode_contract=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'chunk_layout'"):
        ssmv.check_mamba3(**case, kernel="mamba3_prefill", chunk_layout="sequence")


def test_ssmvs_refusals_are_its_messages(case):
    """A contract of the other kernel is ssmv's to refuse: its message, as SsmvError."""
    with pytest.raises(ssmv.SsmvError, match="contract 'mamba3_siso_step.production' is not a Mamba-3 prefill "
                                             "contract: expected mamba3_siso_combined.production"):
        ssmv.check_mamba3(**case, kernel="mamba3_prefill", contract="mamba3_siso_step.production")
    with pytest.raises(ssmv.SsmvError, match="contract 'mamba3_siso_combined.production' is not a Mamba-3 step "
                                             "contract"):
        ssmv.check_mamba3(**case, kernel="mamba3_handoff", prefill_tokens=K,
                          decode_contract="mamba3_siso_combined.production")
    with pytest.raises(ssmv.SsmvError, match="is not a Mamba-3 step contract"):
        ssmv.check_mamba3(**case, contract="mamba3_siso_combined.production")  # the step kernel's default kernel


def test_a_batch_without_cu_seqlens_says_how_to_pack_it(case):
    del case["cu_seqlens"]
    with pytest.raises(ValueError, match=r"^initial_angle_state has shape \[2, 2, 2\]: 2 sequences, but cu_seqlens "
                                         r"is not given \(one sequence of all the tokens\); a batch of S sequences of "
                                         r"L tokens is S·L tokens packed by sequence"):
        ssmv.check_mamba3(**case, kernel="mamba3_prefill")


def test_compare_mamba3_sets_the_prefill_and_the_step_kernel_side_by_side(case):
    """compare_mamba3: the prefill's outputs (the stand-in's) against a step kernel's that differ in
    one y element by one bf16 ULP and hold the angle state one turn (2π) away — explained, the angle
    compared on the circle; then one y element off by +1.0 — unexplained, a VIOLATION of side b."""
    outs = ("y", "final_angle_state", "final_states", "final_B_prev", "final_x_prev")
    problem = {k: v for k, v in case.items() if k not in outs}
    y = np.asarray(case["y"], dtype=np.float32)
    y_b = y.copy()
    y_b.reshape(-1).view(np.uint32)[5] += 0x10000  # the next bf16 value away from zero: one bf16 ULP
    angle = np.asarray(case["final_angle_state"], dtype=np.float32)
    turned = np.where(angle < np.float32(np.pi), angle + np.float32(2 * np.pi), angle - np.float32(2 * np.pi))
    a = ssmv.Mamba3Outputs(y=case["y"], final_angle_state=angle, final_states=case["final_states"],
                           final_B_prev=case["final_B_prev"], final_x_prev=case["final_x_prev"],
                           kernel="mamba3_prefill", chunk_size=4)
    b = dict(y=ssmv.bf16(y_b), final_angle_state=turned.astype(np.float32), final_states=case["final_states"],
             final_B_prev=case["final_B_prev"], final_x_prev=case["final_x_prev"], kernel="mamba3_step")
    r = ssmv.compare_mamba3(a=a, b=b, **problem)
    assert r.ok and r.comparison.explained_all, r
    assert [e.kernel for e in r.entries] == ["mamba3_prefill", "mamba3_step"]
    angle_cmp = r.comparison["final_angle_state"]
    assert angle_cmp.explained == angle.size and angle_cmp.unexplained == 0, angle_cmp
    assert r.comparison["y"].explained == 1 and r.comparison["y"].unexplained == 0
    y_b.reshape(-1)[5] += 1.0
    bad = ssmv.compare_mamba3(a=a, b=dict(b, y=ssmv.bf16(y_b)), **problem)
    assert not bad.ok and bad.comparison["y"].unexplained == 1
    assert bad.entries[1].tensors[0].counts.get("VIOLATION", 0) == 1


def test_compare_mamba3_refuses_missing_problems_and_mamba2_sides(case):
    with pytest.raises(ssmv.InputError, match="the problem is missing"):
        ssmv.compare_mamba3(a=ssmv.Mamba3Outputs(y=case["y"]), b=ssmv.Mamba3Outputs(y=case["y"]))
    with pytest.raises(ssmv.InputError, match="kernel='ssu'"):
        ssmv.compare_mamba3(a=ssmv.Mamba3Outputs(y=case["y"], kernel="ssu"), b=ssmv.Mamba3Outputs(y=case["y"]),
                            x=case["x"])
