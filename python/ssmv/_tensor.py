"""The package's own array: a dtype, a shape and the C-order little-endian bytes that go into a
dump's .npy entry. Standard library only (NumPy is optional: _arrays.py reads NumPy arrays with
NumPy when it is given one); also the .npz writer and the fp32/bf16 conversions the checks use."""

import math
import struct
import sys
import zipfile
from array import array
from typing import NamedTuple


class DType(NamedTuple):
    name: str    # NumPy's name, as messages print it: 'float32', 'int16'
    descr: str   # the .npy header's descr: '<f4'
    code: str    # array/memoryview typecode ('' for float16, which array lacks)
    size: int    # bytes per element
    kind: str    # 'f' float, 'i' signed, 'u' unsigned (NumPy's kinds)


DTYPES = {d.name: d for d in (
    DType("float64", "<f8", "d", 8, "f"), DType("float32", "<f4", "f", 4, "f"), DType("float16", "<f2", "", 2, "f"),
    DType("int8", "|i1", "b", 1, "i"), DType("uint8", "|u1", "B", 1, "u"),
    DType("int16", "<i2", "h", 2, "i"), DType("uint16", "<u2", "H", 2, "u"),
    DType("int32", "<i4", "i", 4, "i"), DType("uint32", "<u4", "I", 4, "u"),
    DType("int64", "<i8", "q", 8, "i"), DType("uint64", "<u8", "Q", 8, "u"),
)}


class Tensor:
    """dtype (a DTYPES name), shape (a tuple) and data (bytes, C order, little-endian)."""
    __slots__ = ("dtype", "shape", "data")

    def __init__(self, dtype, shape, data):
        self.dtype = DTYPES[dtype]
        self.shape = tuple(int(n) for n in shape)
        self.data = bytes(data)
        if len(self.data) != self.size * self.dtype.size:
            raise AssertionError(f"{len(self.data)} bytes for {self.size} elements of {dtype}")

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def values(self):
        """The elements in flat order as Python numbers (an array, or a list for float16)."""
        if not self.dtype.code:
            return [v for (v,) in struct.iter_unpack("<e", self.data)]
        a = array(self.dtype.code)
        a.frombytes(self.data)
        if sys.byteorder == "big":
            a.byteswap()
        return a

    @staticmethod
    def of_values(dtype, shape, values):
        """A tensor from flat Python numbers (an OverflowError when one does not fit)."""
        d = DTYPES[dtype]
        if not d.code:
            return Tensor(dtype, shape, struct.pack(f"<{len(values)}e", *values))
        a = array(d.code, values)
        if sys.byteorder == "big":
            a.byteswap()
        return Tensor(dtype, shape, a.tobytes())

    def coords(self, flat):
        """The multi-index of flat index `flat` (row-major)."""
        out = []
        for n in reversed(self.shape):
            flat, i = divmod(flat, n)
            out.append(i)
        return tuple(reversed(out))


def byteswapped(data, size):
    """Big-endian elements of `size` bytes as little-endian ones (and back)."""
    if size == 1:
        return bytes(data)
    out = bytearray(len(data))
    for i in range(size):
        out[i::size] = data[size - 1 - i::size]
    return bytes(out)


# --- fp32 and bf16 -----------------------------------------------------------------------

def to_fp32(v):
    """The fp32 value nearest to the double v (ties to even; beyond the range: ±inf), as a float."""
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:  # struct refuses what rounds beyond FLT_MAX; C's conversion gives inf
        return math.copysign(math.inf, v)


def bf16_bits_as_fp32(data):
    """bf16 patterns (2-byte little-endian) as the fp32 patterns of the same values: each pattern
    becomes the high half of an fp32 (exact: bf16 is fp32 with 16 fewer significand bits)."""
    out = bytearray(2 * len(data))
    out[2::4] = data[0::2]
    out[3::4] = data[1::2]
    return bytes(out)


def fp32_bits_to_bf16(b):
    """The bf16 pattern nearest (ties to even) to the fp32 with pattern b; NaN: quiet NaN 0x7fc0,
    sign kept. Adding 0x7fff plus the kept half's last bit carries exactly when the dropped half
    is above the halfway point, or at it with an odd kept half; a carry out of the significand
    bumps the exponent (the largest finite values round to inf)."""
    if (b & 0x7FFFFFFF) > 0x7F800000:
        return ((b >> 16) & 0x8000) | 0x7FC0
    return (b + 0x7FFF + ((b >> 16) & 1)) >> 16


def double_to_bf16(v):
    """The bf16 pattern nearest (ties to even) to the double v, rounded once (not through fp32,
    whose rounding could make a tie that v is not). NaN: 0x7fc0 with v's sign."""
    sign = 0x8000 if math.copysign(1.0, v) < 0 else 0
    if v != v:
        return sign | 0x7FC0
    a = abs(v)
    if a == math.inf:
        return sign | 0x7F80
    if a == 0:
        return sign
    _, e = math.frexp(a)               # a = m·2^e, 1/2 <= m < 1
    q = max(e - 8, -133)               # bf16's quantum there: 8 significant bits, subnormals 2^-133
    num, den = a.as_integer_ratio()    # a = num/den exactly, den a power of two
    if q >= 0:
        den <<= q
    else:
        num <<= -q
    n, r = divmod(num, den)            # a / 2^q = n + r/den
    if 2 * r > den or 2 * r == den and n & 1:
        n += 1
    rounded = math.ldexp(n, q)         # exact: n <= 256
    if rounded >= 2.0 ** 128:
        return sign | 0x7F80
    return sign | (struct.unpack("<I", struct.pack("<f", rounded))[0] >> 16)


# --- .npy / .npz -------------------------------------------------------------------------

def npy_header(t):
    """The .npy 1.0 header of t (numpy/lib/format.py: magic, version, length, the dict literal
    padded with spaces to a multiple of 64 bytes, ending in a newline)."""
    shape = f"({t.shape[0]},)" if t.ndim == 1 else "(" + ", ".join(str(n) for n in t.shape) + ")"
    text = f"{{'descr': '{t.dtype.descr}', 'fortran_order': False, 'shape': {shape}, }}"
    text += " " * (-(10 + len(text) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")


def save_npz(path, tensors):
    """An .npz as np.savez writes it (stored entries '<name>.npy'), with fixed timestamps so that
    equal tensors give equal bytes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, t in tensors.items():
            header = npy_header(t)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.file_size = len(header) + len(t.data)
            with z.open(info, "w") as f:
                f.write(header)
                f.write(t.data)
