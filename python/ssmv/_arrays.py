"""Turning what a kernel author passes into the arrays of a dump (_tensor.Tensor), and inferring
their formats. Accepted: NumPy arrays, torch tensors (any device; bf16 as it is), ssmv.bf16()
arrays, buffers (array.array, memoryview), nested lists of numbers, and anything with
``__array__``, ``__dlpack__`` or ``.numpy()`` (read through NumPy, which such an object's
owner has). The package itself needs only the standard library: NumPy is imported only to
read what only NumPy can read.

bf16 goes into the dump as its 16-bit patterns (<u2), the convention of docs/tensor-files.md
("bf16 without a NumPy dtype"); so do int16/uint16 arrays, read as bf16 bit patterns.
"""

import ctypes
import math
import numbers
import sys
from typing import Dict, NamedTuple, Tuple

from ._errors import InputError, InputTypeError
from ._tensor import DTYPES, Tensor, bf16_bits_as_fp32, byteswapped, to_fp32

FORMATS = ("fp32", "bf16", "fp16")
_FORMAT_ALIASES = {
    "fp32": "fp32", "float32": "fp32", "f32": "fp32",
    "bf16": "bf16", "bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "f16": "fp16", "half": "fp16",
}

# The tensors ssmv reads (docs/tensor-files.md), by the format their values are in: Mamba2's
# (ssmv.check); Mamba-3's are the table MAMBA3 below.
INPUT_TENSORS = ("x", "dt", "B", "C", "z")          # input format
FP32_TENSORS = ("A", "D", "dt_bias")                 # always fp32
STATE_TENSORS = ("initial_states", "final_states")   # state format
OUTPUT_TENSORS = ("y",)                              # output format
INT_TENSORS = ("cu_seqlens", "prefill_tokens")

# Accepted ranks and what they mean, for the message when a shape is wrong.
_RANKS = {
    "x": ((3, 4), "[T, H, P] (packed) or [batch, L, H, P] (batched)"),
    "z": ((3, 4), "[T, H, P] (packed) or [batch, L, H, P] (batched), like x"),
    "y": ((3, 4), "[T, H, P] (packed) or [batch, L, H, P] (batched), like x"),
    "dt": ((2, 3), "[T, H] (packed) or [batch, L, H] (batched)"),
    "B": ((3, 4), "[T, G, N] (packed) or [batch, L, G, N] (batched)"),
    "C": ((3, 4), "[T, G, N] (packed) or [batch, L, G, N] (batched)"),
    "A": ((1,), "[H]"),
    "D": ((1, 2), "[H] or [H, P]"),
    "dt_bias": ((1,), "[H]"),
    "initial_states": ((4,), "[S, H, P, N]"),
    "final_states": ((4,), "[S, H, P, N]"),
    "cu_seqlens": ((1,), "[S + 1]"),
    "prefill_tokens": ((1,), "[S]"),
}


class Family(NamedTuple):
    """One family's tensors (docs/tensor-files.md): what the dump writer checks and converts.
    `input`, `state`, `output`: the tensors of those formats (inferred from their dtypes or
    declared); `fp32`: always fp32 values; `dtype_format`: in the format their own dtype says
    (bf16 or fp32: Mamba-3's angles); `ints`: integer tensors; `outputs`: the kernel's outputs,
    which may hold NaN/Inf (every other tensor is an input and must be finite); `required`: the
    problem's tensors that must be given; `ranks`: {name: (ranks, layout text)}; `rank_hints`:
    {(name, rank): a hint appended to the wrong-rank message}; `bf16_state_parts`: state
    tensors that may hold bf16 values next to an fp32 state (widened to fp32 then, exactly) and
    say nothing about the state format."""
    name: str
    input: Tuple[str, ...]
    state: Tuple[str, ...]
    output: Tuple[str, ...]
    fp32: Tuple[str, ...]
    dtype_format: Tuple[str, ...]
    ints: Tuple[str, ...]
    outputs: Tuple[str, ...]
    required: Tuple[str, ...]
    ranks: Dict[str, Tuple[Tuple[int, ...], str]]
    rank_hints: Dict[Tuple[str, int], str]
    bf16_state_parts: Tuple[str, ...] = ()


