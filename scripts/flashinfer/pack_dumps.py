#!/usr/bin/env python3
"""Packs the folders ssu_driver writes (one .npy per tensor + meta.json) into self-describing
.npz dumps (docs/tensor-files.md: tensors + __metadata__, a uint8 array of the UTF-8 bytes of a
JSON object of strings), one per folder, named after it.

Usage: pack_dumps.py RAW_DIR OUT_DIR --source TEXT [--without-contract]
An int16 state (the driver's STATE int16) is declared int16_scaled, its codes in initial_states /
final_states and its decode scales in initial_states_scale / final_states_scale [batch, H, P].
ssmv.contract: flashinfer.ssu.sr for a stochastically rounded state, flashinfer.ssu otherwise
(--without-contract: none, for dumps judged under several contracts with ssmv check --contract).
"""
import argparse
import json
import os

import numpy as np


def sr_text(m):
    if not m["stochastic_rounding"]:
        return "off"
    seeds = "one Philox seed for every launch" if m["stochastic_rounding"] == 1 else "a new Philox seed per launch"
    return f"on (philox_rounds {m['philox_rounds']}, {seeds})"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("raw")
    ap.add_argument("out")
    ap.add_argument("--source", required=True, help="FlashInfer commit, nvcc, GPU, date")
    ap.add_argument("--without-contract", action="store_true", help="store no ssmv.contract")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in sorted(os.listdir(args.raw)):
        d = os.path.join(args.raw, name)
        if not os.path.isfile(os.path.join(d, "meta.json")):
            continue
        m = json.load(open(os.path.join(d, "meta.json")))
        arrays = {f[:-4]: np.load(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".npy")}
        meta = {
            "ssmv.kernel": "ssu",
            "ssmv.input_format": m["input_format"],
            # the driver's int16 state is FlashInfer's scaled one: codes + a decode scale per row
            "ssmv.state_format": "int16_scaled" if m["state_format"] == "int16" else m["state_format"],
            "ssmv.output_format": m["input_format"],  # FlashInfer writes y in the input dtype
            "ssmv.dt_softplus": "true",
            "ssmv.dt_limit": "-inf,inf",  # the decode kernel has no dt_limit
            "ssmv.tokens_per_launch": str(m["tokens_per_launch"]),
            "ssmv.source": (f"FlashInfer selective_state_update, algorithm {m['algorithm']}, "
                            f"{'MTP ntokens_mtp=' + str(m['tokens_per_launch']) if m['tokens_per_launch'] > 1 else 'single-token'}"
                            f", stochastic rounding {sr_text(m)}, pool of {m['pool_slots']} slots, seed {m['seed']}, "
                            f"dt = {m.get('dt_mean', -4)} + {m.get('dt_std', 3)}*N(0,1); {args.source}"),
        }
        if not args.without_contract:
            meta["ssmv.contract"] = "flashinfer.ssu.sr" if m["stochastic_rounding"] else "flashinfer.ssu"
        arrays["__metadata__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        np.savez(os.path.join(args.out, name + ".npz"), **arrays)
        print(f"{name}.npz: {', '.join(f'{k}{list(v.shape)}' for k, v in arrays.items() if k != '__metadata__')}")


if __name__ == "__main__":
    main()
