"""check, assert_within_contract and compare: a dump written, ssmv run on it, its report read."""

import functools
import hashlib
import json
import math
import numbers
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from . import _arrays
from ._arrays import hexfloat
from ._tensor import Tensor, save_npz, to_fp32
from ._errors import USER_ERRORS, InputError, InputTypeError, SsmvError
from ._run import find_binary, run_json
from .report import Report

__version__ = "0.1.0"

KERNELS = ("ssu", "chunk_scan", "handoff")
MAMBA3_KERNEL = "mamba3_step"  # check_mamba3()'s default
# check_mamba3()'s kernels: the step kernel, mamba_ssm's chunked prefill mamba3_siso_combined,
# and the prefill followed by the step kernel from the state it returned.
MAMBA3_KERNELS = ("mamba3_step", "mamba3_prefill", "mamba3_handoff")
MAMBA3_CONTRACTS = ("mamba3_siso_step.production", "mamba3_siso_step.host_emulation")  # the step kernel's
MAMBA3_PREFILL_CONTRACTS = ("mamba3_siso_combined.production", "mamba3_siso_combined.fp32_angles",
                            "mamba3_siso_combined.host_emulation")
MAMBA3_DEFAULT_CHUNK = 64  # mamba3_siso_combined's default chunk_size (ssmv's default)
CHUNK_LAYOUTS = ("sequence", "global")


def _public(fn):
    """User errors leave the package with a one-frame traceback (and none in pytest's)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        __tracebackhide__ = True  # pytest: show the caller's line, not this one
        try:
            return fn(*args, **kwargs)
        except USER_ERRORS as e:
            raise e.with_traceback(None) from None
    return wrapper


# --- options ---------------------------------------------------------------------------

def _choice(arg, value, choices):
    if value is None:
        return None
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"{arg}={value!r}: expected one of {', '.join(repr(c) for c in choices)}")
    return value


def _positive_int(arg, value, minimum):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < minimum:
        raise InputError(f"{arg}={value!r}: expected an integer >= {minimum}")
    return int(value)


def _flag(arg, value):
    numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool")
    if not isinstance(value, bool) and not numpy_bool:
        raise InputTypeError(f"{arg}={value!r}: expected True or False")
    return bool(value)


def _contract(arg, value):
    if value is None:
        return None
    if isinstance(value, os.PathLike) or isinstance(value, str) and os.path.exists(value):
        p = Path(value)
        if not p.is_file():
            raise InputError(f"{arg}={str(value)!r}: no such contract file")
        return str(p.resolve())
    if not isinstance(value, str) or not value:
        raise InputTypeError(f"{arg}={value!r}: expected a preset name (ssmv contract list) or a contract "
                             "JSON file (docs/contracts.md)")
    return value


def _dt_limit(arg, value, round_dt_limit, notes):
    """(lo, hi) as the metadata string of two fp32 values ('0x0.0p+0,inf')."""
    if value is None:
        return None
    try:
        lo, hi = value
        pair = [float(lo), float(hi)]
    except (TypeError, ValueError):
        raise InputError(f"{arg}={value!r}: expected a pair (lo, hi) of numbers") from None
    out = []
    for which, v in zip(("lo", "hi"), pair):
        if math.isnan(v):
            raise InputError(f"{arg}={value!r}: {which} is NaN")
        f = to_fp32(v)
        if f != v:
            if not round_dt_limit:
                raise InputError(
                    f"{arg}={value!r}: {which} = {v!r} is not an fp32 value (kernels receive dt_limit as fp32; "
                    f"the nearest is {hexfloat(f)} = {f!r}): give that value, e.g. float(np.float32({v!r})), or pass "
                    "round_dt_limit=True")
            notes.append(f"{arg} {which} {v!r} rounded to the nearest fp32, {hexfloat(f)} = {f!r}")
        out.append(f.hex())
    if pair[0] > pair[1]:
        raise InputError(f"{arg}={value!r}: lo > hi")
    return ",".join(out)


# --- the dump --------------------------------------------------------------------------

def _problem_arrays(tensors, formats, notes, need_inputs=True, family=_arrays.MAMBA2):
    """Converts the problem's and outputs' tensors of `family` (_arrays.MAMBA2, MAMBA3); infers
    the formats. Returns the dump's arrays and its format metadata."""
    conv = {}
    for name, obj in tensors.items():
        if obj is None:
            continue
        c = _arrays.to_array(name, obj, family)
        if c.note:
            notes.append(c.note)
        conv[name] = c
    if need_inputs:
        for name in family.required:
            if name not in conv:
                needs = ", ".join(family.required[:-1]) + " and " + family.required[-1]
                what = "the problem" if family is _arrays.MAMBA2 else f"a {family.name} problem"
                raise InputError(f"{name} is missing: {what} needs {needs}")
    for name in family.ints:
        if name in conv:
            _arrays.check_integer(name, conv[name])
    for name in family.fp32:
        if name in conv:
            _arrays.check_fp32_values(name, conv[name])
            if name not in family.outputs:
                _arrays.check_finite(name, conv[name])
    for name in family.dtype_format:
        if name in conv:
            _, note = _arrays.check_dtype_format(name, conv[name])
            if note:
                notes.append(note)
            _arrays.check_finite(name, conv[name])
    loose = [n for n in family.bf16_state_parts if n in conv and conv[n].dtype_format == "bf16"]
    if loose:  # bf16 K/V state parts: in an fp32 state (declared, inferred from the others or default) widened
        others = [(n, conv.get(n)) for n in family.state if n not in loose]
        if _arrays.infer_format("state", "state_format", formats.get("state_format"), others)[0] in (None, "fp32"):
            for n in loose:
                notes.append(_arrays.widen_bf16(n, conv[n]))
    meta = {}
    groups = (("input", "input_format", family.input),
              ("state", "state_format", family.state),
              ("output", "output_format", family.output))
    for group, arg, names in groups:
        members = [(n, conv.get(n)) for n in names]
        f, note = _arrays.infer_format(group, arg, formats.get(arg), members)
        if note:
            notes.append(note)
        if f is not None:
            meta["ssmv." + arg] = f
    for name in family.input + family.state:
        if name in conv and name not in family.outputs:
            _arrays.check_finite(name, conv[name])
    return {n: c.array for n, c in conv.items()}, meta


