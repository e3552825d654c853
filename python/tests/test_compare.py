"""compare: the worked example of docs/real-kernels.md, chunk_scan over 300 tokens vs SSU
token by token (fp32 state), from the committed dumps and from their arrays."""

import json

import numpy as np
import pytest

import ssmv
from conftest import FIXTURES

A_DUMP = FIXTURES / "example_chunk_scan_T300.npz"
B_DUMP = FIXTURES / "example_ssu_T300_fp32state.npz"


def expect_the_worked_example(r):
    assert r.ok and r.comparison.explained_all
    assert [(e.kernel, e.contract, e.verdict) for e in r.entries] == [
        ("chunk_scan", "triton.chunk_scan", "WITHIN_CONTRACT"), ("ssu", "triton.ssu", "WITHIN_CONTRACT")]
    assert [e.name[:3] for e in r.entries] == ["a: ", "b: "]  # the side is in the case's name
    y, fs = r.comparison["y"], r.comparison["final_states"]
    assert (y.elements, y.identical, y.explained, y.unexplained) == (76800, 54418, 22382, 0)
    assert (fs.elements, fs.identical, fs.explained, fs.unexplained) == (16384, 0, 16384, 0)
    assert 0 < y.max_usage <= 1 and y.verdict_a == y.verdict_b == "WITHIN_CONTRACT"
    assert "every divergence is within bound_a + bound_b" in r.text


def test_compare_two_dumps():
    expect_the_worked_example(ssmv.compare(a=A_DUMP, b=str(B_DUMP)))


def test_compare_arrays():
    with np.load(A_DUMP) as a, np.load(B_DUMP) as b:
        problem = {k: a[k] for k in ("x", "dt", "A", "B", "C", "D", "dt_bias", "cu_seqlens")}
        for k in problem:
            assert np.array_equal(problem[k], b[k])  # the same problem
        a_side = ssmv.Outputs(y=a["y"], final_states=a["final_states"], kernel="chunk_scan",
                              contract="triton.chunk_scan", chunk_size=64, chunk_layout="sequence",
                              dt_limit=(0.0, float("inf")))
        b_side = dict(y=b["y"], final_states=b["final_states"], kernel="ssu", contract="triton.ssu")
        r = ssmv.compare(a=a_side, b=b_side, **problem, dt_softplus=True)
    expect_the_worked_example(r)
    assert "output_format bf16: inferred from the dtype of y (int16 (bf16 bit patterns))" in " ".join(r.notes)


def test_compare_bad_input():
    with pytest.raises(ValueError, match="the problem is missing"):
        ssmv.compare(a=ssmv.Outputs(y=np.zeros((2, 2, 2), np.float32)), b=B_DUMP)
    with pytest.raises(ValueError, match="a='/no/such.npz': no such dump file"):
        ssmv.compare(a="/no/such.npz", b=B_DUMP)
    with pytest.raises(TypeError, match="b is a int: expected ssmv.Outputs"):
        ssmv.compare(a=A_DUMP, b=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'kernal'"):
        ssmv.compare(a=A_DUMP, b=dict(y=np.zeros(3), kernal="ssu"))
