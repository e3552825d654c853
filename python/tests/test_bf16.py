"""ssmv.bf16: rounding to bf16 (to nearest, ties to even) against bit patterns derived by hand,
the same by both implementations (NumPy's vectorised one and the standard-library one), and
the marked arrays through check().

bf16 is sign | 8 exponent bits (bias 127) | 7 fraction bits: 1 = 0x3f80, the spacing in [1, 2)
is 2^-7, the largest finite value 0x7f7f = (2 - 2^-7)·2^127, the smallest subnormal
0x0001 = 2^-133."""

import math
import struct
import sys

import numpy as np
import pytest

import ssmv
from ssmv import _bf16
from ssmv._tensor import Tensor, double_to_bf16, to_fp32
from recurrence import decode_fp32, honest_case

# (value as a double, its bf16 pattern, why)
HAND = [
    (1.0, 0x3F80, "1: exponent 127, fraction 0"),
    (1 + 2**-8, 0x3F80, "halfway between 1 (0x3f80, even) and 1 + 2^-7 (0x3f81): to even, down"),
    (1 + 3 * 2**-8, 0x3F82, "halfway between 0x3f81 (odd) and 0x3f82: to even, up"),
    (1 + 2**-8 - 2**-30, 0x3F80, "just below the halfway point"),
    (1 + 2**-8 + 2**-24, 0x3F81, "just above it; through fp32 (RNE to 1 + 2^-8, a tie) it would be 0x3f80"),
    (-1.5, 0xBFC0, "sign bit, fraction 0b1000000"),
    (0.0, 0x0000, "+0"),
    (-0.0, 0x8000, "-0 keeps its sign"),
    ((2 - 2**-7) * 2.0**127, 0x7F7F, "the largest finite bf16"),
    ((2 - 2**-8 - 2**-20) * 2.0**127, 0x7F7F, "below the halfway point to 2^128"),
    ((2 - 2**-8) * 2.0**127, 0x7F80, "halfway between 0x7f7f (odd) and 2^128: to even, inf"),
    ((2 - 2**-23) * 2.0**127, 0x7F80, "FLT_MAX: above the halfway point, inf"),
    (1e300, 0x7F80, "far beyond: inf"),
    (-1e300, 0xFF80, "far beyond, negative: -inf"),
    (2.0**-126, 0x0080, "the smallest normal"),
    (2.0**-133, 0x0001, "the smallest subnormal"),
    (2.0**-134, 0x0000, "halfway between 0 (even) and 2^-133: 0"),
    (3 * 2.0**-134, 0x0002, "halfway between 2^-133 (odd) and 2^-132: up"),
    (2.0**-134 + 2.0**-160, 0x0001, "above the halfway point; through fp32 (a tie at 2^-134) it would be 0"),
    (math.inf, 0x7F80, "inf"),
    (-math.inf, 0xFF80, "-inf"),
    (math.nan, 0x7FC0, "NaN: the quiet NaN"),
    (-math.nan, 0xFFC0, "NaN keeps its sign"),
]
WHY = [h[2] for h in HAND]


def patterns(b):
    return [int(v) for v in np.asarray(b.bits).reshape(-1)]


@pytest.mark.parametrize("value, bits, why", HAND, ids=WHY)
def test_rounding_of_a_double(value, bits, why):
    assert double_to_bf16(value) == bits
    assert patterns(ssmv.bf16(np.array([value]))) == [bits]  # NumPy's float64 path (round to odd, then even)
    t = Tensor("float64", (1,), struct.pack("<d", value))
    assert _bf16._round_python(t) == struct.pack("<H", bits)  # the standard-library path


def test_rounding_of_fp32_and_fp16_values():
    # The hand cases that are fp32 values (not NaN: NumPy's cast may change its payload).
    cases = [(v, bits) for v, bits, _ in HAND if not math.isnan(v) and to_fp32(v) == v]
    assert len(cases) >= 15
    values, want = [v for v, _ in cases], [b for _, b in cases]
    assert patterns(ssmv.bf16(np.array(values, np.float32))) == want
    t = Tensor("float32", (len(values),), struct.pack(f"<{len(values)}f", *values))
    assert _bf16._round_python(t) == struct.pack(f"<{len(want)}H", *want)
    # fp16: 65504 = (2 - 2^-10)·2^15 rounds up to 2^16 = 0x4780; 1 + 2^-8 (exact in fp16) to 0x3f80.
    half = np.array([65504, 1 + 2**-8, -2**-24], np.float16)
    assert patterns(ssmv.bf16(half)) == [0x4780, 0x3F80, 0xB380]  # -2^-24: exponent 127 - 24 = 0x67
    assert _bf16._round_python(Tensor("float16", (3,), half.tobytes())) == np.array([0x4780, 0x3F80, 0xB380],
                                                                                     "<u2").tobytes()