def _formats(input_format, state_format, output_format):
    return {"input_format": _arrays.format_name("input_format", input_format),
            "state_format": _arrays.format_name("state_format", state_format),
            "output_format": _arrays.format_name("output_format", output_format)}


def _not_mamba3(prefix, kernel):
    if isinstance(kernel, str) and kernel in MAMBA3_KERNELS:
        how = "ssmv.check_mamba3()" if kernel == MAMBA3_KERNEL else f"ssmv.check_mamba3(kernel={kernel!r}, ...)"
        raise InputError(f"{prefix}kernel={kernel!r}: a Mamba-3 kernel, whose tensors are not Mamba2's: check it "
                         f"with {how} (this function takes Mamba2's 'ssu', 'chunk_scan', 'handoff')")


def _kernel_meta(prefix, kernel, contract, decode_contract, chunk_size, chunk_layout, prefill_tokens, arrays):
    if kernel is None:
        raise InputError(f"{prefix}kernel=None: expected one of {', '.join(repr(k) for k in KERNELS)}")
    _not_mamba3(prefix, kernel)
    meta = {"ssmv.kernel": _choice(prefix + "kernel", kernel, KERNELS)}
    c = _contract(prefix + "contract", contract)
    if c:
        meta["ssmv.contract"] = c
    d = _contract(prefix + "decode_contract", decode_contract)
    if d:
        if kernel != "handoff":
            raise InputError(f"{prefix}decode_contract={decode_contract!r}: only a hand-off "
                             f"(kernel='handoff') has a decode part; this is kernel={kernel!r}")
        meta["ssmv.decode_contract"] = d
    cs = _positive_int(prefix + "chunk_size", chunk_size, 1)
    if cs is not None:
        meta["ssmv.chunk_size"] = str(cs)
    cl = _choice(prefix + "chunk_layout", chunk_layout, CHUNK_LAYOUTS)
    if cl:
        meta["ssmv.chunk_layout"] = cl
    if prefill_tokens is not None:
        if isinstance(prefill_tokens, numbers.Integral) and not isinstance(prefill_tokens, bool):
            meta["ssmv.prefill_tokens"] = str(_positive_int(prefix + "prefill_tokens", prefill_tokens, 0))
        else:
            c = _arrays.to_array("prefill_tokens", prefill_tokens)
            _arrays.check_integer("prefill_tokens", c)
            arrays["prefill_tokens"] = c.array
    return meta


def _dump_stem(name):
    if name is None:
        test = os.environ.get("PYTEST_CURRENT_TEST", "")
        name = test.split(" ")[0].split("/")[-1] if test else "ssmv-dump"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(name)).strip("._")[:80] or "ssmv-dump"


def _save(path, arrays, meta):
    out = dict(arrays)
    text = json.dumps(meta, sort_keys=True).encode()
    out["__metadata__"] = Tensor("uint8", (len(text),), text)
    save_npz(path, out)


def _digest(arrays, meta):
    h = hashlib.sha1(json.dumps(meta, sort_keys=True).encode())
    for k in sorted(arrays):
        t = arrays[k]
        h.update(k.encode() + t.dtype.name.encode() + str(t.shape).encode())
        h.update(t.data)
    return h.hexdigest()[:10]


_session_dir = None


def cex_dir():
    """Where failing dumps are kept: $SSMV_CEX_DIR, else one temporary folder per process."""
    global _session_dir
    env = os.environ.get("SSMV_CEX_DIR")
    if env:
        Path(env).mkdir(parents=True, exist_ok=True)
        return Path(env)
    if _session_dir is None:
        _session_dir = Path(tempfile.mkdtemp(prefix="ssmv-cex-"))
    return _session_dir


def _keep(path, dump):
    """Copies the dump out of the working folder: to `dump` when it is a path, else to cex_dir()."""
    if isinstance(dump, (str, os.PathLike)):
        dest = Path(dump)
        dest.parent.mkdir(parents=True, exist_ok=True)
    else:
        dest = cex_dir() / Path(path).name
    shutil.copyfile(path, dest)
    return str(dest.resolve())


