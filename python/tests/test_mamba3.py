"""check_mamba3 / assert_mamba3_within_contract: Mamba-3 SISO step-kernel dumps (kernel
mamba3_step). Honest outputs (the float64 recurrence of mamba3_recurrence.py, rounded once to
the declared formats) pass under both step contracts; a corrupted y element is a VIOLATION named
in the message; argument errors name the argument; Mamba2's options are not arguments."""

import json
import math
import subprocess

import numpy as np
import pytest

import ssmv
from mamba3_recurrence import honest_case, random_problem, step_float64

# Token 3 of the packed axis is sequence 1's token 0 (seqlens 3, 2); head 1, dim 2:
# flat index (3·2 + 1)·4 + 2 = 30 of y [5, 2, 4].
BAD = (3, 1, 2)


@pytest.fixture
def case():
    return honest_case()


def test_honest_outputs_pass_under_the_default_production_contract(case):
    r = ssmv.check_mamba3(**case)
    assert r.ok and r.verdict in ("EXACT", "WITHIN_CONTRACT"), r
    assert r.entry.kernel == "mamba3_step" and r.entry.contract == "mamba3_siso_step.production"
    assert [t.name for t in r.entry.tensors] == ["y", "final_angle_state", "final_state", "final_B_prev",
                                                 "final_x_prev"]
    y = r["y"]
    assert y.format == "bf16" and y.elements == 5 * 2 * 4 and y.coord_names == ("sequence", "token", "head", "dim")
    assert y.counts["EXACT"] == y.elements  # correctly rounded from float64: every element the exact rounding
    assert 0 < y.max_bound_usage <= 1
    assert r["final_states"].format == "fp32" and r["final_states"].elements == 2 * 2 * 4 * 4
    assert r["final_angle_state"].coord_names == ("sequence", "head", "angle")
    assert r.dump is None
    assert "input_format bf16: inferred from the dtype of x, B, C, trap, z (ssmv.bf16)" in r.notes
    assert "output_format bf16: inferred from the dtype of y (ssmv.bf16)" in r.notes
    assert any(n.startswith("state_format fp32: inferred from the dtype of initial_states") for n in r.notes)
    assert any(n.startswith("contract not given: ssmv's default mamba3_siso_step.production") for n in r.notes)


def test_states_off_by_an_fp32_ulp_are_within_the_host_emulation_contract(case):
    """Not only the correctly rounded values pass: every state element one fp32 ULP away (what a
    kernel's own rounding gives) is WITHIN_CONTRACT, and so is fp32 angles' problem."""
    case["final_states"] = (case["final_states"].view(np.uint32) + np.uint32(1)).view(np.float32)
    r = ssmv.assert_mamba3_within_contract(**case, contract="mamba3_siso_step.host_emulation")
    assert r.entry.contract == "mamba3_siso_step.host_emulation"
    s = r["final_states"]
    assert s.verdict == "WITHIN_CONTRACT" and s.counts["WITHIN_CONTRACT"] == s.elements, s
    fp32_angles = honest_case(seed=5, bf16_angles=False, seqlens=(4,), initial=False, D=False, z=False)
    assert fp32_angles["angles"].dtype == np.float32
    r = ssmv.assert_mamba3_within_contract(**fp32_angles)
    assert r["y"].elements == 4 * 2 * 4
    assert any(n.startswith("state_format fp32: inferred from the dtype of final_states") for n in r.notes)


def test_one_sequence_without_cu_seqlens_or_state_outputs():
    p = random_problem(seed=7, seqlens=(3,), H=1, P=4, N=4, R=2, initial=False, z=False)
    y, _ = step_float64(**{k: np.asarray(v) for k, v in p.items()})
    del p["cu_seqlens"]
    r = ssmv.check_mamba3(**p, y=ssmv.bf16(y))
    assert r.ok and [t.name for t in r.entry.tensors] == ["y"], r
    assert "state_format not given and no state tensor to infer it from: fp32 (ssmv's default, the step " \
           "kernel's), the format the four-part state is stored in between tokens" in r.notes


