#!/usr/bin/env python3
"""What mamba_ssm's Mamba-3 prefill kernels compile to: PTX of angle_dt_fwd_kernel and
mamba3_siso_fwd_kernel as launched, and where each rounding instruction sits.

Runs mamba_ssm's own `mamba3_siso_combined` on cases of mamba3_prefill_dumps.py (default: its
production-shaped case, 1 x 2048 tokens, H 32, P 64, N 128, R 32, chunk 64, D and z), with the
two kernels' module objects replaced by common.LaunchRecorder: the wrapper launches them as
shipped (autotuned), and the recorder keeps the CompiledKernel of each launch — for an autotuned
kernel the best config's, which Triton's autotuner launches after benchmarking (where a Triton
returns no handle, the compiled kernel matching the autotuner's best_config is taken from the
JIT cache). For each case and kernel it saves the PTX (kernel.asm['ptx']) and summarises it,
attributing every instruction to its source line through the PTX's `.loc` directives (Triton
emits line info unless TRITON_DISABLE_LINE_INFO=1; an instruction of an inlined helper — utils.py's
cos_approx, Triton's sigmoid — is attributed to the helper's line and, where the PTX says so,
the kernel line it was inlined at):
  * each `tl.dot` statement of the kernel (found with Python's ast in the kernel's source): the
    mma / wgmma instructions at its lines with their operand types (bf16, f16, tf32), or an FMA
    loop (fma.rn.f32) — in particular `tl.dot(q_pre_block * k_pre_block, ones[HEADDIM_QK, 1])`,
    whose operands are fp32 (Triton's default input_precision for fp32 dots is tf32; an N = 1 dot
    may instead become an FMA loop);
  * the ex2 variants (ex2.approx.ftz.f32: tl.math.exp2; ex2.approx.f32: inside tl.sigmoid), the
    div / rcp variants (angle_dt's `/ TWO_PI`: div.full.f32, div.rn.f32 or div.approx?), the cvt
    variants (cvt.rn.bf16*.f32, cvt.rna.tf32.f32, cvt.rmi.f32.f32 of tl.floor), the count of
    fma.rn.f32 (also where LLVM contracted a·b ± c into one rounding), each with its lines;
  * a table of every floating-point instruction by source line, with the line's text.

Outputs (--out): <case>.<kernel>.ptx, inspect_mamba3_prefill.json, inspect_mamba3_prefill.txt.

Device run (mamba_ssm's source in .triton_src, see README.md), about 1-2 minutes for the default
case on a fresh machine (autotuning: 27 + 9 compilations), seconds after
mamba3_prefill_dumps.py --large in the same call (Triton's disk cache):
  run(command="python3 scripts/triton/inspect_mamba3_prefill.py --out $OUT/inspect", carry=[".triton_src"])
  --cases all: also every fixture case of mamba3_prefill_dumps.py (4 more autotune keys).
Offline, on PTX saved by this script or by mamba3_prefill_dumps.py --ptx (file names
<case>.<kernel>.ptx; the kernel's source from --mamba-src):
  python3 scripts/triton/inspect_mamba3_prefill.py --analyze DIR/*.ptx --out DIR2
"""

import ast
import json
import os
import re
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

KERNEL_SOURCE = {"mamba3_siso_fwd_kernel": "mamba3_siso_fwd.py", "angle_dt_fwd_kernel": "angle_dt.py"}
MAMBA3_DIR = os.path.join("mamba_ssm", "ops", "triton", "mamba3")
# Floating-point and conversion opcodes (the by-line table); integer and address work is left out.
FLOAT_OP = re.compile(r"^(?:(?:add|sub|mul|fma|div|rcp|sqrt|rsqrt|ex2|lg2|sin|cos|tanh|min|max|neg|abs)\."
                      r"(?:.*\.)?(?:f32|f16|bf16|f16x2|bf16x2|f64)$|cvt\.|mma\.|wgmma\.mma_async)")
TYPES = ("f64", "f32", "tf32", "bf16", "f16", "e4m3", "e5m2", "s8", "u8")


