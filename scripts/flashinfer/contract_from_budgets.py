#!/usr/bin/env python3
"""The flashinfer.ssu contract as a JSON file (docs/contracts.md) from the budgets that
measure_budgets.py measured, for judging dumps on the device machine before the preset of
verify/contracts/flashinfer_presets.cpp carries the same figures.

Usage: contract_from_budgets.py TEMPLATE.json BUDGETS.json OUT.json [--stochastic]
TEMPLATE.json: `ssmv contract show triton.ssu` (every field present; the FlashInfer ones replace it).
"""
import json
import sys


def main():
    template, budgets, out = sys.argv[1:4]
    stochastic = "--stochastic" in sys.argv[4:]
    c = json.load(open(template))
    b = json.load(open(budgets))
    c["name"] = "flashinfer.ssu.sr" if stochastic else "flashinfer.ssu"
    c["kernel"] = "FlashInfer CUDA selective_state_update (single-token and MTP), -use_fast_math"
    state = {"point": "stored_state", "format": "state"}
    if stochastic:
        state["mode"] = "stochastic"
    c["roundings"] = [state, {"point": "output", "format": "output"}]
    c["transcendentals"] = b["transcendentals"]
    c["reductions"] = [{"sum": "y", "what": "y = Σ_n C·S + D·x", "order": "sequential_fma", "partials": 2,
                        "detail": "deepest variant: horizontal STP, 2 lanes per row, N/2 sequential FMAs each, "
                                  "one shuffle add, then D·x"}]
    c["flush_to_zero"] = True
    c["softplus_shortcut"] = True
    json.dump(c, open(out, "w"), indent=2)


if __name__ == "__main__":
    main()