def test_both_implementations_agree_on_random_values():
    rng = np.random.default_rng(20261203)
    # Doubles over every binade of bf16 and beyond (and ties made on purpose: 8 significant bits + a half).
    d = rng.standard_normal(20000) * np.exp2(rng.integers(-150, 130, 20000))
    ties = (rng.integers(128, 256, 2000) + 0.5) * np.exp2(rng.integers(-140, 120, 2000).astype(float))
    d = np.concatenate([d, ties, -ties])
    t = Tensor("float64", d.shape, d.astype("<f8").tobytes())
    assert _bf16._round_numpy(np, t) == _bf16._round_python(t)
    # Every kind of fp32 pattern (NaNs, subnormals, the largest values), against the exact
    # rational rounding of the same value as a double: two algorithms, one answer.
    f = rng.integers(0, 2**32, 50000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    t = Tensor("float32", f.shape, f.astype("<f4").tobytes())
    got = np.frombuffer(_bf16._round_numpy(np, t), "<u2")
    assert got.tolist() == [double_to_bf16(float(v)) for v in f]
    assert _bf16._round_python(t) == got.tobytes()


def test_the_marked_array(monkeypatch):
    x = ssmv.bf16([[1.0, 1 + 2**-8], [-1.5, 3]])  # nested lists: numbers are values, ints too
    assert isinstance(x, ssmv.BF16Array) and x.shape == (2, 2) and x.ndim == 2 and x.size == 4
    assert np.asarray(x.bits).tolist() == [[0x3F80, 0x3F80], [0xBFC0, 0x4040]]
    assert x.tolist() == [[1.0, 1.0], [-1.5, 3.0]]
    a = np.asarray(x)
    assert a.dtype == np.float32 and a.tolist() == [[1.0, 1.0], [-1.5, 3.0]]
    assert x.tobytes() == np.array([0x3F80, 0x3F80, 0xBFC0, 0x4040], "<u2").tobytes()
    assert ssmv.bf16(x) is x and ssmv.bf16(np.array([[1.0, 1.0], [-1.5, 3.0]])) == x
    assert "ssmv.bf16 array of shape [2, 2]: [1.0, 1.0, -1.5, 3.0]" == repr(x)
    with pytest.raises(TypeError, match=r"ssmv.bf16\(\): the values have dtype int16 \(bf16 bit patterns\); it "
                                        r"rounds floating-point values"):
        ssmv.bf16(np.zeros(3, np.int16))
    # Without NumPy: the standard-library path, the same patterns.
    monkeypatch.setitem(sys.modules, "numpy", None)
    assert ssmv.bf16([[1.0, 1 + 2**-8], [-1.5, 3]]) == x


def test_bf16_inputs_through_check():
    """Inputs rounded with ssmv.bf16 (A and dt_bias too: their fp32 values), the recurrence run
    on those values in fp32: within the contract, the formats inferred and said."""
    case = honest_case()
    for k in ("x", "dt", "B", "C", "z"):
        case[k] = ssmv.bf16(case[k])
    case["A"] = ssmv.bf16(case["A"])
    problem = {k: (np.asarray(v) if isinstance(v, ssmv.BF16Array) else v) for k, v in case.items()
               if k not in ("y", "final_states", "kernel", "dt_softplus")}
    y, final = decode_fp32(**problem, dt_softplus=True)
    r = ssmv.check(**dict(case, y=y, final_states=final))
    assert r.ok, r
    assert "input_format bf16: inferred from the dtype of x, dt, B, C, z (ssmv.bf16)" in r.notes
    assert r["y"].format == "fp32" and r["y"].counts["WITHIN_CONTRACT"] > 0  # not vacuous
    # A bf16 y is judged as bf16 output.
    r = ssmv.check(**dict(case, y=ssmv.bf16(y), final_states=final))
    assert r["y"].format == "bf16" and r["y"].ok