def dot_statements(path, fn_name):
    """[(first line, last line, text)] of the statements of fn_name that call tl.dot."""
    with open(path) as fh:
        text = fh.read()
    tree = ast.parse(text)
    fns = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == fn_name]
    out = []
    for fn in fns:
        for node in ast.walk(fn):
            if not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
                continue
            if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "dot"
                   and isinstance(c.func.value, ast.Name) and c.func.value.id == "tl" for c in ast.walk(node)):
                seg = " ".join(ast.get_source_segment(text, node).split())
                out.append((node.lineno, node.end_lineno, seg))
    return sorted(set(out))


def operand_type(op):
    """The A-operand type of an mma / wgmma opcode (its types read d, a, b[, c])."""
    types = [p for p in op.split(".") if p in TYPES]
    return types[1] if len(types) >= 2 else "?"


class Source:
    """Source lines by file basename: the kernel's folder and Triton's language folder."""

    def __init__(self, dirs):
        self.paths = {}
        for d in dirs:
            if d and os.path.isdir(d):
                for f in os.listdir(d):
                    if f.endswith(".py"):
                        self.paths.setdefault(f, os.path.join(d, f))
        self.cache = {}

    def line(self, base, n):
        if base not in self.cache:
            try:
                with open(self.paths[base]) as fh:
                    self.cache[base] = fh.read().splitlines()
            except (KeyError, OSError):
                self.cache[base] = []
        lines = self.cache[base]
        return lines[n - 1].strip() if 0 < n <= len(lines) else ""


def place(f, ln, inl):
    return f"{f}:{ln}" + (f" (inlined at {inl[0]}:{inl[1]})" if inl else "")


def analyze(ptx, kernel, source_path, source):
    """The summary of one kernel's PTX (see the module docstring)."""
    base = os.path.basename(source_path)
    ins = common.ptx_instructions(ptx)

    def kline(f, ln, inl):  # the kernel's own line of an instruction, or None
        if f == base:
            return ln
        return inl[1] if inl and inl[0] == base else None

    def tally(pred):  # {op: {"count", "places"}} of the instructions whose opcode satisfies pred
        out = {}
        for op, f, ln, inl in ins:
            if pred(op):
                e = out.setdefault(op, {"count": 0, "places": {}})
                e["count"] += 1
                p = place(f, ln, inl)
                e["places"][p] = e["places"].get(p, 0) + 1
        return out

    dots = []
    for lo, hi, text in dot_statements(source_path, kernel):
        ops = {}
        for op, f, ln, inl in ins:
            k = kline(f, ln, inl)
            if k is not None and lo <= k <= hi and FLOAT_OP.match(op):
                ops[op] = ops.get(op, 0) + 1
        mma = {op: n for op, n in ops.items() if op.startswith(("mma.", "wgmma.mma_async"))}
        fp32_operands = "q_pre_block * k_pre_block" in text
        muls = sum(n for op, n in ops.items() if op.startswith("mul.") and op.endswith(".f32"))
        cvt_tf32 = sum(n for op, n in ops.items() if op.startswith("cvt.rna.tf32"))
        if mma:
            types = sorted({operand_type(op) for op in mma})
            verdict = "tensor cores, operands " + "/".join(types)
            if "tf32" in types:
                verdict += (f"; cvt.rna.tf32.f32 x{cvt_tf32} at these lines" +
                            (" (none: the fp32 bit patterns go to the tf32 mma unconverted)" if not cvt_tf32 else ""))
        elif ops.get("fma.rn.f32"):
            verdict = (f"FMA loop: fma.rn.f32 x{ops['fma.rn.f32']}, no mma/wgmma at these lines; mul.f32 x{muls} "
                       "at these lines (0: each product went unrounded into an fma)")
        else:
            verdict = "no mma/wgmma or fma.rn.f32 attributed to these lines (line info missing?)"
        dots.append({"lines": [lo, hi], "source": text, "fp32_operands": fp32_operands, "instructions": ops,
                     "verdict": verdict})
    all_mma = {op for op, *_ in ins if op.startswith(("mma.", "wgmma.mma_async"))}
    by_line = {}
    for op, f, ln, inl in ins:
        if FLOAT_OP.match(op):
            key = place(f, ln, inl)
            e = by_line.setdefault(key, {"source": source.line(f, ln), "ops": {}})
            e["ops"][op] = e["ops"].get(op, 0) + 1
    opcodes = common.ptx_opcodes(ptx)
    fma = tally(lambda op: op == "fma.rn.f32").get("fma.rn.f32", {"count": 0, "places": {}})
    cvt = tally(lambda op: op.startswith("cvt.") and ("bf16" in op or "tf32" in op or ".rmi." in op))
    return {
        "line_info": any(ln for _op, _f, ln, _i in ins),
        "dots": dots,
        "mma_opcodes": sorted(all_mma),
        "tf32_mma_present": any(operand_type(op) == "tf32" for op in all_mma),
        "ex2": tally(lambda op: op.startswith("ex2.")),
        "div_rcp": tally(lambda op: op.startswith(("div.", "rcp."))),
        "cvt": cvt,
        "cvt_rn_bf16_present": any(op.startswith("cvt.rn.bf16") for op in cvt),
        "cvt_rna_tf32_present": any(op.startswith("cvt.rna.tf32") for op in cvt),
        "fma_rn_f32": {"total": fma["count"], "places": fma["places"]},
        "by_line": by_line,
        "opcodes": opcodes,
    }