def test_corrupted_y_is_a_violation_named_in_the_message(case, cex_dir, ssmv_binary):
    y = np.asarray(case["y"]).copy()
    y[BAD] += 4.0 + abs(y[BAD])
    case["y"] = ssmv.bf16(y)
    with pytest.raises(AssertionError) as info:
        ssmv.assert_mamba3_within_contract(**case, msg="mamba3_siso_step's outputs")
    m = str(info.value)
    assert m.startswith("Expected mamba3_siso_step's outputs to be within its contract.\n"), m
    assert "kernel mamba3_step (contract mamba3_siso_step.production, device external): VIOLATION" in m
    assert "tensor 'y' (bf16, 40 elements): VIOLATION" in m
    assert "Mismatched elements (VIOLATION + INVALID): 1 / 40 (2.5%)" in m
    where = "(sequence 1, token 0, head 1, dim 2)"
    assert f"worst element: {where} [flat index 30]: VIOLATION" in m
    assert f"at index {where} [flat 30]" in m
    assert "tensor 'final_state' (fp32, 64 elements): EXACT" in m  # the state is not blamed
    dumps = list(cex_dir.glob("*.npz"))
    assert len(dumps) == 1 and f"Dump kept at {dumps[0]} (re-run: ssmv check {dumps[0]})" in m
    assert dumps[0].name.startswith("test_mamba3.py_test_corrupted_y_is_a_violation")
    # The kept dump is self-describing: `ssmv check DUMP` re-runs it (exit 1: a VIOLATION).
    meta = json.loads(bytes(np.load(dumps[0])["__metadata__"]))
    assert meta["ssmv.kernel"] == "mamba3_step" and "ssmv.contract" not in meta
    assert (meta["ssmv.input_format"], meta["ssmv.state_format"], meta["ssmv.output_format"]) == \
        ("bf16", "fp32", "bf16")
    assert not any(k in meta for k in ("ssmv.dt_softplus", "ssmv.dt_limit", "ssmv.chunk_size"))
    assert subprocess.run([ssmv_binary, "check", str(dumps[0])], capture_output=True).returncode == 1
    # check_mamba3 returns the failing report instead.
    r = ssmv.check_mamba3(**case)
    assert not r.ok and r["y"].counts["VIOLATION"] == 1 and r["y"].worst.coords == (1, 0, 1, 2)


def test_kept_dump_holds_the_options(tmp_path, case, ssmv_binary):
    r = ssmv.check_mamba3(**case, contract="mamba3_siso_step.host_emulation", source="test", dump=tmp_path)
    meta = json.loads(bytes(np.load(r.dump)["__metadata__"]))
    assert meta["ssmv.contract"] == "mamba3_siso_step.host_emulation" and meta["ssmv.source"].endswith(": test")
    with np.load(r.dump) as z:
        assert z["x"].dtype == np.uint16 and z["angles"].dtype == np.uint16  # bf16 as bit patterns
        assert z["dt"].dtype == np.float32 and z["cu_seqlens"].dtype == np.int64
    out = tmp_path / "r.json"
    assert subprocess.run([ssmv_binary, "check", r.dump, "--json", str(out)], capture_output=True).returncode == 0
    assert json.loads(out.read_text())["entries"][0]["tensors"] == r.json["entries"][0]["tensors"]


def test_outputs_may_hold_nan(case):
    case["final_angle_state"] = case["final_angle_state"].copy()
    case["final_angle_state"][1, 0, 1] = np.nan
    r = ssmv.check_mamba3(**case)
    assert r["final_angle_state"].verdict == "INVALID" and r["y"].ok and not r.ok


def test_a_missing_tensor():
    case = honest_case()
    del case["adt"]
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'adt'"):
        ssmv.check_mamba3(**case)
    with pytest.raises(ValueError, match=r"^adt is missing: a Mamba-3 problem needs x, B, C, dt, adt, trap, angles, "
                                         r"B_bias and C_bias$"):
        ssmv.check_mamba3(**case, adt=None)
    with pytest.raises(ValueError, match=r"^y is missing: pass the kernel's output y"):
        ssmv.check_mamba3(**dict(honest_case(), y=None))


def test_wrong_ranks(case):
    with pytest.raises(ValueError, match=r"^x has shape \[5, 2\]: expected \[T, H, P\]$"):
        ssmv.check_mamba3(**dict(case, x=np.asarray(case["x"])[:, :, 0]))
    stacked = np.asarray(case["x"]).reshape(5, 1, 2, 4)  # [launches, batch, H, P]
    with pytest.raises(ValueError, match=r"^x has shape \[5, 1, 2, 4\]: expected \[T, H, P\] \(launches stacked "
                                         r"\[L, batch, \.\.\.\]: pack them by sequence"):
        ssmv.check_mamba3(**dict(case, x=stacked))
    with pytest.raises(ValueError, match=r"^B has shape \[5, 1, 1, 4\]: expected \[T, G, N\] \(SISO: squeeze the "
                                         r"rank axis of a \[T, G, 1, N\] B; launches stacked"):
        ssmv.check_mamba3(**dict(case, B=np.asarray(case["B"])[:, :, None]))
    with pytest.raises(ValueError, match=r"^D has shape \[2, 4\]: expected \[H\] \(one D per head\) \(mamba_ssm's "
                                         r"Mamba-3 D is per head\)"):
        ssmv.check_mamba3(**dict(case, D=np.ones((2, 4), np.float32)))
    with pytest.raises(ValueError, match=r"^initial_B_prev has shape \[2, 1, 2, 4\]: expected \[S, H, N\] \(the "
                                         r"layer's k_state \[S, 1, H, N\]: pass k_state\[:, 0\]\)"):
        ssmv.check_mamba3(**dict(case, initial_B_prev=case["initial_B_prev"][:, None]))
    with pytest.raises(ValueError, match=r"^B_bias has shape \[4\]: expected \[H, N\]$"):
        ssmv.check_mamba3(**dict(case, B_bias=case["B_bias"][0]))