def _run(command, files, primary, dump, binary):
    """Writes `files` ({name: (arrays, meta)}) to a working folder, runs `ssmv COMMAND`,
    keeps `primary`'s dump when asked or when something failed, and returns (json, out, kept)."""
    binary = find_binary(binary)
    with tempfile.TemporaryDirectory(prefix="ssmv-") as tmp:
        for fname, (arrays, meta) in files.items():
            _save(Path(tmp) / fname, arrays, meta)
        try:
            j, out = run_json(binary, command, tmp)
        except SsmvError as e:
            kept = [_keep(Path(tmp) / f, None) for f in files]
            e.dump = kept[0]
            again = f"`ssmv check {kept[0]}` shows the same" if command[0] == "check" else \
                f"the files are kept in {cex_dir()}: {', '.join(Path(k).name for k in kept)}"
            e.args = (f"{e.message}\n(ssmv refused the dump the package wrote; {again})",)
            raise
        kept = None
        if dump or not j["ok"]:
            if len(files) == 1:
                kept = _keep(Path(tmp) / primary, dump)
            else:  # a comparison: keep all of its files side by side
                for f in files:
                    k = _keep(Path(tmp) / f, None)
                    kept = k if f == primary else kept
        return j, out, kept


def _check(*, x, dt, A, B, C, y, final_states, z, D, dt_bias, initial_states, cu_seqlens, prefill_tokens,
           kernel, contract, decode_contract, chunk_size, chunk_layout, dt_softplus, dt_limit, round_dt_limit,
           input_format, state_format, output_format, source, name, dump, binary):
    notes = []
    _not_mamba3("", kernel)
    if y is None:
        raise InputError("y is missing: pass the kernel's output y (and final_states, when it returns them)")
    formats = _formats(input_format, state_format, output_format)
    arrays, meta = _problem_arrays(
        dict(x=x, dt=dt, A=A, B=B, C=C, z=z, D=D, dt_bias=dt_bias, initial_states=initial_states,
             cu_seqlens=cu_seqlens, y=y, final_states=final_states), formats, notes)
    meta.update(_kernel_meta("", kernel, contract, decode_contract, chunk_size, chunk_layout, prefill_tokens,
                             arrays))
    meta["ssmv.dt_softplus"] = "true" if _flag("dt_softplus", dt_softplus) else "false"
    lim = _dt_limit("dt_limit", dt_limit, _flag("round_dt_limit", round_dt_limit), notes)
    if lim:
        meta["ssmv.dt_limit"] = lim
    meta["ssmv.source"] = f"ssmv Python package {__version__}" + (f": {source}" if source else "")
    _default_notes(meta, notes)
    return _check_dump(arrays, meta, notes, name, dump, binary)


def _check_dump(arrays, meta, notes, name, dump, binary):
    """`ssmv check` on the dump of `arrays` and `meta`: its Report (the dump kept when asked or
    when something failed)."""
    if isinstance(dump, (str, os.PathLike)) and str(dump).endswith(".npz"):
        fname = Path(dump).name
    else:
        fname = f"{_dump_stem(name)}-{_digest(arrays, meta)}.npz"  # the test's name, the content's hash
        if isinstance(dump, (str, os.PathLike)):
            dump = Path(dump) / fname
    j, out, kept = _run(["check", fname], {fname: (arrays, meta)}, fname, dump, binary)
    return Report.of(j, notes, kept, out)


def _default_notes(meta, notes):
    kernel = meta["ssmv.kernel"]
    if "ssmv.contract" not in meta:
        default = "ssu" if kernel == "ssu" else "chunk_scan.production"
        notes.append(f"contract not given: ssmv's default {default} (the bundled kernel's); mamba_ssm/vLLM "
                     "Triton kernels: contract='triton.ssu', 'triton.chunk_scan' or 'triton.chunk_scan.varlen' "
                     "(docs/real-kernels.md)")
    if "ssmv.state_format" not in meta and kernel in ("ssu", "handoff"):
        notes.append("state_format not given and no state tensor to infer it from: fp32 (ssmv's default), the "
                     "format the state is stored in between tokens")


_CHECK_DOC = """
    The problem (docs/tensor-files.md; packed [T, ...] or batched [batch, L, ...] layout):
      x [T, H, P], dt [T, H], A [H], B [T, G, N], C [T, G, N]; optional z [T, H, P], D [H] or
      [H, P], dt_bias [H], initial_states [S, H, P, N], cu_seqlens [S + 1] (one sequence
      without), prefill_tokens (hand-off: an int for every sequence, or [S]).
    The kernel's outputs: y [T, H, P]; final_states [S, H, P, N] when it returns them.
    Tensors: NumPy arrays, torch tensors (bf16 as they are; GPU tensors are copied to the
    CPU, with a note), ssmv.bf16(values) (floats rounded to bf16), buffers (array.array,
    memoryview), nested lists, anything with __array__, __dlpack__ or .numpy(); int16/uint16
    arrays are bf16 bit patterns. Formats are inferred from the dtypes when they say it
    (float32, float16, bf16, int16 patterns) and the report's notes say so; float64 needs
    input_format= etc. NumPy is not needed unless the tensors are NumPy's.
    Options as `ssmv check` takes them (ssmv check --help): kernel 'ssu' | 'chunk_scan' |
    'handoff'; contract / decode_contract: a preset (ssmv contract list, e.g. 'triton.ssu')
    or a contract JSON file; chunk_size, chunk_layout 'sequence' | 'global'; dt_softplus;
    dt_limit (lo, hi) of fp32 values (round_dt_limit=True rounds them).
    dump: a path (.npz file or folder) to keep the dump at, or True for cex_dir(); failing
    dumps are always kept, in $SSMV_CEX_DIR or else a temporary folder (Report.dump); the
    file is named after the running pytest test (or `name`). binary: the ssmv program
    (default: $SSMV_BINARY, PATH, then the repository's build/release/ssmv).
"""