MAMBA2 = Family(
    "Mamba2", INPUT_TENSORS, STATE_TENSORS, OUTPUT_TENSORS, FP32_TENSORS, (), INT_TENSORS,
    ("y", "final_states"), ("x", "dt", "A", "B", "C"), _RANKS,
    {("A", 3): " (selective_state_update's A [H, P, N] is broadcast from per-head values: pass A[:, 0, 0])",
     ("dt", 3): " (selective_state_update's dt [batch, H, P] is broadcast: pass dt[:, :, 0])"})

# Mamba-3 SISO (kernel mamba3_step; verify/family/mamba3/dump_reading.h): tokens packed by
# sequence only (no batched layout), the four-part state [S, H, ...].
_PACK = " (launches stacked [L, batch, ...]: pack them by sequence, v.transpose(0, 1).reshape(batch * L, " \
        "...), with cu_seqlens = [0, L, 2L, ..., batch * L])"
MAMBA3 = Family(
    "Mamba-3", ("x", "B", "C", "trap", "z"),
    ("initial_states", "initial_B_prev", "initial_x_prev", "final_states", "final_B_prev", "final_x_prev"),
    ("y",), ("dt", "adt", "B_bias", "C_bias", "D", "initial_angle_state", "final_angle_state"), ("angles",),
    ("cu_seqlens",), ("y", "final_angle_state", "final_states", "final_B_prev", "final_x_prev"),
    ("x", "B", "C", "dt", "adt", "trap", "angles", "B_bias", "C_bias"),
    {
        "x": ((3,), "[T, H, P]"), "z": ((3,), "[T, H, P], like x"), "y": ((3,), "[T, H, P], like x"),
        "B": ((3,), "[T, G, N]"), "C": ((3,), "[T, G, N]"),
        "dt": ((2,), "[T, H]"), "adt": ((2,), "[T, H]"), "trap": ((2,), "[T, H]"),
        "angles": ((3,), "[T, H, R]"),
        "B_bias": ((2,), "[H, N]"), "C_bias": ((2,), "[H, N]"), "D": ((1,), "[H] (one D per head)"),
        "cu_seqlens": ((1,), "[S + 1]"),
        "initial_angle_state": ((3,), "[S, H, R]"), "final_angle_state": ((3,), "[S, H, R]"),
        "initial_states": ((4,), "[S, H, P, N]"), "final_states": ((4,), "[S, H, P, N]"),
        "initial_B_prev": ((3,), "[S, H, N]"), "final_B_prev": ((3,), "[S, H, N]"),
        "initial_x_prev": ((3,), "[S, H, P]"), "final_x_prev": ((3,), "[S, H, P]"),
    },
    {**{(n, 4): _PACK for n in ("x", "z", "y", "angles")}, **{(n, 3): _PACK for n in ("dt", "adt", "trap")},
     **{(n, 4): " (SISO: squeeze the rank axis of a [T, G, 1, N] " + n + "; " + _PACK[2:] for n in ("B", "C")},
     ("D", 2): " (mamba_ssm's Mamba-3 D is per head)",
     ("initial_B_prev", 4): " (the layer's k_state [S, 1, H, N]: pass k_state[:, 0])",
     ("final_B_prev", 4): " (the layer's k_state [S, 1, H, N]: pass k_state[:, 0])"},
    # mamba_ssm's step kernel returns the V state in the input dtype (bf16), and the layer caches
    # the K and V states in the model dtype: ssmv holds them in the state format.
    ("initial_B_prev", "initial_x_prev", "final_B_prev", "final_x_prev"))


def hexfloat(v):
    """%a as C prints it: 0x1.99999ap-4, 0x1p+0, 0x0p+0 (float.hex pads the mantissa)."""
    h = float(v).hex()
    if "p" not in h:
        return h  # inf, -inf, nan
    mant, exp = h.split("p")
    return f"{mant.rstrip('0').rstrip('.')}p{exp}"


