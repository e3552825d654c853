#!/usr/bin/env python3
"""The sharp verdict's proof on the planted-bug catalogue: reads the files that
`ssmv-planted-<name> sharp KERNEL FILE` writes (scripts/planted_sharp.sh) and

* checks the promise of docs/sharp-verdicts.md: every semantic and precision bug is caught on
  some production-like problem of its kernel by a VIOLATION or a SUSPICIOUS tensor; no
  rounding-path change and no control (ssmv-planted-none) has either on any problem. A bug
  whose outputs equal the control's on every problem (same outputs_hash) is not exercised by
  these problems (a pad slot, a boundary state: what an external dump does not hold); it is
  listed as such, and counted neither way;
* with --markdown FILE writes the table: per bug, the rigorous verdict, the sharp verdict with
  its best explanation, and allclose against the fp32 reference at mamba_ssm's tolerances.

Exit status 0 when the promise holds, 1 otherwise (each broken promise is printed).
Standard library only (Debian's /usr/bin/python3).
"""
import argparse
import json
import os
import sys


def load(folder, name, kernel):
    path = os.path.join(folder, f"{name}.{kernel}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def ratio_text(r):
    if isinstance(r, str):
        return r
    return f"{r:.0f}" if r >= 100 else f"{r:.2f}"


def summarize(doc):
    """(rigorous: VIOLATION/INVALID anywhere, sharp: SUSPICIOUS anywhere, allclose: any failure,
    the cells' texts)."""
    rigorous = sharp = allclose = False
    r_cells, s_cells, a_cells = [], [], []
    for case in doc["cases"]:
        for t in case["tensors"]:
            bad = t["violations"] + t["invalid"]
            rigorous |= bad > 0
            sharp |= t["suspicious"]
            allclose |= t["allclose_failed"] > 0
            where = f"{case['contract']} {t['name']}"
            if bad:
                r_cells.append(f"{where}: {bad} bad, usage {ratio_text(t['max_bound_usage'])}")
            if t["suspicious"]:
                best = t["attribution"][0] if t["attribution"] else None
                why = f", best: {best['name']} ({100 * best['explained']:.1f}%)" if best else ""
                s_cells.append(f"{where}: {ratio_text(t['ratio'])}× (head {t['worst_head']} "
                               f"{ratio_text(t['worst_ratio'])}×){why}")
            if t["allclose_failed"]:
                a_cells.append(f"{where}: {t['allclose_failed']}")
    return rigorous, sharp, allclose, r_cells, s_cells, a_cells


def max_ratio(doc):
    best = 0.0
    for case in doc["cases"]:
        for t in case["tensors"]:
            r = t["worst_ratio"]
            if not isinstance(r, str):
                best = max(best, r)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--catalogue", required=True)
    ap.add_argument("--sharp", required=True, help="the folder of the sharp files")
    ap.add_argument("--markdown", help="write the table here")
    args = ap.parse_args()
    with open(args.catalogue) as f:
        catalogue = json.load(f)
    problems, rows = [], []
    control_hashes = {}
    for kernel in ("ssu", "chunk_scan"):
        doc = load(args.sharp, "none", kernel)
        if doc is None:
            problems.append(f"no control file none.{kernel}.json")
            continue
        control_hashes[kernel] = [c["outputs_hash"] for c in doc["cases"]]
        rig, sh, ac, rc, sc, acells = summarize(doc)
        if rig or sh:
            problems.append(f"control ({kernel}): rigorous {rig}, sharp {sh} (must pass both)")
        rows.append((f"bundled twin ({kernel})", kernel, "control", rig, sh, ac, rc, sc, acells,
                     max_ratio(doc)))
    for bug in catalogue["bugs"]:
        kernel = bug["name"].split(".")[0]
        doc = load(args.sharp, bug["name"], kernel)
        if doc is None:
            problems.append(f"no sharp file for {bug['name']}")
            continue
        rig, sh, ac, rc, sc, acells = summarize(doc)
        if [c["outputs_hash"] for c in doc["cases"]] == control_hashes.get(kernel):
            rows.append((f"`{bug['name']}`", kernel, bug["class"] + " (not exercised: outputs equal the twin's)",
                         rig, sh, ac, rc, sc, acells, max_ratio(doc)))
            continue
        if bug["class"] == "rounding_path" and (rig or sh):
            problems.append(f"{bug['name']} (rounding_path): rigorous {rig}, sharp {sh} (must pass both)")
        if bug["class"] != "rounding_path" and not (rig or sh):
            problems.append(f"{bug['name']} ({bug['class']}): neither VIOLATION nor SUSPICIOUS")
        rows.append((f"`{bug['name']}`", kernel, bug["class"], rig, sh, ac, rc, sc, acells, max_ratio(doc)))
    for p in problems:
        print("PROMISE BROKEN:", p)
    caught = lambda r: r[3] or r[4]
    for cls in ("semantic", "precision", "rounding_path"):
        sel = [r for r in rows if r[2] == cls]
        skipped = sum(1 for r in rows if r[2].startswith(cls + " (not exercised"))
        if skipped:
            print(f"{cls}: {skipped} not exercised by these problems")
        print(f"{cls}: {len(sel)} bugs, rigorous {sum(r[3] for r in sel)}, sharp {sum(r[4] for r in sel)}, "
              f"either {sum(caught(r) for r in sel)}, allclose {sum(r[5] for r in sel)}")
    if args.markdown:
        lines = ["<!-- Generated by scripts/planted_sharp.sh (properties/planted/sharp_summary.py): do not edit; "
                 "the page that explains it is docs/sharp-verdicts.md. -->", "",
                 "| bug | class | rigorous (VIOLATION/INVALID) | sharp (SUSPICIOUS) | allclose, mamba_ssm tol. "
                 "(failing elements) | largest ratio of a not-flagged slice |",
                 "|---|---|---|---|---|---|"]
        for r in rows:
            name, kernel, cls, rig, sh, ac, rc, sc, acells, mr = r
            lines.append(f"| {name} | {cls} | {'; '.join(rc) if rig else 'pass'} | "
                         f"{'; '.join(sc) if sh else 'pass'} | {'; '.join(acells) if ac else 'pass'} | "
                         f"{'' if sh else ratio_text(mr)} |")
        tmp = args.markdown + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, args.markdown)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
