"""torch tensors as the kernel author has them: bf16 without viewing them as int16, GPU
tensors copied to the CPU with a note. Skips without torch (CI has none)."""

import json

import numpy as np
import pytest

import ssmv
from conftest import FIXTURES
from recurrence import honest_case

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