def format_name(name, value):
    """'bfloat16' -> 'bf16'; None stays None; anything else is a ValueError naming the argument."""
    if value is None:
        return None
    if not isinstance(value, str):
        value = str(value).replace("torch.", "")  # torch.bfloat16 -> bfloat16
    f = _FORMAT_ALIASES.get(value.lower())
    if f is None:
        raise InputError(f"{name}={value!r}: not a format; expected one of {', '.join(FORMATS)}")
    return f


class Converted:
    """One tensor as it goes into the dump: the Tensor, the format its dtype says (or None when
    the dtype does not say: float64), and a note when something was done to it."""

    def __init__(self, array, dtype_format, described, note=None, bf16_dtype=False):
        self.array = array
        self.bf16_dtype = bf16_dtype      # real bf16 values (torch, ml_dtypes, ssmv.bf16), not int16 patterns
        self.dtype_format = dtype_format  # 'fp32', 'bf16' (bit patterns), 'fp16', 'fp64', 'int'
        self.described = described        # e.g. "torch.bfloat16", "int16 (bf16 bit patterns)"
        self.note = note


_UNSUPPORTED = "ssmv reads fp32, bf16 and fp16 values (and integers for cu_seqlens, prefill_tokens)"
_ALTERNATIVES = ("a torch tensor, an ssmv.bf16() array, a buffer (array.array, memoryview) or nested lists "
                 "of numbers")


def _dtype_format(dtype):
    """The format a dtype name says: 'fp32', 'fp16', 'fp64' (says none), 'bf16' (16-bit integer
    patterns), 'int'."""
    if dtype in ("int16", "uint16"):
        return "bf16"
    return {"float32": "fp32", "float16": "fp16", "float64": "fp64"}.get(dtype, "int")


def _plain(tensor, described=None):
    d = tensor.dtype.name
    if described is None:
        described = d + (" (bf16 bit patterns)" if d in ("int16", "uint16") else "")
    return Converted(tensor, _dtype_format(d), described)


def _bf16(shape, bits, described, note=None):
    return Converted(Tensor("uint16", shape, bits), "bf16", described, note, bf16_dtype=True)


# torch dtypes with a NumPy-named equivalent (torch.bfloat16 is handled on its own).
_TORCH_DTYPES = {f"torch.{n}": n for n in DTYPES}


def _from_torch(name, t):
    torch = sys.modules["torch"]
    note = None
    t = t.detach()
    if t.layout != torch.strided:
        raise InputTypeError(f"{name} is a {t.layout} tensor: pass a dense one (.to_dense())")
    if t.device.type != "cpu":
        note = f"{name}: copied from {t.device} to the CPU"
        t = t.cpu()
    if t.is_conj():
        t = t.resolve_conj()
    if getattr(t, "is_neg", lambda: False)():
        t = t.resolve_neg()
    t = t.contiguous()
    nbytes = t.numel() * t.element_size()
    # The bytes of a contiguous CPU tensor, without NumPy (torch need not have it).
    data = ctypes.string_at(t.data_ptr(), nbytes) if nbytes else b""
    if sys.byteorder == "big":
        data = byteswapped(data, t.element_size())
    if t.dtype == torch.bfloat16:
        return _bf16(t.shape, data, "torch.bfloat16", note)
    dtype = _TORCH_DTYPES.get(str(t.dtype))
    if dtype is None:
        raise InputTypeError(f"{name} has dtype {t.dtype}: {_UNSUPPORTED}")
    c = _plain(Tensor(dtype, t.shape, data), str(t.dtype))
    c.note = note
    return c


def _from_numpy(name, arr):
    np = sys.modules["numpy"]
    if arr.dtype.name == "bfloat16":  # ml_dtypes (JAX): the same bits, viewable as uint16
        return _bf16(arr.shape, np.ascontiguousarray(arr).view(np.uint16).astype("<u2").tobytes(), "bfloat16")
    if arr.dtype.kind not in "fiu" or arr.dtype.kind == "f" and arr.dtype.itemsize > 8:
        raise InputTypeError(f"{name} has dtype {arr.dtype}: ssmv reads fp32, bf16 (as int16 bit patterns) and "
                             "fp16 values, and integers for cu_seqlens, prefill_tokens")
    little = arr.dtype.newbyteorder("<")
    return _plain(Tensor(little.name, arr.shape, np.ascontiguousarray(arr, dtype=little).tobytes()))