def text_summary(doc):
    """The plain-text form of the JSON summary."""
    L = [f"# mamba_ssm Mamba-3 prefill kernels: PTX summary", f"{doc.get('environment_line', '')}", ""]
    for case, c in doc["cases"].items():
        for kernel, k in c["kernels"].items():
            a = k["analysis"]
            L.append(f"== {case}: {kernel}")
            L.append(f"config: {k.get('config') or '?'}; compiled: {json.dumps(k.get('compiled', {}))}; "
                     f"PTX {k.get('ptx_file', '')}; line info: {'yes' if a['line_info'] else 'NO'}")
            for d in a["dots"]:
                fp32 = " (fp32 operands)" if d["fp32_operands"] else ""
                L.append(f"  dot, lines {d['lines'][0]}-{d['lines'][1]}{fp32}: {d['verdict']}")
                L.append(f"      `{d['source'][:150]}`")
                L.append("      " + ", ".join(f"{op} x{n}" for op, n in sorted(d["instructions"].items())))
            if a["mma_opcodes"]:
                L.append("  mma/wgmma opcodes in the kernel: " + ", ".join(a["mma_opcodes"]))
            L.append(f"  tf32 mma anywhere: {'yes' if a['tf32_mma_present'] else 'no'}; cvt.rn.bf16*: "
                     f"{'yes' if a['cvt_rn_bf16_present'] else 'no'}; cvt.rna.tf32: "
                     f"{'yes' if a['cvt_rna_tf32_present'] else 'no'}; fma.rn.f32 total: {a['fma_rn_f32']['total']}")
            for title, key in (("ex2", "ex2"), ("div/rcp", "div_rcp"), ("cvt", "cvt")):
                for op, e in sorted(a[key].items()):
                    L.append(f"  {title}: {op} x{e['count']} at " +
                             "; ".join(f"{p} x{n}" for p, n in sorted(e["places"].items())))
            L.append("  floating-point instructions by source line:")
            for p, e in sorted(a["by_line"].items(), key=lambda kv: place_key(kv[0])):
                L.append(f"    {p:<40} {', '.join(f'{op} x{n}' for op, n in sorted(e['ops'].items()))}")
                if e["source"]:
                    L.append(f"    {'':<40} `{e['source'][:110]}`")
            L.append("")
    return L


def place_key(p):
    m = re.match(r"([^:]*):(\d+)", p)
    return (m.group(1), int(m.group(2)), p) if m else (p, 0, p)