@_public
def check(*, x=None, dt=None, A=None, B=None, C=None, y=None, final_states=None, z=None, D=None,
          dt_bias=None, initial_states=None, cu_seqlens=None, prefill_tokens=None, kernel="ssu", contract=None,
          decode_contract=None, chunk_size=None, chunk_layout=None, dt_softplus=False, dt_limit=None,
          round_dt_limit=False, input_format=None, state_format=None, output_format=None, source=None,
          name=None, dump=None, binary=None) -> Report:
    args = dict(locals())
    __tracebackhide__ = True
    return _check(**args)


check.__doc__ = ("Judges a kernel's outputs with `ssmv check`; returns the Report (per tensor the "
                 "verdict, counts, ULPs, err/scale, bound usage, worst element, bound sources).\n" + _CHECK_DOC)


@_public
def assert_within_contract(*, x=None, dt=None, A=None, B=None, C=None, y=None, final_states=None, z=None,
                           D=None, dt_bias=None, initial_states=None, cu_seqlens=None, prefill_tokens=None,
                           kernel="ssu", contract=None, decode_contract=None, chunk_size=None, chunk_layout=None,
                           dt_softplus=False, dt_limit=None, round_dt_limit=False, input_format=None,
                           state_format=None, output_format=None, source=None, name=None, dump=None,
                           binary=None, msg=None) -> Report:
    args = dict(locals())
    __tracebackhide__ = True
    del args["msg"]
    return _assert_ok(_check(**args), msg)


assert_within_contract.__doc__ = (
    "Like check(), and raises AssertionError unless no element is VIOLATION or INVALID. The "
    "message says what torch.testing.assert_close says (mismatched count and share, greatest "
    "absolute and relative difference with their index) plus verdicts, ULPs, bound usage, the "
    "worst element exactly, its bound's sources, and the kept dump that `ssmv check DUMP` "
    "re-runs; the same lines as the C++ EXPECT_WITHIN_CONTRACT. Returns the Report when it passes.\n"
    "msg: what to call the outputs in the message's first line.\n" + _CHECK_DOC)


# --- Mamba-3 ------------------------------------------------------------------------------

_MAMBA3_INITIAL = ("initial_angle_state", "initial_states", "initial_B_prev", "initial_x_prev")
_MAMBA3_FINAL = ("final_angle_state", "final_states", "final_B_prev", "final_x_prev")


def _mamba3_kernel_meta(kernel, contract, decode_contract, chunk_size, prefill_tokens, notes):
    """The kernel and its options as the dump's metadata (verify/family/mamba3/dump_reading.h),
    refusing what ssmv refuses for the kernel, with the same reasons; notes on the defaults."""
    if not isinstance(kernel, str) or kernel not in MAMBA3_KERNELS:
        hint = " (Mamba2's kernel: check it with ssmv.check())" if isinstance(kernel, str) and kernel in KERNELS else ""
        raise InputError(f"kernel={kernel!r}: expected one of {', '.join(repr(k) for k in MAMBA3_KERNELS)}{hint}")
    meta = {"ssmv.kernel": kernel}
    step, handoff = kernel == "mamba3_step", kernel == "mamba3_handoff"
    if chunk_size is not None and step:
        raise InputError(f"chunk_size={chunk_size!r} given for kernel='mamba3_step': the step kernel has no chunks "
                         "(chunk_size is the prefill's: kernel='mamba3_prefill' or 'mamba3_handoff')")
    cs = _positive_int("chunk_size", chunk_size, 1)
    if cs is not None:
        meta["ssmv.chunk_size"] = str(cs)
    elif not step:
        notes.append(f"chunk_size not given: ssmv's default {MAMBA3_DEFAULT_CHUNK} (mamba3_siso_combined's default "
                     "chunk_size)")
    if prefill_tokens is not None and not handoff:
        raise InputError(f"prefill_tokens={prefill_tokens!r} given for kernel={kernel!r}: only kernel='mamba3_handoff' "
                         "has a prefill part")
    if handoff:
        if prefill_tokens is None:
            raise InputError("kernel='mamba3_handoff' needs prefill_tokens (an integer >= 1): the tokens of every "
                             "sequence that went through the prefill, the rest through the step kernel from the state "
                             "it returned")
        if isinstance(prefill_tokens, bool) or not isinstance(prefill_tokens, numbers.Integral) or prefill_tokens < 1:
            raise InputError(f"prefill_tokens={prefill_tokens!r}: expected an integer >= 1, the same for every "
                             "sequence (a Mamba-3 hand-off has no per-sequence prefill_tokens)")
        meta["ssmv.prefill_tokens"] = str(int(prefill_tokens))
    c = _contract("contract", contract)
    if c:
        meta["ssmv.contract"] = c
    elif step:
        notes.append(f"contract not given: ssmv's default {MAMBA3_CONTRACTS[0]} (mamba_ssm's Triton step kernel on "
                     f"an H200; adt <= 0); a C++ host emulation of it: contract='{MAMBA3_CONTRACTS[1]}' "
                     "(docs/mamba3-bounds.md)")
    else:
        notes.append(f"contract not given: ssmv's default {MAMBA3_PREFILL_CONTRACTS[0]} (mamba_ssm's Triton prefill "
                     f"mamba3_siso_combined on an H200, its angle stored in bf16; adt <= 0); "
                     f"{', '.join(repr(k) for k in MAMBA3_PREFILL_CONTRACTS[1:])} (docs/mamba3-bounds.md part II)")
    d = _contract("decode_contract", decode_contract)
    if d:
        if not handoff:
            raise InputError(f"decode_contract={decode_contract!r} given for kernel={kernel!r}: only a hand-off "
                             "(kernel='mamba3_handoff') has a decode part")
        meta["ssmv.decode_contract"] = d
    elif handoff:
        notes.append(f"decode_contract not given: ssmv's default {MAMBA3_CONTRACTS[0]} (the step kernel's part of "
                     f"the hand-off); a C++ host emulation of it: decode_contract='{MAMBA3_CONTRACTS[1]}'")
    return meta


