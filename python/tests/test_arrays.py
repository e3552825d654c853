"""Tensors without NumPy: nested lists and buffers give the report NumPy arrays give, objects
only NumPy can read say so when it is missing, and the package's own .npz writer writes what
NumPy reads back bit for bit."""

import array
import sys
import zipfile

import numpy as np
import pytest

import ssmv
from ssmv._tensor import Tensor, npy_header, save_npz
from recurrence import honest_case


def as_buffer(a):
    """A float32 array as a standard-library buffer with its shape."""
    return memoryview(array.array("f", a.reshape(-1).tolist())).cast("B").cast("f", list(a.shape))


def test_lists_and_buffers_give_the_numpy_report():
    case = honest_case()
    want = ssmv.check(**case).json["entries"][0]["tensors"]
    plain = dict(case)
    for k in ("x", "dt", "B", "C", "z", "y", "final_states", "initial_states"):
        plain[k] = as_buffer(case[k])
    for k in ("A", "D", "dt_bias", "cu_seqlens"):
        plain[k] = case[k].tolist()  # float64 holding fp32 values; int64
    r = ssmv.check(**plain)
    assert r.json["entries"][0]["tensors"] == want
    assert "input_format fp32: inferred from the dtype of x, dt, B, C, z (float32)" in r.notes
    # Nested lists of floats are float64: the format must be declared, as for NumPy's float64.
    lists = dict(plain, **{k: case[k].tolist() for k in ("x", "dt", "B", "C", "z")})
    with pytest.raises(TypeError, match=r"x has dtype float64, which does not say which format its values are in"):
        ssmv.check(**lists)
    assert ssmv.check(**lists, input_format="fp32").json["entries"][0]["tensors"] == want


def test_bad_nested_lists():
    case = honest_case()
    with pytest.raises(ValueError, match=r"A\[1\] has length 2: a nested list must be rectangular"):
        ssmv.check(**dict(case, A=[[1.0], [2.0, 3.0]]))
    with pytest.raises(TypeError, match=r"A\[1\] is str 'a': expected a number"):
        ssmv.check(**dict(case, A=[-1.0, "a"]))
    with pytest.raises(TypeError, match=r"A\[0\] is bool True"):
        ssmv.check(**dict(case, A=[True, False]))
    with pytest.raises(TypeError, match=r"x is a array holding 'w' items"):
        ssmv.check(**dict(case, x=array.array("u", "abc")))


def test_without_numpy(monkeypatch):
    class Foreign:  # something only NumPy can read
        def __array__(self, dtype=None, copy=None):
            return np.zeros((8, 2, 4), np.float32)

    case = {k: (as_buffer(v) if isinstance(v, np.ndarray) and v.dtype == np.float32 else v) for k, v in
            honest_case().items()}
    case["cu_seqlens"] = case["cu_seqlens"].tolist()
    monkeypatch.setitem(sys.modules, "numpy", None)  # import numpy fails from here on
    assert ssmv.check(**case).ok
    with pytest.raises(TypeError, match=r"x is a Foreign: reading it needs NumPy, which is not installed \(pip "
                                        r"install numpy\); or pass a torch tensor, an ssmv.bf16\(\) array"):
        ssmv.check(**dict(case, x=Foreign()))


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int16", "uint16", "int64", "uint8", "int32"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3, 4), (1, 0, 2)])
def test_npz_writer_is_what_numpy_reads(tmp_path, dtype, shape):
    a = (np.arange(int(np.prod(shape))) * 3 - 5).astype(dtype).reshape(shape)
    t = Tensor(dtype, shape, a.astype(a.dtype.newbyteorder("<")).tobytes())
    assert len(npy_header(t)) % 64 == 0  # NumPy's alignment of the data
    save_npz(tmp_path / "t.npz", {"a": t, "b": t})
    with np.load(tmp_path / "t.npz") as z:
        assert z.files == ["a", "b"]
        assert z["a"].dtype == a.dtype and z["a"].shape == shape and z["a"].tobytes() == a.tobytes()
    with zipfile.ZipFile(tmp_path / "t.npz") as z:  # stored, fixed timestamps: equal tensors, equal bytes
        assert all(i.compress_type == zipfile.ZIP_STORED and i.date_time == (1980, 1, 1, 0, 0, 0)
                   for i in z.infolist())
    save_npz(tmp_path / "u.npz", {"a": t, "b": t})
    assert (tmp_path / "u.npz").read_bytes() == (tmp_path / "t.npz").read_bytes()