# Buffer formats (struct codes) by kind; the integer width is the buffer's itemsize.
_BUFFER_FLOATS = {"f": "float32", "d": "float64", "e": "float16"}
_BUFFER_INTS = set("bhilqn")


def _from_buffer(name, obj, m):
    fmt = m.format
    code = fmt.lstrip("@=<>!")
    if len(code) != 1 or not (code in _BUFFER_FLOATS or code.lower() in _BUFFER_INTS):
        raise InputTypeError(f"{name} is a {type(obj).__name__} holding {fmt!r} items: {_UNSUPPORTED}")
    if code in _BUFFER_FLOATS:
        dtype = _BUFFER_FLOATS[code]
    else:
        dtype = f"{'int' if code in _BUFFER_INTS else 'uint'}{8 * m.itemsize}"
    data = m.tobytes()  # C order
    order = fmt[0] if fmt[0] in "@=<>!" else "@"
    if order in ">!" or order in "@=" and sys.byteorder == "big":
        data = byteswapped(data, m.itemsize)
    return _plain(Tensor(dtype, m.shape, data))


def nested(name, obj, floats=False):
    """Nested lists/tuples of numbers as a Tensor: float64 when any is a float (or `floats`),
    else int64, as NumPy reads them."""
    shape = []
    probe = obj
    while isinstance(probe, (list, tuple)):
        shape.append(len(probe))
        if not probe:
            break
        probe = probe[0]
    flat = []

    def walk(o, depth, where):
        if depth == len(shape):
            if isinstance(o, (list, tuple)) or isinstance(o, bool) or not isinstance(o, numbers.Real):
                what = "a list" if isinstance(o, (list, tuple)) else f"{type(o).__name__} {o!r}"
                raise InputTypeError(f"{name}{where} is {what}: expected a number (a nested list of "
                                     f"shape {list(shape)})")
            flat.append(o)
            return
        if not isinstance(o, (list, tuple)) or len(o) != shape[depth]:
            got = f"has length {len(o)}" if isinstance(o, (list, tuple)) else f"is {type(o).__name__} {o!r}"
            raise InputError(f"{name}{where} {got}: a nested list must be rectangular (expected length "
                             f"{shape[depth]}, from the first element at each depth)")
        for i, e in enumerate(o):
            walk(e, depth + 1, f"{where[:-1]}, {i}]" if where else f"[{i}]")

    walk(obj, 0, "")
    if floats or not flat or any(not isinstance(v, numbers.Integral) for v in flat):
        return Tensor.of_values("float64", shape, [float(v) for v in flat])
    try:
        return Tensor.of_values("int64", shape, [int(v) for v in flat])
    except OverflowError:
        raise InputError(f"{name}: an integer does not fit int64") from None


def _numpy(name, obj):
    try:
        import numpy
        return numpy
    except ImportError:
        raise InputTypeError(f"{name} is a {type(obj).__name__}: reading it needs NumPy, which is not installed "
                             f"(pip install numpy); or pass {_ALTERNATIVES}") from None