def _check_mamba3(*, x, B, C, dt, adt, trap, angles, B_bias, C_bias, y, D, z, cu_seqlens, initial_angle_state,
                  initial_states, initial_B_prev, initial_x_prev, final_angle_state, final_states, final_B_prev,
                  final_x_prev, kernel, contract, decode_contract, chunk_size, prefill_tokens, input_format,
                  state_format, output_format, source, name, dump, binary):
    notes, option_notes = [], []
    meta = _mamba3_kernel_meta(kernel, contract, decode_contract, chunk_size, prefill_tokens, option_notes)
    if y is None:
        raise InputError("y is missing: pass the kernel's output y (and the final state parts it returns)")
    initial = dict(initial_angle_state=initial_angle_state, initial_states=initial_states,
                   initial_B_prev=initial_B_prev, initial_x_prev=initial_x_prev)
    given = [n for n, v in initial.items() if v is not None]
    if 0 < len(given) < len(initial):
        missing = [n for n in initial if n not in given]
        raise InputError(f"{', '.join(given)} given without {', '.join(missing)}: the initial four-part state "
                         f"({', '.join(_MAMBA3_INITIAL)}) is given whole or not at all (none: the zero state)")
    formats = _formats(input_format, state_format, output_format)
    arrays, fmeta = _problem_arrays(
        dict(x=x, B=B, C=C, dt=dt, adt=adt, trap=trap, angles=angles, B_bias=B_bias, C_bias=C_bias, D=D, z=z,
             cu_seqlens=cu_seqlens, **initial, y=y, final_angle_state=final_angle_state, final_states=final_states,
             final_B_prev=final_B_prev, final_x_prev=final_x_prev), formats, notes, family=_arrays.MAMBA3)
    if "cu_seqlens" not in arrays:
        for n in _MAMBA3_INITIAL + _MAMBA3_FINAL:
            if n in arrays and arrays[n].shape[0] != 1:
                how = ("one launch of mamba_ssm's step kernel over a batch of S sequences is S tokens with "
                       "cu_seqlens=[0, 1, ..., S]" if kernel == MAMBA3_KERNEL else
                       "a batch of S sequences of L tokens is S·L tokens packed by sequence with "
                       "cu_seqlens=[0, L, 2L, ..., S·L]")
                raise InputError(
                    f"{n} has shape {list(arrays[n].shape)}: {arrays[n].shape[0]} sequences, but cu_seqlens is not "
                    f"given (one sequence of all the tokens); {how}")
    meta.update(fmeta)
    notes += option_notes
    if "ssmv.state_format" not in meta:
        whose = "the step kernel's" if kernel == MAMBA3_KERNEL else "the kernels'"
        notes.append(f"state_format not given and no state tensor to infer it from: fp32 (ssmv's default, {whose}), "
                     "the format the four-part state is stored in between tokens")
    meta["ssmv.source"] = f"ssmv Python package {__version__}" + (f": {source}" if source else "")
    return _check_dump(arrays, meta, notes, name, dump, binary)