def test_mamba2_options_are_not_arguments(case):
    with pytest.raises(TypeError, match="unexpected keyword argument 'dt_softplus'"):
        ssmv.check_mamba3(**case, dt_softplus=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'A'"):
        ssmv.assert_mamba3_within_contract(**case, A=np.array([-1.0, -2.0], np.float32))
    # and check() sends a Mamba-3 kernel here
    with pytest.raises(ValueError, match=r"^kernel='mamba3_step': a Mamba-3 kernel, whose tensors are not Mamba2's: "
                                         r"check it with ssmv.check_mamba3\(\)"):
        ssmv.check(x=case["x"], y=case["y"], kernel="mamba3_step")


def test_the_four_part_state_whole_or_not_at_all(case):
    with pytest.raises(ValueError, match=r"^initial_angle_state, initial_states, initial_B_prev given without "
                                         r"initial_x_prev: the initial four-part state"):
        ssmv.check_mamba3(**dict(case, initial_x_prev=None))


def test_states_of_several_sequences_need_cu_seqlens(case):
    del case["cu_seqlens"]
    with pytest.raises(ValueError, match=r"^initial_angle_state has shape \[2, 2, 2\]: 2 sequences, but cu_seqlens "
                                         r"is not given"):
        ssmv.check_mamba3(**case)


def test_formats_and_values(case):
    with pytest.raises(TypeError, match=r"^angles has dtype float16: angles holds bf16 values"):
        ssmv.check_mamba3(**dict(case, angles=np.asarray(case["angles"]).astype(np.float16)))
    with pytest.raises(ValueError, match=r"^angles\[0, 0, 0\] = .* is not an fp32 value"):
        ssmv.check_mamba3(**dict(case, angles=np.asarray(case["angles"], np.float64) + 1e-12))
    with pytest.raises(ValueError, match=r"^dt\[0, 0\] = 0.1 is not an fp32 value"):
        dt = np.asarray(case["dt"], np.float64)
        dt[0, 0] = 0.1
        ssmv.check_mamba3(**dict(case, dt=dt))
    with pytest.raises(TypeError, match=r"^dt has dtype int16 \(bf16 bit patterns\): dt holds fp32 values"):
        ssmv.check_mamba3(**dict(case, dt=np.zeros((5, 2), np.int16)))
    with pytest.raises(TypeError, match=r"^the input tensors disagree on their format \(x ssmv.bf16, B ssmv.bf16, "
                                        r"C ssmv.bf16, trap float32, z ssmv.bf16\): pass input_format="):
        ssmv.check_mamba3(**dict(case, trap=np.asarray(case["trap"])))
    with pytest.raises(ValueError, match=r"^output_format='int8': not a format"):
        ssmv.check_mamba3(**case, output_format="int8")
    adt = case["adt"].copy()
    adt[2, 1] = np.inf
    with pytest.raises(ValueError, match=r"^adt\[2, 1\] = inf: inputs must be finite"):
        ssmv.check_mamba3(**dict(case, adt=adt))


def test_float64_angles_holding_fp32_values_are_fp32(case):
    """float64 angles (and fp32 tensors) holding fp32 values are read as fp32, with a note; the
    report is the one of float32 angles."""
    fp32 = ssmv.check_mamba3(**dict(case, angles=np.asarray(case["angles"])))  # bf16 values as float32
    wide = ssmv.check_mamba3(**dict(case, angles=np.asarray(case["angles"], np.float64),
                                    dt=case["dt"].astype(np.float64)))
    assert fp32.ok and wide.json["entries"][0]["tensors"] == fp32.json["entries"][0]["tensors"]
    assert any(n.startswith("angles float64: read as fp32 values") for n in wide.notes)


def test_ssmvs_refusals_are_its_messages(case):
    with pytest.raises(ssmv.SsmvError, match="contract 'ssu' is not a Mamba-3 step contract"):
        ssmv.check_mamba3(**case, contract="ssu")
    adt = case["adt"].copy()
    adt[1, 0] = 0.5
    with pytest.raises(ssmv.SsmvError, match=r"adt > 0 at 1 of 10 \(token, head\) pairs"):
        ssmv.check_mamba3(**dict(case, adt=adt))  # the production contract's exp budget is for adt <= 0


def test_torch_bf16_tensors(case):
    torch = pytest.importorskip("torch")
    want = ssmv.check_mamba3(**case).json["entries"][0]["tensors"]
    tensors = {}
    for k, v in case.items():
        if isinstance(v, ssmv.BF16Array):
            tensors[k] = torch.from_numpy(np.asarray(v.bits).astype(np.int16)).view(torch.bfloat16)
        else:
            tensors[k] = torch.from_numpy(np.ascontiguousarray(v))
    r = ssmv.check_mamba3(**tensors)
    assert r.json["entries"][0]["tensors"] == want
    assert "input_format bf16: inferred from the dtype of x, B, C, trap, z (torch.bfloat16)" in r.notes


def test_recurrence_reference_matches_the_semantics_by_hand():
    """mamba3_recurrence.step_float64 on one token of one head, worked out by hand: the test's own
    reference must be the §3 recurrence (λ, β, γ, the turn of pair 0 only, D, the gate)."""
    x, B, C = np.array([[[2.0]]]), np.array([[[1.0, 0.0, 0.5, 0.0]]]), np.array([[[0.0, 1.0, 0.0, 0.0]]])
    dt, adt, trap, angles = np.array([[0.5]]), np.array([[-0.25]]), np.array([[0.0]]), np.array([[[1.0]]])
    zero = np.zeros((1, 4))
    init = dict(initial_angle_state=np.array([[[0.25]]]), initial_states=np.zeros((1, 1, 1, 4)),
                initial_B_prev=np.array([[[0.0, 0.0, 1.0, 0.0]]]), initial_x_prev=np.array([[3.0]]))
    y, final = step_float64(x, B, C, dt, adt, trap, angles, zero, zero, D=np.array([0.5]), z=np.array([[[1.0]]]),
                            **init)
    theta = 0.25 + math.pi * math.tanh(1.0) * 0.5
    lam, alpha = 0.5, math.exp(-0.25)
    beta, gamma = 0.5 * 0.5 * alpha, 0.5 * 0.5
    b = np.array([math.cos(theta), math.sin(theta), 0.5, 0.0])  # pair (0, 1) turned, (2, 3) not
    c = np.array([-math.sin(theta), math.cos(theta), 0.0, 0.0])
    S = beta * 3.0 * np.array([0.0, 0.0, 1.0, 0.0]) + gamma * 2.0 * b
    want = (S @ c + 0.5 * 2.0) * 1.0 / (1.0 + math.exp(-1.0))
    assert lam == 0.5 and y[0, 0, 0] == pytest.approx(want, rel=1e-14)
    assert final["angle"][0, 0, 0] == pytest.approx(theta, rel=1e-15)
    assert np.allclose(final["S"][0, 0, 0], S, rtol=1e-14) and np.allclose(final["B_prev"][0, 0], b, rtol=1e-14)


def test_nested_lists_give_the_numpy_report(case):
    """Without NumPy arrays: bf16 tensors as ssmv.bf16(lists), the rest as nested lists (float64
    holding fp32 values: the state format must then be declared, as for check())."""
    want = ssmv.check_mamba3(**case).json["entries"][0]["tensors"]
    plain = {k: (ssmv.bf16(v.tolist()) if isinstance(v, ssmv.BF16Array) else v.tolist()) for k, v in case.items()}
    with pytest.raises(TypeError, match=r"^initial_states has dtype float64, which does not say which format"):
        ssmv.check_mamba3(**plain)
    r = ssmv.check_mamba3(**plain, state_format="fp32")
    assert r.json["entries"][0]["tensors"] == want


def test_bf16_k_and_v_states_are_widened_to_an_fp32_state(case):
    """mamba_ssm's step kernel returns V_State in bf16 next to its fp32 SSM state: the bf16 values
    go into the dump as fp32, the state format, and the report is the one of float32 tensors."""
    want = ssmv.check_mamba3(**case).json["entries"][0]["tensors"]
    bf = dict(case, final_x_prev=ssmv.bf16(case["final_x_prev"]),
              initial_x_prev=np.asarray(ssmv.bf16(case["initial_x_prev"]).bits).astype(np.int16))
    r = ssmv.check_mamba3(**bf)
    assert r.json["entries"][0]["tensors"] == want
    assert "final_x_prev ssmv.bf16: bf16 values written as fp32, the state format" in r.notes
    assert "initial_x_prev int16 (bf16 bit patterns): bf16 values written as fp32, the state format" in r.notes
    # Only the K and V parts are widened: a bf16 SSM state next to an fp32 one is still a disagreement.
    with pytest.raises(TypeError, match=r"^the state tensors disagree on their format \(initial_states ssmv.bf16, "):
        ssmv.check_mamba3(**dict(bf, initial_states=ssmv.bf16(case["initial_states"])))