def read(name, obj):
    """A Converted from any accepted object (no rank check)."""
    from ._bf16 import BF16Array
    if isinstance(obj, BF16Array):
        return _bf16(obj.shape, obj.tobytes(), "ssmv.bf16")
    mod = type(obj).__module__ or ""
    if mod.split(".")[0] == "torch" and hasattr(obj, "device") and hasattr(obj, "dtype"):
        return _from_torch(name, obj)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        return _from_numpy(name, obj)
    if isinstance(obj, (str, bytes, bytearray)):
        raise InputTypeError(f"{name} is a {type(obj).__name__}: expected a NumPy array or a tensor (torch, or "
                             "anything with __dlpack__ or .numpy()), an ssmv.bf16() array, a buffer or nested lists")
    if isinstance(obj, (list, tuple, int, float)):
        return _plain(nested(name, obj))
    if hasattr(obj, "__array__"):
        np = _numpy(name, obj)
        try:
            arr = np.asarray(obj)
        except Exception as e:  # e.g. a CuPy array: no implicit device-to-host copy
            raise InputTypeError(f"{name}: cannot read it as a host array ({e}); copy it to the "
                                 "CPU first (torch: .cpu(), CuPy: .get(), JAX: jax.device_get)") from None
        return _from_numpy(name, arr)
    try:
        m = memoryview(obj)
    except TypeError:
        m = None
    if m is not None:
        return _from_buffer(name, obj, m)
    if hasattr(obj, "__dlpack__"):
        np = _numpy(name, obj)
        try:
            arr = np.from_dlpack(obj)
        except Exception as e:
            raise InputTypeError(f"{name}: cannot read it through __dlpack__ ({e}); pass a CPU "
                                 "NumPy array or torch tensor (bf16 is handled for torch tensors)") from None
        return _from_numpy(name, arr)
    if hasattr(obj, "numpy"):
        return _from_numpy(name, _numpy(name, obj).asarray(obj.numpy()))
    raise InputTypeError(f"{name} is a {type(obj).__name__}: expected a NumPy array or a tensor (torch, or "
                         "anything with __dlpack__ or .numpy()), an ssmv.bf16() array, a buffer or nested lists")


def to_array(name, obj, family=MAMBA2):
    """The Converted tensor of a problem or output argument of `family`, its rank checked;
    None for None."""
    if obj is None:
        return None
    conv = read(name, obj)
    _check_rank(name, conv.array, family)
    return conv


def _check_rank(name, arr, family):
    ranks, layout = family.ranks[name]
    if arr.ndim not in ranks:
        hint = family.rank_hints.get((name, arr.ndim), "")
        raise InputError(f"{name} has shape {list(arr.shape)}: expected {layout}{hint}")


def _where(name, t, flat):
    return f"{name}[{', '.join(map(str, t.coords(flat)))}]"


def check_integer(name, conv):
    if conv is None:
        return
    t = conv.array
    if t.dtype.kind not in "iu":
        raise InputTypeError(f"{name} has dtype {conv.described}: expected integers (int32 or int64)")
    if t.dtype.name != "int64":
        try:
            conv.array = Tensor.of_values("int64", t.shape, t.values())
        except OverflowError:
            raise InputError(f"{name}: a value does not fit int64") from None


# fp16: the exponent (bits 14..10) is in the high byte; all ones is Inf or NaN.
_FP16_NONFINITE = bytes(int(b & 0x7C == 0x7C) for b in range(256))


def check_finite(name, conv):
    """Inputs must be finite (outputs may hold NaN/Inf: ssmv judges them INVALID)."""
    t = conv.array
    if conv.dtype_format == "fp16":
        marks = t.data[1::2].translate(_FP16_NONFINITE)
        first, bad = marks.find(1), marks.count(1)
        if first < 0:
            return
        shown = repr(t.values()[first])
    elif conv.dtype_format in ("fp32", "fp64", "bf16"):
        values = t.values() if conv.dtype_format != "bf16" else Tensor("float32", t.shape,
                                                                       bf16_bits_as_fp32(t.data)).values()
        if all(map(math.isfinite, values)):
            return
        first = next(i for i, v in enumerate(values) if not math.isfinite(v))
        bad = sum(1 for v in values if not math.isfinite(v))
        if conv.dtype_format == "bf16":
            bits = t.values()[first] & 0xFFFF
            shown = f"bits 0x{bits:04x} (bf16 {'NaN' if bits & 0x7F else 'Inf'})"
        else:
            shown = repr(float(values[first]))
    else:
        return
    raise InputError(f"{_where(name, t, first)} = {shown}: inputs must be finite ({bad} non-finite values in "
                     f"{name}; outputs may hold NaN/Inf, which are judged INVALID)")