_MAMBA3_DOC = """
    kernel (ssmv's kernel names; docs/mamba3-semantics.md):
      'mamba3_step' (the default): mamba_ssm's Mamba-3 SISO decode step kernel
      (mamba3_siso_step), one launch per token, the four-part state it returns fed to the next
      launch;
      'mamba3_prefill': its chunked prefill mamba3_siso_combined over every token of each
      sequence, chunk_size tokens a chunk;
      'mamba3_handoff': each sequence's first prefill_tokens tokens through the prefill, the
      rest through the step kernel, one launch per token, from the four-part state the prefill
      returned (a sequence no longer than prefill_tokens: the prefill only).
    Each is judged against the same exact function: the recurrence over all tokens of each
    sequence. The problem (docs/tensor-files.md, "Mamba-3 dumps"): the tokens of S sequences
    packed by sequence, token t of the packed axis T. ssmv's names, with mamba_ssm's in
    brackets:
      x [V] [T, H, P], B [K] and C [Q] [T, G, N], trap [Trap] [T, H] (the logit of λ),
      z [Z] [T, H, P] (optional): the input format;
      dt [DT] and adt [ADT] [T, H], B_bias [K_bias] and C_bias [Q_bias] [H, N], D [H]
      (optional): fp32 values;
      angles [Angles] [T, H, R]: bf16 or fp32, the format of its dtype;
      cu_seqlens [S + 1] (optional: one sequence). One step launch over a batch of S
      sequences is S tokens with cu_seqlens=[0, 1, ..., S].
      The initial four-part state, all or none (none: zero): initial_angle_state
      [Angle_State] [S, H, R] (fp32), initial_states [SSM_State] [S, H, P, N],
      initial_B_prev [K_State] [S, H, N] (the previous token's B after bias and rotation),
      initial_x_prev [V_State] [S, H, P] (its x): the state format. bf16 B_prev and x_prev
      (the kernels return V_State in the input dtype; the layer caches both in the model
      dtype) are widened to fp32 when the state is fp32, with a note.
    The kernel's outputs: y [T, H, P] (its first result, the output format); the parts of the
    state it returns after each sequence's last token, each optional, in the initial parts'
    layouts: final_angle_state (judged on the circle, mod 2π), final_states, final_B_prev,
    final_x_prev.
    Tensors and format inference as in check(): NumPy arrays, torch tensors (bf16 as they
    are), ssmv.bf16(values), buffers, nested lists; int16/uint16 arrays are bf16 bit patterns;
    formats are inferred from the dtypes (the report's notes say so); float64 needs
    input_format= etc. (fp32 tensors and angles may be float64 holding fp32 values).
    Options (the dump's metadata ssmv.kernel, ssmv.contract, ...; ssmv check --help):
      contract: the kernel's (in a hand-off, the prefill's). 'mamba3_step':
      'mamba3_siso_step.production' (ssmv's default: mamba_ssm's Triton step kernel on an
      H200, adt <= 0) or 'mamba3_siso_step.host_emulation' (ssmv's C++ emulation of it).
      'mamba3_prefill', 'mamba3_handoff': 'mamba3_siso_combined.production' (the default:
      mamba3_siso_combined on an H200, its angle stored in bf16 as shipped; adt <= 0),
      'mamba3_siso_combined.fp32_angles' (the same with the angle kept in fp32) or
      'mamba3_siso_combined.host_emulation' (docs/mamba3-bounds.md part II).
      decode_contract: a hand-off's step part, a step contract (default
      'mamba3_siso_step.production'); only with kernel='mamba3_handoff'.
      chunk_size: the prefill's chunk length, an integer >= 1 (default 64, the kernel's); not
      with kernel='mamba3_step'.
      prefill_tokens: the hand-off's prefill length, an integer >= 1, the same for every
      sequence; required with kernel='mamba3_handoff' and only there.
    What ssmv itself refuses (a contract that is not the kernel's, adt > 0 under a production
    contract, ...) raises ssmv.SsmvError with its message.
    Mamba2's options (dt_softplus, dt_limit, chunk_layout, tokens_per_launch, A, dt_bias, ...)
    are not arguments: Mamba-3's dt is taken as given. dump, name, source, binary: as in check().
"""


@_public
def check_mamba3(*, x, B, C, dt, adt, trap, angles, B_bias, C_bias, y, D=None, z=None, cu_seqlens=None,
                 initial_angle_state=None, initial_states=None, initial_B_prev=None, initial_x_prev=None,
                 final_angle_state=None, final_states=None, final_B_prev=None, final_x_prev=None,
                 kernel=MAMBA3_KERNEL, contract=None, decode_contract=None, chunk_size=None, prefill_tokens=None,
                 input_format=None, state_format=None, output_format=None, source=None, name=None, dump=None,
                 binary=None) -> Report:
    args = dict(locals())
    __tracebackhide__ = True
    return _check_mamba3(**args)


check_mamba3.__doc__ = (
    "Judges the outputs of a Mamba-3 SISO kernel with `ssmv check`: mamba_ssm's step kernel (kernel="
    "'mamba3_step', the default), its chunked prefill ('mamba3_prefill') or the prefill followed by the step "
    "kernel ('mamba3_handoff'). y and every final state part given, element by element, against the certified "
    "reference and the kernel's bound under its contract; returns the Report (per tensor: y, "
    "final_angle_state, final_state, final_B_prev, final_x_prev).\n" + _MAMBA3_DOC)


@_public
def assert_mamba3_within_contract(*, x, B, C, dt, adt, trap, angles, B_bias, C_bias, y, D=None, z=None,
                                  cu_seqlens=None, initial_angle_state=None, initial_states=None,
                                  initial_B_prev=None, initial_x_prev=None, final_angle_state=None,
                                  final_states=None, final_B_prev=None, final_x_prev=None, kernel=MAMBA3_KERNEL,
                                  contract=None, decode_contract=None, chunk_size=None, prefill_tokens=None,
                                  input_format=None, state_format=None, output_format=None, source=None, name=None,
                                  dump=None, binary=None, msg=None) -> Report:
    args = dict(locals())
    __tracebackhide__ = True
    del args["msg"]
    return _assert_ok(_check_mamba3(**args), msg)


assert_mamba3_within_contract.__doc__ = (
    "Like check_mamba3(), and raises AssertionError unless no element is VIOLATION or INVALID, with "
    "assert_within_contract()'s message (the worst element, its bound's sources, the kept dump). Returns the "
    "Report when it passes.\nmsg: what to call the outputs in the message's first line.\n" + _MAMBA3_DOC)


