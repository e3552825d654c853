"""Shared helpers of the scripts in scripts/triton/ (imported by them, not run).

* load_mamba_triton(src): imports mamba_ssm's Triton modules from an exported copy of the
  mamba_ssm source (default .triton_src/, see README.md) without running the package
  __init__ files, which import CUDA extensions that are not built on the device machine.
* environment(): mamba_ssm commit, torch/triton versions, GPU name and the UTC date, for
  every output.
* np_array / save_fixture: the dump format of docs/tensor-files.md (bf16 as int16 bit
  patterns, a __metadata__ entry holding the UTF-8 bytes of a JSON object of strings).
"""

import datetime
import importlib
import json
import os
import sys
import types

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_MAMBA_SRC = os.path.join(REPO, ".triton_src")


def mamba_commit(src=DEFAULT_MAMBA_SRC):
    """The commit recorded next to the exported source (.triton_src/MAMBA_COMMIT)."""
    path = os.path.join(src, "MAMBA_COMMIT")
    if os.path.exists(path):
        with open(path) as f:
            return f.read().strip()
    return "unknown"


def load_mamba_triton(src=DEFAULT_MAMBA_SRC, modules=("softplus",)):
    """Import mamba_ssm.ops.triton.<m> for each m in modules, skipping the __init__ files.

    The packages mamba_ssm, mamba_ssm.ops, mamba_ssm.ops.triton and mamba_ssm.utils are
    created as empty module objects whose __path__ points into src, so that their
    submodules import normally and nothing else of mamba_ssm runs."""
    root = os.path.join(os.path.abspath(src), "mamba_ssm")
    if not os.path.isdir(root):
        raise SystemExit(f"mamba_ssm source not found at {root} (see scripts/triton/README.md)")
    for name, sub in (("mamba_ssm", ""), ("mamba_ssm.ops", "ops"),
                      ("mamba_ssm.ops.triton", os.path.join("ops", "triton")),
                      ("mamba_ssm.utils", "utils")):
        if name not in sys.modules:
            mod = types.ModuleType(name)
            mod.__path__ = [os.path.join(root, sub)]
            sys.modules[name] = mod
    return {m: importlib.import_module("mamba_ssm.ops.triton." + m) for m in modules}


def environment(src=DEFAULT_MAMBA_SRC):
    """What every output records: versions, GPU and date."""
    env = {"mamba_ssm_commit": mamba_commit(src),
           "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    try:
        import torch
        env["torch"] = torch.__version__
        env["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none (CPU)"
        env["cuda"] = str(torch.version.cuda)
    except ImportError:
        env["torch"] = "none"
        env["gpu"] = "none"
    try:
        import triton
        env["triton"] = triton.__version__
    except ImportError:
        env["triton"] = "none"
    return env


def env_line(env):
    return (f"{env['gpu']}, {env['date_utc']}, torch {env['torch']}, triton {env['triton']}, "
            f"mamba_ssm {env['mamba_ssm_commit']}")


def np_array(t):
    """A CPU NumPy array of a torch tensor; bf16 as int16 bit patterns (NumPy has no bf16)."""
    import torch
    t = t.detach().contiguous().cpu()
    return t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()


def save_fixture(path, tensors, metadata):
    """np.savez (stored entries, fixed timestamps) of the tensors plus __metadata__.

    tensors: name -> numpy array (already converted by np_array). metadata: str -> str."""
    for k, v in metadata.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"metadata {k!r}: keys and values must be strings")
    meta = np.frombuffer(json.dumps(metadata, sort_keys=True).encode("utf-8"), dtype=np.uint8)
    arrays = dict(tensors)
    arrays["__metadata__"] = meta.copy()
    np.savez(path, **arrays)


def load_fixture(path):
    """(tensors, metadata) of a file written by save_fixture."""
    with np.load(path) as z:
        tensors = {k: z[k] for k in z.files if k != "__metadata__"}
        metadata = json.loads(bytes(z["__metadata__"]).decode("utf-8"))
    return tensors, metadata


def hex_limit(v):
    """A dt_limit part as ssmv reads it: the fp32 value as a C99 hex float, or +-inf."""
    v = float(np.float32(v))
    if v == float("inf"):
        return "inf"
    if v == float("-inf"):
        return "-inf"
    return v.hex()


def compiled_kernels(fn):
    """The CompiledKernel objects of a (possibly autotuned / heuristics-wrapped) Triton
    JIT function, in compilation order (best effort: [] when Triton's internals differ)."""
    while hasattr(fn, "fn") and not hasattr(fn, "device_caches"):
        fn = fn.fn
    out = []
    try:
        for cache in fn.device_caches.values():
            out.extend(cache[0].values())
    except Exception:  # noqa: BLE001
        return []
    return out


def ptx_of(handle, fn=None, index=None):
    """The PTX of a launch's returned kernel handle, else of the index-th compiled kernel of fn."""
    for h in ([handle] if handle is not None else []) + (
            [compiled_kernels(fn)[index]] if fn is not None and index is not None and
            index < len(compiled_kernels(fn)) else []):
        try:
            return h.asm["ptx"]
        except Exception:  # noqa: BLE001
            continue
    return None


def base_parser(doc, mamba_src=True):
    """The options every script takes: --out (and --mamba-src)."""
    import argparse
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--out", required=True)
    if mamba_src:
        ap.add_argument("--mamba-src", default=DEFAULT_MAMBA_SRC)
    return ap


def write_lines(path, lines):
    """A text file of the lines, each ended by a newline."""
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


# torch.cuda._sleep cycles before each timed call: about 100 µs at the H200's 1.98 GHz, longer
# than a Python kernel launch takes, so the launch is queued before the GPU reaches the start event.
SLEEP_CYCLES = 200_000


def flushed_median_us(call, iterations):
    """Median µs of call() as bench/ssu/flushed_timer.h times ssmv's kernels: CUDA events around
    each call, the L2 flushed (a write of 4x its size) before each, 5 warm-ups first; plus the
    GPU-side sleep above, which keeps Python's launch overhead out of the timing."""
    import torch
    flush = torch.empty(4 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(5):
        call()
    times = []
    for i in range(iterations):
        flush.fill_(i & 0xFF)
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return 1e3 * times[len(times) // 2]
