"""ssmv.bf16(values): floating-point values rounded to bf16 (to nearest, ties to even), marked as
bf16 for the dump. NumPy has no bf16 dtype; without this, bf16 values travel as int16 bit patterns
(which check() also reads as bf16, but which A, D and dt_bias refuse: they hold fp32 values)."""

import math
import sys
from array import array

from ._arrays import _plain, nested, read
from ._errors import InputTypeError
from ._tensor import Tensor, bf16_bits_as_fp32, double_to_bf16, fp32_bits_to_bf16


class BF16Array:
    """bf16 values, held as their 16-bit patterns: what ssmv.bf16() returns and check(),
    assert_within_contract() and compare() take for any tensor (bf16 inputs, outputs or states;
    A, D and dt_bias as the fp32 values they are).

    shape; bits (the patterns: a memoryview of unsigned 16-bit integers, np.asarray(a.bits) is a
    uint16 array); tobytes() (little-endian patterns); tolist() (the values as floats, nested);
    np.asarray(a) (the values as float32, exact: to compute a reference from what the kernel got).
    """
    __slots__ = ("_t",)

    def __init__(self, tensor):
        self._t = tensor

    @property
    def shape(self):
        return self._t.shape

    @property
    def ndim(self):
        return self._t.ndim

    @property
    def size(self):
        return self._t.size

    @property
    def bits(self):
        m = memoryview(array("H", self._t.values()))
        return m.cast("B").cast("H", self.shape) if self.ndim > 1 else m

    def tobytes(self):
        return self._t.data

    def _floats(self):
        return Tensor("float32", self.shape, bf16_bits_as_fp32(self._t.data)).values()

    def tolist(self):
        def build(flat, shape):
            if not shape:
                return flat[0]
            n = math.prod(shape[1:])
            return [build(flat[i * n:(i + 1) * n], shape[1:]) for i in range(shape[0])]
        return build(list(self._floats()), self.shape)

    def __array__(self, dtype=None, copy=None):
        import numpy as np
        a = np.frombuffer(bf16_bits_as_fp32(self._t.data), dtype="<f4").reshape(self.shape).astype(np.float32)
        return a if dtype is None else a.astype(dtype)

    def __eq__(self, other):
        return isinstance(other, BF16Array) and self.shape == other.shape and self._t.data == other._t.data

    __hash__ = None

    def __repr__(self):
        vals = self._floats()
        shown = ", ".join(repr(v) for v in vals[:6]) + (", ..." if len(vals) > 6 else "")
        return f"ssmv.bf16 array of shape {list(self.shape)}: [{shown}]"


def _round_numpy(np, t):
    """The patterns of t's floats rounded to bf16, vectorised. float64 is rounded to fp32 to odd
    first (truncated, the last bit set when inexact): with 16 bits more than bf16 that rounding
    cannot make a tie, so the second rounding, to nearest even, is the one rounding of the double
    (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
    rounding to odd", 2008). Beyond FLT_MAX the truncation is FLT_MAX, odd, which rounds to inf."""
    a = np.frombuffer(t.data, dtype=t.dtype.descr).reshape(-1)
    if t.dtype.name == "float64":
        with np.errstate(over="ignore", invalid="ignore"):
            f = a.astype(np.float32)
            back = f.astype(np.float64)
            inexact = (back != a) & np.isfinite(a)
            too_far = inexact & (np.abs(back) > np.abs(a))
        f[too_far] = np.nextafter(f[too_far], np.float32(0))
        b = f.view(np.uint32).copy()
        b[inexact] |= 1
    else:
        b = a.astype(np.float32).view(np.uint32)  # float16 and float32: exact in fp32
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    out = ((b.astype(np.uint64) + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    out[nan] = ((b[nan] >> 16) & 0x8000).astype(np.uint16) | 0x7FC0
    return out.astype("<u2").tobytes()


def _round_python(t):
    """The same, element by element (no NumPy): the little-endian patterns."""
    if t.dtype.name == "float64":
        out = array("H", map(double_to_bf16, t.values()))
    else:
        f = t if t.dtype.name == "float32" else Tensor.of_values("float32", t.shape, t.values())  # fp16: exact
        bits = array("I")
        bits.frombytes(f.data)
        if sys.byteorder == "big":
            bits.byteswap()
        out = array("H", map(fp32_bits_to_bf16, bits))
    if sys.byteorder == "big":
        out.byteswap()
    return out.tobytes()


def bf16(values):
    """`values` rounded to bf16 (to nearest, ties to even: IEEE 754's default, what torch's
    .to(torch.bfloat16) does from fp32), as a BF16Array that check() writes as bf16.

    values: floating-point NumPy arrays (float16/32/64), torch tensors, buffers, nested lists of
    numbers; float64 is rounded once, directly (not through fp32). A bf16 tensor (torch, ml_dtypes)
    is taken as it is. NaN becomes the quiet NaN 0x7fc0 (its sign kept); beyond the largest bf16
    (2^128·(1 − 2^-9) and above) is inf. Integer arrays are refused: int16/uint16 arrays already are
    bf16 bit patterns to check(), and other integers are not values of a float format.
    """
    if isinstance(values, BF16Array):
        return values
    if isinstance(values, (list, tuple, int, float)):
        conv = _plain(nested("values", values, floats=True))  # numbers are values, even ints
    else:
        conv = read("values", values)
    t = conv.array
    if conv.bf16_dtype:
        return BF16Array(t)
    if t.dtype.kind != "f":
        raise InputTypeError(f"ssmv.bf16(): the values have dtype {conv.described}; it rounds floating-point "
                             "values (int16/uint16 arrays are bf16 bit patterns already: pass them to check() as "
                             "they are)")
    np = sys.modules.get("numpy")
    data = _round_numpy(np, t) if np is not None else _round_python(t)
    return BF16Array(Tensor("uint16", t.shape, data))