def _assert_ok(report, msg):
    if not report.ok:
        head = f"Expected {msg or 'the kernel outputs'} to be within its contract."
        raise AssertionError(head + "\n" + report.failure_message())
    return report


@dataclass
class Outputs:
    """One side of compare(): a kernel's outputs and how it computed them."""
    y: Any
    final_states: Any = None
    kernel: str = "ssu"
    contract: Optional[str] = None
    decode_contract: Optional[str] = None
    chunk_size: Optional[int] = None
    chunk_layout: Optional[str] = None
    prefill_tokens: Any = None
    dt_limit: Any = None  # this side's, when it differs from compare()'s


def _side_of(arg, side, cls):
    """A side of a comparison as given: the resolved path of a dump (str), or a `cls` (Outputs,
    Mamba3Outputs) built from a dict of its fields when need be."""
    if isinstance(side, (str, os.PathLike)):
        p = Path(side)
        if not p.is_file():
            raise InputError(f"{arg}={str(side)!r}: no such dump file")
        return str(p.resolve())
    fields = ", ".join(cls.__dataclass_fields__)
    if isinstance(side, dict):
        try:
            side = cls(**side)
        except TypeError as e:
            raise InputTypeError(f"{arg}: {e} (the keys are {cls.__name__}' fields: {fields})") from None
    if not isinstance(side, cls):
        raise InputTypeError(f"{arg} is a {type(side).__name__}: expected ssmv.{cls.__name__}(y=..., kernel=...), "
                             "a dict of its fields, or the path of a dump")
    return side


def _side_formats_into(sides, pmeta):
    """The output and state formats the sides' arrays declared, moved into the problem's metadata:
    one format per tensor for both kernels."""
    for arg in ("a", "b"):
        if sides[arg][0] is None:
            continue
        for key in ("ssmv.output_format", "ssmv.state_format"):
            f = sides[arg][0][1].pop(key, None)
            if f is not None and pmeta.setdefault(key, f) != f:
                raise InputTypeError(f"{arg}'s {key[5:]} {f} differs from the other side's {pmeta[key]}: "
                                     f"both kernels must write the same formats (or pass {key[5:]}=)")


def _run_compare(sides, files, args, stem, notes, dump, binary):
    """`ssmv compare` on the sides (dumps given by path, or files written from their arrays) and
    the problem file already in `files` / `args`."""
    primary = None
    for arg in ("a", "b"):
        built, path = sides[arg]
        if built is None:
            args += ["--" + arg, path]
        else:
            fname = f"{stem}-{arg}-{_digest(*built)}.npz"
            files[fname] = built
            args += ["--" + arg, fname]
            primary = primary or fname
    if not files:
        with tempfile.TemporaryDirectory(prefix="ssmv-") as tmp:
            j, out = run_json(find_binary(binary), args, tmp)
        return Report.of(j, notes, None, out)
    j, out, kept = _run(args, files, primary or next(iter(files)), dump, binary)
    return Report.of(j, notes, kept, out)


def _side(arg, side, problem_formats, notes, round_dt_limit):
    side = _side_of(arg, side, Outputs)
    if isinstance(side, str):
        return None, side
    side_notes = []
    arrays, meta = _problem_arrays({"y": side.y, "final_states": side.final_states}, problem_formats, side_notes,
                                   need_inputs=False)
    notes += [f"{arg}: {n}" for n in side_notes]
    meta.update(_kernel_meta(arg + ".", side.kernel, side.contract, side.decode_contract, side.chunk_size,
                             side.chunk_layout, side.prefill_tokens, arrays))
    lim = _dt_limit(arg + ".dt_limit", side.dt_limit, round_dt_limit, notes)
    if lim:
        meta["ssmv.dt_limit"] = lim
    return (arrays, meta), None


@dataclass
class Mamba3Outputs:
    """One side of compare_mamba3(): a Mamba-3 kernel's outputs (y and the final four-part state
    parts it returns, each optional but y) and how it computed them (check_mamba3()'s options)."""
    y: Any
    final_angle_state: Any = None
    final_states: Any = None
    final_B_prev: Any = None
    final_x_prev: Any = None
    kernel: str = MAMBA3_KERNEL
    contract: Optional[str] = None
    decode_contract: Optional[str] = None
    chunk_size: Optional[int] = None
    prefill_tokens: Optional[int] = None


def _mamba3_side(arg, side, formats, notes):
    """A side's output file (arrays, metadata), or None and the path of a dump."""
    side = _side_of(arg, side, Mamba3Outputs)
    if isinstance(side, str):
        return None, side
    side_notes, option_notes = [], []
    meta = _mamba3_kernel_meta(side.kernel, side.contract, side.decode_contract, side.chunk_size,
                               side.prefill_tokens, option_notes)
    arrays, fmeta = _problem_arrays(
        dict(y=side.y, final_angle_state=side.final_angle_state, final_states=side.final_states,
             final_B_prev=side.final_B_prev, final_x_prev=side.final_x_prev), formats, side_notes,
        need_inputs=False, family=_arrays.MAMBA3)
    notes += [f"{arg}: {n}" for n in side_notes + option_notes]
    meta.update(fmeta)
    return (arrays, meta), None


