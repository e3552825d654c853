"""Turning what a kernel author passes (NumPy arrays, PyTorch tensors, anything with
``__dlpack__`` or ``.numpy()``) into the arrays of a dump, and inferring their formats.

NumPy has no bf16: bf16 tensors go into the dump as their 16-bit patterns (int16), the
convention of docs/tensor-files.md ("bf16 without a NumPy dtype").
"""

import sys

import numpy as np

from ._errors import InputError, InputTypeError

FORMATS = ("fp32", "bf16", "fp16")
_FORMAT_ALIASES = {
    "fp32": "fp32", "float32": "fp32", "f32": "fp32",
    "bf16": "bf16", "bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "f16": "fp16", "half": "fp16",
}

# The tensors ssmv reads (docs/tensor-files.md), by the format their values are in.
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
    """One tensor as it goes into the dump: the array, the format its dtype says (or None
    when the dtype does not say: float64), and a note when something was done to it."""

    def __init__(self, array, dtype_format, described, note=None, bf16_dtype=False):
        self.array = array
        self.bf16_dtype = bf16_dtype      # a real bf16 dtype (torch, ml_dtypes), not int16 patterns
        self.dtype_format = dtype_format  # 'fp32', 'bf16' (int16 patterns), 'fp16', 'fp64', 'int'
        self.described = described        # e.g. "torch.bfloat16", "int16 (bf16 bit patterns)"
        self.note = note


def _from_torch(name, t):
    torch = sys.modules["torch"]
    note = None
    t = t.detach()
    if t.device.type != "cpu":
        note = f"{name}: copied from {t.device} to the CPU"
        t = t.cpu()
    if t.is_conj():
        t = t.resolve_conj()
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return Converted(t.view(torch.int16).numpy().copy(), "bf16", "torch.bfloat16", note, True)
    if t.is_complex() or t.dtype == torch.bool or "float8" in str(t.dtype):
        raise InputTypeError(f"{name} has dtype {t.dtype}: ssmv reads fp32, bf16 and fp16 values "
                             "(and integers for cu_seqlens, prefill_tokens)")
    arr = t.numpy().copy()
    return Converted(arr, _dtype_format(arr.dtype), str(t.dtype), note)


def _dtype_format(dt):
    if dt == np.float32:
        return "fp32"
    if dt == np.float16:
        return "fp16"
    if dt == np.float64:
        return "fp64"
    if dt in (np.int16, np.uint16):
        return "bf16"
    if dt.kind in "iu":
        return "int"
    return None


def to_array(name, obj):
    """A C-ordered NumPy array from a NumPy array, a torch tensor, or anything exposing
    ``__array__``, ``__dlpack__`` or ``.numpy()``; bf16 as int16 bit patterns."""
    if obj is None:
        return None
    mod = type(obj).__module__ or ""
    if mod.split(".")[0] == "torch" and hasattr(obj, "device") and hasattr(obj, "dtype"):
        conv = _from_torch(name, obj)
    else:
        arr = None
        if isinstance(obj, np.ndarray):
            arr = obj
        elif hasattr(obj, "__array__") or isinstance(obj, (list, tuple, int, float)):
            try:
                arr = np.asarray(obj)
            except Exception as e:  # e.g. a CuPy array: no implicit device-to-host copy
                raise InputTypeError(f"{name}: cannot read it as a host array ({e}); copy it to the "
                                     "CPU first (torch: .cpu(), CuPy: .get(), JAX: jax.device_get)") from None
        elif hasattr(obj, "__dlpack__"):
            try:
                arr = np.from_dlpack(obj)
            except Exception as e:
                raise InputTypeError(f"{name}: cannot read it through __dlpack__ ({e}); pass a CPU "
                                     "NumPy array or torch tensor (bf16 is handled for torch tensors)") from None
        elif hasattr(obj, "numpy"):
            arr = np.asarray(obj.numpy())
        else:
            raise InputTypeError(f"{name} is a {type(obj).__name__}: expected a NumPy array or a tensor "
                                 "(torch, or anything with __dlpack__ or .numpy())")
        if arr.dtype.name == "bfloat16":  # ml_dtypes (JAX): same bits, NumPy-viewable as uint16
            conv = Converted(np.ascontiguousarray(arr).view(np.uint16), "bf16", "bfloat16", bf16_dtype=True)
        else:
            if arr.dtype.kind not in "fiu" or arr.dtype.kind == "f" and arr.dtype.itemsize > 8:
                raise InputTypeError(f"{name} has dtype {arr.dtype}: ssmv reads fp32, bf16 (as int16 bit "
                                     "patterns) and fp16 values, and integers for cu_seqlens, prefill_tokens")
            arr = np.ascontiguousarray(arr)
            if arr.dtype.byteorder == ">":
                arr = arr.astype(arr.dtype.newbyteorder("<"))
            described = str(arr.dtype) + (" (bf16 bit patterns)" if arr.dtype in (np.int16, np.uint16) else "")
            conv = Converted(arr, _dtype_format(arr.dtype), described)
    _check_rank(name, conv.array)
    return conv


