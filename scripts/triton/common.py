"""Shared helpers of the scripts in scripts/triton/ (imported by them, not run).

* load_mamba_triton(src): imports mamba_ssm's Triton modules from an exported copy of the
  mamba_ssm source (default .triton_src/, see README.md) without running the package
  __init__ files, which import CUDA extensions that are not built on the device machine.
* environment(): mamba_ssm commit, torch/triton versions, GPU name and the UTC date, for
  every output.
* np_array / save_fixture: the dump format of docs/tensor-files.md (bf16 as int16 bit
  patterns, a __metadata__ entry holding the UTF-8 bytes of a JSON object of strings).
* LaunchRecorder: the CompiledKernel (PTX, config) of a kernel launched by mamba_ssm's own
  wrapper; ptx_instructions / ptx_opcodes: a PTX text's instructions with their source lines.
* stub_if_missing: an import a kernel file makes but the path run never calls (einops).
"""

import datetime
import importlib
import json
import os
import re
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


def flushed_median_us(call, iterations, sleep_cycles=SLEEP_CYCLES):
    """Median µs of call() as bench/ssu/flushed_timer.h times ssmv's kernels: CUDA events around
    each call, the L2 flushed (a write of 4x its size) before each, 5 warm-ups first; plus a
    GPU-side sleep of sleep_cycles (SLEEP_CYCLES above by default; longer for a call of several
    launches), which keeps Python's launch overhead out of the timing."""
    import torch
    flush = torch.empty(4 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(5):
        call()
    times = []
    for i in range(iterations):
        flush.fill_(i & 0xFF)
        torch.cuda._sleep(sleep_cycles)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return 1e3 * times[len(times) // 2]


def stub_if_missing(module, names):
    """Make `import module` work where it is not installed: an empty module whose `names` raise
    when called. For imports a kernel file makes but never uses on the path run here (the Mamba-3
    kernel files import einops' rearrange and repeat and never call them)."""
    try:
        importlib.import_module(module)
        return False
    except ImportError:
        mod = types.ModuleType(module)

        def missing(name):
            def call(*_a, **_k):
                raise RuntimeError(f"{module}.{name} is a stub ({module} is not installed here)")
            return call

        for n in names:
            setattr(mod, n, missing(n))
        sys.modules[module] = mod
        return True


class LaunchRecorder:
    """Stands in for a module's (autotuned) Triton kernel object, so that the module's own
    wrapper launches it unchanged: `kernel[grid](...)` launches the original and keeps the
    CompiledKernel the launch returns (for an autotuned kernel: the best config's, which the
    autotuner launches last)."""

    def __init__(self, module, name):
        self.module, self.name = module, name
        self.kernel = getattr(module, name)
        self.handles = []
        setattr(module, name, self)

    def __getitem__(self, grid):
        launch = self.kernel[grid]

        def run(*args, **kwargs):
            h = launch(*args, **kwargs)
            self.handles.append(h)
            return h
        return run

    def best_config(self):
        """The autotuner's choice of the last launch as text ('' for a plain JIT function)."""
        c = getattr(self.kernel, "best_config", None)
        return "" if c is None else str(c)

    def last(self):
        """(PTX, facts) of the kernel the last launch ran: num_warps, num_stages, maxnreg,
        registers, spills, shared memory where Triton has them. (None, {}) if unavailable."""
        h = self.handles[-1] if self.handles else None
        if h is None or not hasattr(h, "asm"):  # a Triton whose launch returns nothing: match the config
            h = None
            cfg = getattr(self.kernel, "best_config", None)
            for k in reversed(compiled_kernels(self.kernel)):
                md = getattr(k, "metadata", None)
                if cfg is None or all(getattr(md, a, None) == getattr(cfg, a, None)
                                      for a in ("num_warps", "num_stages", "maxnreg")):
                    h = k
                    break
        if h is None:
            return None, {}
        facts = {}
        md = getattr(h, "metadata", None)
        for a in ("num_warps", "num_stages", "maxnreg", "shared", "num_ctas"):
            if getattr(md, a, None) is not None:
                facts[a] = getattr(md, a)
        for a in ("n_regs", "n_spills"):
            try:
                facts[a] = int(getattr(h, a))
            except Exception:  # noqa: BLE001  (lazily initialised in some versions)
                pass
        return ptx_of(h), facts


# A PTX instruction's opcode (after an optional predicate guard), and the debug-line directives.
_PTX_OPCODE = re.compile(r"^\s*(?:@!?%[a-z0-9_]+\s+)?([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)*)(?=[\s;])")
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(.*)$")
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,?\s*"([^"]*)")?')  # "path" or "dir" "name"


def ptx_instructions(text):
    """[(opcode, file, line, inlined_at)] of every instruction of a PTX text, each with the
    source place of the `.loc` before it (file: the basename of its `.file`; '' and 0 where
    none; inlined_at: (file, line) of the outermost call an inlined function's line stands in
    for, from the directive's `inlined_at` or LLVM's comment `file:line:col @[ file:line:col ]`,
    else None)."""
    files, out = {}, []
    where, inlined = ("", 0), None
    for line in text.splitlines():
        m = _PTX_FILE.match(line)
        if m:
            files[m.group(1)] = os.path.basename(m.group(3) or m.group(2))
            continue
        m = _PTX_LOC.match(line)
        if m:
            where, rest = (m.group(1), int(m.group(2))), m.group(3)
            at = re.findall(r"inlined_at\s+(\d+)\s+(\d+)", rest)
            named = re.findall(r"@\[\s*([^:\s\]]+):(\d+)", rest)
            inlined = ((at[-1][0], int(at[-1][1])) if at else
                       ("=" + os.path.basename(named[-1][0]), int(named[-1][1])) if named else None)
            continue
        m = _PTX_OPCODE.match(line)
        if m:
            out.append((m.group(1), where, inlined))

    def name(f):  # a file number (the .file directives may come after the code), or "=basename"
        return f[1:] if f.startswith("=") else files.get(f, f)
    return [(op, name(w[0]) if w[0] else "", w[1], None if inl is None else (name(inl[0]), inl[1]))
            for op, w, inl in out]


def ptx_opcodes(text, skip=()):
    """{opcode: count} of a PTX text, leaving out the opcodes that start with any of skip."""
    counts = {}
    for op, *_ in ptx_instructions(text):
        if not op.startswith(tuple(skip)):
            counts[op] = counts.get(op, 0) + 1
    return counts