@_public
def compare_mamba3(*, a, b, x=None, B=None, C=None, dt=None, adt=None, trap=None, angles=None, B_bias=None,
                   C_bias=None, D=None, z=None, cu_seqlens=None, initial_angle_state=None, initial_states=None,
                   initial_B_prev=None, initial_x_prev=None, input_format=None, state_format=None,
                   output_format=None, name=None, dump=None, binary=None) -> Report:
    __tracebackhide__ = True
    notes = []
    formats = _formats(input_format, state_format, output_format)
    problem = dict(x=x, B=B, C=C, dt=dt, adt=adt, trap=trap, angles=angles, B_bias=B_bias, C_bias=C_bias, D=D, z=z,
                   cu_seqlens=cu_seqlens, initial_angle_state=initial_angle_state, initial_states=initial_states,
                   initial_B_prev=initial_B_prev, initial_x_prev=initial_x_prev)
    have_problem = any(v is not None for v in problem.values())
    sides = {arg: _mamba3_side(arg, side, formats, notes) for arg, side in (("a", a), ("b", b))}
    files, args, stem = {}, ["compare"], _dump_stem(name)
    if have_problem:
        parr, pmeta = _problem_arrays(problem, formats, notes, family=_arrays.MAMBA3)
        _side_formats_into(sides, pmeta)
        pmeta["ssmv.source"] = f"ssmv Python package {__version__}"
        pname = f"{stem}-problem-{_digest(parr, pmeta)}.npz"
        files[pname] = (parr, pmeta)
        args += ["--problem", pname]
    elif any(s[0] is not None for s in sides.values()):
        raise InputError("the problem is missing: with outputs given as arrays, pass the problem's x, B, C, dt, adt, "
                         "trap, angles, B_bias, C_bias")
    return _run_compare(sides, files, args, stem, notes, dump, binary)


compare_mamba3.__doc__ = (
    "Two Mamba-3 kernels' outputs on the same problem side by side (`ssmv compare`): typically the chunked "
    "prefill (kernel='mamba3_prefill') and the step kernel run token by token ('mamba3_step') on the same tokens, "
    "the two paths an engine moves a recompute between. Each is judged against the exact value under its own "
    "contract (Report.entries: a, then b), then per tensor the elements where they are identical, explained "
    "(|a - b| <= bound_a + bound_b, the angle state on the circle) or unexplained (Report.comparison). "
    "Report.ok: no VIOLATION/INVALID and every divergence explained.\n"
    "a, b: ssmv.Mamba3Outputs(y=..., final_angle_state=..., ..., kernel=..., contract=..., chunk_size=...), a dict "
    "of those fields, or the path of a dump (self-describing, with its problem when no problem tensors are given "
    "here). The problem tensors are check_mamba3()'s.\n" + _MAMBA3_DOC)


@_public
def compare(*, a, b, x=None, dt=None, A=None, B=None, C=None, z=None, D=None, dt_bias=None,
            initial_states=None, cu_seqlens=None, dt_softplus=False, dt_limit=None, round_dt_limit=False,
            input_format=None, state_format=None, output_format=None, name=None, dump=None,
            binary=None) -> Report:
    """Two kernels' outputs on the same problem side by side (`ssmv compare`): each against
    the exact value under its own contract (Report.entries: a, then b), then per tensor the
    elements where they are identical, explained (|a - b| <= bound_a + bound_b: both honest
    rounding paths) or unexplained (Report.comparison). Report.ok: no VIOLATION/INVALID and
    every divergence explained.

    a, b: ssmv.Outputs(y=..., final_states=..., kernel=..., contract=..., chunk_size=...), a
    dict of those fields, or the path of a dump (self-describing, with its problem when no
    problem tensors are given here). The problem tensors and options are check()'s; dump=True
    keeps the files (always kept when something fails) in cex_dir().
    """
    __tracebackhide__ = True
    notes = []
    round_dt_limit = _flag("round_dt_limit", round_dt_limit)
    formats = _formats(input_format, state_format, output_format)
    problem = dict(x=x, dt=dt, A=A, B=B, C=C, z=z, D=D, dt_bias=dt_bias, initial_states=initial_states,
                   cu_seqlens=cu_seqlens)
    have_problem = any(v is not None for v in problem.values())
    sides = {}
    for arg, side in (("a", a), ("b", b)):
        sides[arg] = _side(arg, side, formats, notes, round_dt_limit)
    files, args = {}, ["compare"]
    stem = _dump_stem(name)
    if have_problem:
        # The output tensors decide the output/state formats too: infer them over both sides.
        parr, pmeta = _problem_arrays(problem, formats, notes)
        _side_formats_into(sides, pmeta)
        pmeta["ssmv.dt_softplus"] = "true" if _flag("dt_softplus", dt_softplus) else "false"
        lim = _dt_limit("dt_limit", dt_limit, round_dt_limit, notes)
        if lim:
            pmeta["ssmv.dt_limit"] = lim
        pmeta["ssmv.source"] = f"ssmv Python package {__version__}"
        pname = f"{stem}-problem-{_digest(parr, pmeta)}.npz"
        files[pname] = (parr, pmeta)
        args += ["--problem", pname]
    elif any(s[0] is not None for s in sides.values()):
        raise InputError("the problem is missing: with outputs given as arrays, pass the problem's x, dt, A, B, C")
    elif dt_softplus or dt_limit is not None:
        raise InputError("dt_softplus / dt_limit: the dumps given as a and b carry their own options")
    return _run_compare(sides, files, args, stem, notes, dump, binary)
