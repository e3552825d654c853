"""Bad input is a Python exception naming the argument and its value, with a short
traceback; ssmv's own refusals (exit code 2) are ValueErrors carrying its message."""

import traceback

import numpy as np
import pytest

import ssmv
from recurrence import honest_case


@pytest.fixture
def case():
    return honest_case()


def package_frames(exc):
    return [f for f in traceback.extract_tb(exc.__traceback__) if "/ssmv/" in f.filename.replace("\\", "/")]


def test_unknown_kernel(case):
    case["kernel"] = "mamba"
    with pytest.raises(ValueError, match=r"kernel='mamba': expected one of 'ssu', 'chunk_scan', 'handoff'") as e:
        ssmv.check(**case)
    assert len(package_frames(e.value)) <= 1  # no deep traceback for a user error


def test_wrong_shape(case):
    case["x"] = case["x"][:, :, 0]
    with pytest.raises(ValueError, match=r"x has shape \[8, 2\]: expected \[T, H, P\] \(packed\)"):
        ssmv.check(**case)
    case = honest_case()
    case["A"] = np.broadcast_to(case["A"][:, None, None], (2, 4, 16))
    with pytest.raises(ValueError, match=r"A has shape \[2, 4, 16\].*pass A\[:, 0, 0\]"):
        ssmv.check(**case)


def test_shapes_that_disagree_are_ssmvs_message(case, cex_dir):
    case["C"] = case["C"][:, :, :8]
    with pytest.raises(ssmv.SsmvError) as e:
        ssmv.check(**case)
    assert isinstance(e.value, ValueError) and e.value.returncode == 2
    assert "tensor 'C'" in str(e.value) and "shape" in str(e.value)
    assert e.value.dump.startswith(str(cex_dir)) and f"`ssmv check {e.value.dump}` shows the same" in str(e.value)
    assert len(package_frames(e.value)) <= 1


def test_unknown_contract_is_ssmvs_message(case):
    with pytest.raises(ValueError, match="triton.sssu"):
        ssmv.check(**case, contract="triton.sssu")


def test_wrong_dtypes(case):
    bad = dict(case, x=case["x"].astype(np.complex64))
    with pytest.raises(TypeError, match="x has dtype complex64"):
        ssmv.check(**bad)
    bad = dict(case, x=case["x"].astype(np.float64))
    with pytest.raises(TypeError, match=r"x has dtype float64, which does not say which format.*input_format="):
        ssmv.check(**bad)
    bad = dict(case, dt=case["dt"].astype(np.float16))
    with pytest.raises(TypeError, match=r"the input tensors disagree on their format \(x float32, dt float16"):
        ssmv.check(**bad)
    bad = dict(case, cu_seqlens=case["cu_seqlens"].astype(np.float32))
    with pytest.raises(TypeError, match="cu_seqlens has dtype float32: expected integers"):
        ssmv.check(**bad)
    bad = dict(case, A=case["A"].view(np.int32))
    with pytest.raises(TypeError, match="A has dtype int32"):
        ssmv.check(**bad)
    with pytest.raises(TypeError, match="x holds bf16 values .* but input_format='fp32'"):
        ssmv.check(**dict(case, x=np.zeros(case["x"].shape, np.int16)), input_format="fp32")
    with pytest.raises(ValueError, match="input_format='f8': not a format"):
        ssmv.check(**case, input_format="f8")


def test_float64_with_a_declared_format_is_fine(case):
    wide = {k: case[k].astype(np.float64) for k in ("x", "dt", "B", "C", "z")}
    r = ssmv.check(**dict(case, **wide), input_format="fp32")
    assert r.ok
    with pytest.raises(ValueError, match=r"A\[0\] = 0.1 is not an fp32 value \(the nearest is 0x1.99999ap-4"):
        ssmv.check(**dict(case, A=np.array([0.1, -1.0])))


def test_nan_in_the_inputs(case):
    case["dt"] = case["dt"].copy()
    case["dt"][3, 1] = np.nan
    with pytest.raises(ValueError, match=r"dt\[3, 1\] = nan: inputs must be finite"):
        ssmv.check(**case)
    bits = np.zeros((8, 2, 4), np.int16)
    bits[2, 0, 1] = 0x7FC0  # bf16 NaN
    with pytest.raises(ValueError, match=r"x\[2, 0, 1\] = bits 0x7fc0 \(bf16 NaN\): inputs must be finite"):
        ssmv.check(**dict(honest_case(), x=bits), input_format="bf16")


def test_options(case):
    with pytest.raises(ValueError, match="chunk_size=0: expected an integer >= 1"):
        ssmv.check(**case, chunk_size=0)
    with pytest.raises(TypeError, match="dt_softplus='yes': expected True or False"):
        ssmv.check(**dict(case, dt_softplus="yes"))
    with pytest.raises(ValueError, match="chunk_layout='packed'"):
        ssmv.check(**case, chunk_layout="packed")
    with pytest.raises(ValueError, match="decode_contract='triton.ssu': only a hand-off"):
        ssmv.check(**case, decode_contract="triton.ssu")
    with pytest.raises(ValueError, match=r"dt_limit=\(0.0, nan\): hi is NaN"):
        ssmv.check(**case, dt_limit=(0.0, float("nan")))
    with pytest.raises(ValueError, match="y is missing"):
        ssmv.check(**dict(case, y=None))
    with pytest.raises(ValueError, match="B is missing"):
        ssmv.check(**dict(case, B=None))
    with pytest.raises(TypeError, match="x is a str"):
        ssmv.check(**dict(case, x="x.npy"))
    with pytest.raises(TypeError):  # a misspelt argument is Python's own TypeError
        ssmv.check(**case, dt_softpuls=True)


def test_missing_binary(case, monkeypatch, tmp_path):
    monkeypatch.setenv("SSMV_BINARY", str(tmp_path / "nowhere" / "ssmv"))
    with pytest.raises(FileNotFoundError, match=r"SSMV_BINARY=.*nowhere/ssmv.*: no executable ssmv there;.*"
                                                r"\./scripts/build\.sh") as e:
        ssmv.check(**case)
    assert len(package_frames(e.value)) <= 1
    with pytest.raises(FileNotFoundError, match=r"binary='/no/ssmv'"):
        ssmv.check(**case, binary="/no/ssmv")


def test_outputs_may_hold_nan(case):
    case["final_states"] = case["final_states"].copy()
    case["final_states"][0, 0, 0, 0] = np.inf
    r = ssmv.check(**case)
    assert r["final_states"].verdict == "INVALID" and r["y"].ok
