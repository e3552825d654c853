"""torch tensors as the kernel author has them: bf16 without viewing them as int16, GPU
tensors copied to the CPU with a note. Skips without torch (CI has none)."""

import json

import numpy as np
import pytest

import ssmv
from conftest import FIXTURES
from recurrence import decode_fp32, honest_case

torch = pytest.importorskip("torch")


def test_bf16_tensors_from_a_fixture():
    with np.load(FIXTURES / "ssu_bf16in_fp32state_z_D_T4.npz") as z:
        arrays = {k: z[k] for k in z.files if k != "__metadata__"}
        meta = json.loads(bytes(z["__metadata__"]))
    tensors = {}
    for k, v in arrays.items():
        t = torch.from_numpy(v.copy())
        tensors[k] = t.view(torch.bfloat16) if v.dtype == np.int16 else t  # what the kernel had
    assert tensors["x"].dtype == torch.bfloat16
    r = ssmv.check(**tensors, kernel="ssu", contract=meta["ssmv.contract"], dt_softplus=True)
    assert r.ok, r
    assert "input_format bf16: inferred from the dtype of x, dt, B, C, z (torch.bfloat16)" in r.notes
    assert r["y"].format == "bf16" and r["final_state"].format == "fp32"


def test_float32_tensors_with_grad_and_a_bf16_A():
    case = honest_case()
    tensors = {k: (torch.from_numpy(v).requires_grad_(v.dtype == np.float32) if isinstance(v, np.ndarray) else v)
               for k, v in case.items()}
    tensors["A"] = torch.tensor([-1.5, -2.0], dtype=torch.bfloat16)  # exact fp32 values
    with pytest.raises(AssertionError, match="tensor 'y'"):  # y was made with another A
        ssmv.assert_within_contract(**tensors)


def test_gpu_tensors_are_copied_with_a_note():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    case = honest_case()
    tensors = {k: (torch.from_numpy(v).cuda() if isinstance(v, np.ndarray) else v) for k, v in case.items()}
    r = ssmv.check(**tensors)
    assert r.ok and any("y: copied from cuda:0 to the CPU" == n for n in r.notes)


def test_bf16_tensors_as_they_are():
    """A kernel's bf16 tensors passed as they are: the dump holds their bit patterns, the formats
    are inferred; views (an offset, a transpose) are read as their values, not their storage."""
    case = honest_case()
    tensors = {k: (torch.from_numpy(v) if isinstance(v, np.ndarray) else v) for k, v in case.items()}
    for k in ("x", "dt", "B", "C", "z"):
        tensors[k] = tensors[k].to(torch.bfloat16)
    problem = {k: (v.float().numpy() if isinstance(v, torch.Tensor) and v.dtype == torch.bfloat16 else
                   v.numpy() if isinstance(v, torch.Tensor) else v)
               for k, v in tensors.items() if k not in ("y", "final_states", "kernel", "dt_softplus")}
    y, final = decode_fp32(**problem, dt_softplus=True)
    tensors["y"] = torch.from_numpy(y).to(torch.bfloat16)
    tensors["final_states"] = torch.from_numpy(final)
    r = ssmv.check(**tensors, dump=True)
    assert r.ok, r
    assert "input_format bf16: inferred from the dtype of x, dt, B, C, z (torch.bfloat16)" in r.notes
    assert r["y"].format == "bf16"
    with np.load(r.dump) as z:
        assert z["x"].dtype == np.uint16
        assert z["x"].tobytes() == tensors["x"].view(torch.int16).numpy().tobytes()
    wide = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    for view in (wide[1:], wide.transpose(0, 2), wide[:, ::2]):
        assert ssmv.bf16(view).tolist() == view.tolist()  # small integers: exact in bf16


def test_bf16_rounds_as_torch_does_from_fp32():
    g = torch.Generator().manual_seed(20261203)
    f = torch.randn(4096, generator=g) * torch.exp2(torch.randint(-120, 120, (4096,), generator=g).float())
    f[:3] = torch.tensor([1 + 2**-8, 1 + 3 * 2**-8, float("inf")])
    mine = np.asarray(ssmv.bf16(f).bits)
    theirs = f.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    assert mine.tolist() == theirs.tolist()
    b = f.to(torch.bfloat16)
    assert np.asarray(ssmv.bf16(b).bits).tolist() == theirs.tolist()  # a bf16 tensor is taken as it is