def check_fp32_values(name, conv):
    """A, D and dt_bias are fp32 values; wider dtypes must hold exact fp32 values."""
    t = conv.array
    if conv.dtype_format == "bf16" and conv.bf16_dtype:
        # bf16 values: exact fp32 values.
        conv.array = Tensor("float32", t.shape, bf16_bits_as_fp32(t.data))
        conv.dtype_format = "fp32"
        return
    if conv.dtype_format == "bf16":
        raise InputTypeError(f"{name} has dtype {conv.described}: {name} holds fp32 values "
                             "(float32, or float64/float16 holding fp32 values), not bit patterns")
    if conv.dtype_format == "int":
        raise InputTypeError(f"{name} has dtype {conv.described}: {name} holds fp32 values (float32)")
    if conv.dtype_format == "fp16":
        conv.array = Tensor.of_values("float32", t.shape, t.values())
    elif conv.dtype_format == "fp64":
        values = t.values()
        for i, v in enumerate(values):
            f = to_fp32(v)
            if f != v and math.isfinite(v):
                raise InputError(f"{_where(name, t, i)} = {v!r} is not an fp32 value (the nearest is {hexfloat(f)} = "
                                 f"{f!r}): pass the float32 values the kernel got")
        conv.array = Tensor.of_values("float32", t.shape, values)
    conv.dtype_format = "fp32"


def widen_bf16(name, conv):
    """bf16 values (or int16 bit patterns) as the float32 tensor of the same values; a note."""
    t = conv.array
    described = conv.described
    conv.array = Tensor("float32", t.shape, bf16_bits_as_fp32(t.data))
    conv.dtype_format, conv.bf16_dtype, conv.described = "fp32", False, "float32"
    return f"{name} {described}: bf16 values written as fp32, the state format"


def check_dtype_format(name, conv):
    """A tensor in the format its own dtype says, bf16 or fp32 (Mamba-3's angles): bf16 values
    and int16/uint16 bit patterns stay bf16, float32 is fp32, float64 must hold fp32 values
    (written as float32). Returns the format and a note when something was done."""
    if conv.dtype_format in ("bf16", "fp32"):
        return conv.dtype_format, None
    if conv.dtype_format == "fp64":
        described = conv.described
        check_fp32_values(name, conv)
        return "fp32", (f"{name} {described}: read as fp32 values (ssmv takes {name}' format from its dtype, "
                        "bf16 or float32; pass a bf16 tensor for bf16)")
    raise InputTypeError(f"{name} has dtype {conv.described}: {name} holds bf16 values (a bf16 tensor, "
                         "ssmv.bf16(), int16 bit patterns) or fp32 values (float32), the format ssmv reads from "
                         "its dtype")


def infer_format(group, arg, declared, convs):
    """The format of a group of tensors: the declared one (each tensor's dtype checked
    against it), else the one their dtypes say when they agree. Returns (format, note)."""
    present = [(n, c) for n, c in convs if c is not None]
    if declared is not None:
        for n, c in present:
            if c.dtype_format == "bf16" and declared != "bf16":
                raise InputTypeError(f"{n} holds bf16 values ({c.described}) but {arg}={declared!r}")
            if c.dtype_format == "int":
                raise InputTypeError(f"{n} has dtype {c.described}: expected {declared} values")
        return declared, None
    if not present:
        return None, None
    for n, c in present:
        if c.dtype_format == "int":
            raise InputTypeError(f"{n} has dtype {c.described}: expected floating-point values "
                                 "(float32, float16, bf16)")
        if c.dtype_format == "fp64":
            raise InputTypeError(f"{n} has dtype {c.described}, which does not say which format its values "
                                 f"are in: pass {arg}='fp32', 'bf16' or 'fp16' (or the tensor in that dtype)")
    kinds = sorted({c.dtype_format for _, c in present})
    if len(kinds) > 1:
        which = ", ".join(f"{n} {c.described}" for n, c in present)
        raise InputTypeError(f"the {group} tensors disagree on their format ({which}): pass {arg}="
                             f"{' or '.join(repr(k) for k in kinds)} (values must be exact in it)")
    f = kinds[0]
    names = ", ".join(n for n, _ in present)
    return f, f"{arg} {f}: inferred from the dtype of {names} ({present[0][1].described})"
