#!/usr/bin/env python3
"""One hand-off dump (kernel mamba3_handoff) from a Mamba-3 prefill dump and the step dump that
continued from the state the prefill returned (mamba3_prefill_dumps.py's hand-off pair).

ssmv judges the two halves one by one (kernels mamba3_prefill and mamba3_step, the second from its
given initial state); this dump lets it judge them together against the exact recurrence over all
tokens, the decode's bounds carrying the prefill's errors (verify/family/mamba3/handoff.h). The
tokens of each sequence are the prefill's then the step's, packed by sequence; y likewise; the final
state is the step dump's; the prefill's initial state (if any) is the hand-off's. Metadata:
ssmv.kernel mamba3_handoff, ssmv.prefill_tokens (the prefill's tokens per sequence, which must be
equal), ssmv.chunk_size, the formats, and ssmv.source naming both files.

  /usr/bin/python3 scripts/triton/mamba3_handoff_dump.py PREFILL.npz STEP.npz OUT.npz
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PER_TOKEN = ("x", "B", "C", "dt", "adt", "trap", "angles", "z", "y")  # [T, ...], packed by sequence
PER_HEAD = ("B_bias", "C_bias", "D")
INITIAL = ("initial_angle_state", "initial_states", "initial_B_prev", "initial_x_prev")
FINAL = ("final_angle_state", "final_states", "final_B_prev", "final_x_prev")


def cu_seqlens(t, tokens):
    return t["cu_seqlens"].astype(np.int64) if "cu_seqlens" in t else np.array([0, tokens], dtype=np.int64)


def combine(prefill_path, step_path):
    pre, pre_meta = common.load_fixture(prefill_path)
    step, step_meta = common.load_fixture(step_path)
    if pre_meta.get("ssmv.kernel") != "mamba3_prefill" or step_meta.get("ssmv.kernel") != "mamba3_step":
        raise SystemExit("expected a mamba3_prefill dump and a mamba3_step dump, in that order")
    cu_p, cu_s = cu_seqlens(pre, pre["x"].shape[0]), cu_seqlens(step, step["x"].shape[0])
    if len(cu_p) != len(cu_s):
        raise SystemExit(f"the dumps hold {len(cu_p) - 1} and {len(cu_s) - 1} sequences")
    lengths = np.diff(cu_p)
    if not np.all(lengths == lengths[0]):
        raise SystemExit(f"the prefill's sequences differ in length ({lengths.tolist()}): prefill_tokens is one number")
    for name in PER_HEAD:
        if (name in pre) != (name in step) or (name in pre and not np.array_equal(pre[name], step[name])):
            raise SystemExit(f"tensor {name} differs between the dumps")
    for a, b in zip(FINAL, INITIAL):
        if a in pre and b in step and not np.array_equal(pre[a].view(np.uint8), step[b].view(np.uint8)):
            raise SystemExit(f"the step dump's {b} is not the prefill dump's {a}: not a hand-off")
    out = {name: pre[name] for name in PER_HEAD if name in pre}
    out.update({name: pre[name] for name in INITIAL if name in pre})
    out.update({name: step[name] for name in FINAL if name in step})
    for name in PER_TOKEN:
        if (name in pre) != (name in step):
            raise SystemExit(f"tensor {name} is in one dump only")
        if name in pre:
            parts = []
            for s in range(len(cu_p) - 1):
                parts += [pre[name][cu_p[s]:cu_p[s + 1]], step[name][cu_s[s]:cu_s[s + 1]]]
            out[name] = np.concatenate(parts)
    out["cu_seqlens"] = (cu_p + cu_s).astype(np.int64)
    meta = {k: v for k, v in pre_meta.items() if k.startswith("ssmv.") and k not in ("ssmv.kernel", "ssmv.source")}
    meta.update({"ssmv.kernel": "mamba3_handoff", "ssmv.prefill_tokens": str(int(lengths[0])),
                 "ssmv.source": f"{os.path.basename(prefill_path)} then {os.path.basename(step_path)} "
                                f"(scripts/triton/mamba3_handoff_dump.py)"})
    return out, meta


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("prefill")
    ap.add_argument("step")
    ap.add_argument("out")
    a = ap.parse_args()
    tensors, meta = combine(a.prefill, a.step)
    common.save_fixture(a.out, tensors, meta)
    print(f"{a.out}: {len(tensors)} tensors, prefill_tokens {meta['ssmv.prefill_tokens']}")


if __name__ == "__main__":
    main()