def source_dirs(src):
    dirs = [os.path.join(os.path.abspath(src), MAMBA3_DIR)]
    try:
        import triton.language as tl
        dirs.append(os.path.dirname(tl.__file__))
    except ImportError:
        pass
    return dirs


def run_cases(args, doc):
    """The cases run on the GPU; their PTX saved and summarised into doc. Returns the failed."""
    import mamba3_prefill_dumps as dumps
    combined, _step, recorders = dumps.kernels(False, args.mamba_src)
    everything = {**dumps.CASES, **dumps.LARGE}
    names = list(dumps.LARGE) if not args.cases else list(everything) if args.cases == "all" else args.cases.split(",")
    source = Source(source_dirs(args.mamba_src))
    failed = []
    for name in names:
        try:
            inspect_case(name, everything[name], dumps, combined, recorders, source, args, doc)
        except Exception:  # noqa: BLE001  (the other cases still run; a CUDA fault may end them too)
            traceback.print_exc()
            print(f"{name}: FAILED", flush=True)
            failed.append(name)
    return failed


def inspect_case(name, case, dumps, combined, recorders, source, args, doc):
    import torch
    t0 = time.time()
    tok, par, init = dumps.draw(case)
    pre = dumps.tokens(tok, 0, sum(case["lengths"]))
    dumps.prefill_call(combined, pre, par, init, case, "cuda")
    torch.cuda.synchronize()
    entry = doc["cases"].setdefault(name, {"shape": {k: v for k, v in case.items() if k != "seed"},
                                           "seconds": round(time.time() - t0, 1), "kernels": {}})
    for r in recorders:
        ptx, facts = r.last()
        if ptx is None:
            print(f"{name}: no PTX for {r.name}", flush=True)
            continue
        fname = f"{name}.{r.name}.ptx"
        with open(os.path.join(args.out, fname), "w") as fh:
            fh.write(ptx)
        path = os.path.join(args.mamba_src, MAMBA3_DIR, KERNEL_SOURCE[r.name])
        entry["kernels"][r.name] = {"config": r.best_config(), "compiled": facts, "ptx_file": fname,
                                    "analysis": analyze(ptx, r.name, path, source)}
    print(f"{name}: {entry['seconds']} s", flush=True)


def analyze_files(args, doc):
    source = Source(source_dirs(args.mamba_src))
    for f in args.analyze:
        base = os.path.basename(f)
        kernel = next((k for k in KERNEL_SOURCE if base.endswith(f".{k}.ptx")), None)
        if kernel is None:
            raise SystemExit(f"{f}: expected a name <case>.<kernel>.ptx with kernel one of {sorted(KERNEL_SOURCE)}")
        case = base[:-len(f".{kernel}.ptx")]
        with open(f) as fh:
            ptx = fh.read()
        path = os.path.join(args.mamba_src, MAMBA3_DIR, KERNEL_SOURCE[kernel])
        doc["cases"].setdefault(case, {"kernels": {}})["kernels"][kernel] = {
            "ptx_file": f, "analysis": analyze(ptx, kernel, path, source)}


def main():
    ap = common.base_parser(__doc__)  # --out, --mamba-src
    ap.add_argument("--cases", default="", help="mamba3_prefill_dumps.py case names, comma-separated, or 'all' "
                    "(default: its production-shaped case)")
    ap.add_argument("--analyze", nargs="+", default=[], help="summarise saved PTX files instead (no GPU)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    doc, failed = {"cases": {}}, []
    if args.analyze:
        doc["environment_line"] = f"offline analysis of {len(args.analyze)} saved PTX files"
        analyze_files(args, doc)
    else:
        env = common.environment(args.mamba_src)
        doc["environment"], doc["environment_line"] = env, common.env_line(env)
        print("environment:", doc["environment_line"], flush=True)
        failed = run_cases(args, doc)
    with open(os.path.join(args.out, "inspect_mamba3_prefill.json"), "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")
    lines = text_summary(doc)
    common.write_lines(os.path.join(args.out, "inspect_mamba3_prefill.txt"), lines)
    print("\n".join(lines))
    if failed:
        raise SystemExit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