def _check_rank(name, arr):
    ranks, layout = _RANKS[name]
    if arr.ndim not in ranks:
        hint = ""
        if name == "A" and arr.ndim == 3:
            hint = " (selective_state_update's A [H, P, N] is broadcast from per-head values: pass A[:, 0, 0])"
        if name == "dt" and arr.ndim == 3:
            hint = " (selective_state_update's dt [batch, H, P] is broadcast: pass dt[:, :, 0])"
        raise InputError(f"{name} has shape {list(arr.shape)}: expected {layout}{hint}")


def check_integer(name, conv):
    if conv is None:
        return
    if conv.array.dtype.kind not in "iu":
        raise InputTypeError(f"{name} has dtype {conv.described}: expected integers (int32 or int64)")
    conv.array = conv.array.astype(np.int64)


def check_finite(name, conv):
    """Inputs must be finite (outputs may hold NaN/Inf: ssmv judges them INVALID)."""
    a = conv.array
    if conv.dtype_format == "bf16":
        bad = (a.view(np.uint16) & 0x7F80) == 0x7F80
    elif a.dtype.kind == "f":
        bad = ~np.isfinite(a)
    else:
        return
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        v = a[idx]
        shown = f"bits 0x{int(v) & 0xFFFF:04x} (bf16 {'NaN' if int(v) & 0x7F else 'Inf'})" \
            if conv.dtype_format == "bf16" else repr(float(v))
        raise InputError(f"{name}[{', '.join(map(str, idx))}] = {shown}: inputs must be finite "
                         f"({int(bad.sum())} non-finite values in {name}; outputs may hold NaN/Inf, "
                         "which are judged INVALID)")


def check_fp32_values(name, conv):
    """A, D and dt_bias are fp32 values; wider dtypes must hold exact fp32 values."""
    a = conv.array
    if conv.dtype_format == "bf16" and conv.bf16_dtype:
        # A bf16 tensor: its values are exact fp32 values.
        conv.array = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        conv.dtype_format = "fp32"
        return
    if conv.dtype_format == "bf16":
        raise InputTypeError(f"{name} has dtype {conv.described}: {name} holds fp32 values "
                             "(float32, or float64/float16 holding fp32 values), not bit patterns")
    if conv.dtype_format == "int":
        raise InputTypeError(f"{name} has dtype {conv.described}: {name} holds fp32 values (float32)")
    if conv.dtype_format == "fp16":
        conv.array = a.astype(np.float32)
    elif conv.dtype_format == "fp64":
        f = a.astype(np.float32)
        with np.errstate(invalid="ignore"):
            inexact = (f.astype(np.float64) != a) & np.isfinite(a)
        if inexact.any():
            idx = tuple(int(i) for i in np.argwhere(inexact)[0])
            raise InputError(f"{name}[{', '.join(map(str, idx))}] = {float(a[idx])!r} is not an fp32 value "
                             f"(the nearest is {hexfloat(f[idx])} = {float(f[idx])!r}): pass the float32 "
                             "values the kernel got")
        conv.array = f
    conv.dtype_format = "fp32"


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
