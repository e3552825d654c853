#!/usr/bin/env python3
"""The planted-bug catalogue's summary: reads the per-bug results that `ssmv-planted-<name>
catalogue` writes ($SSMV_PLANTED_RESULTS/<name>.json) and

* checks the catalogue's promise: every semantic and precision bug caught (a VIOLATION,
  shrunk, replayed — the per-bug test asserts those), every rounding-path change passed,
  a result for every bug, and the shrunk counterexamples small: the median of tokens and
  of each dimension (H, P, N) over the caught bugs at most 4;
* prints the per-class counts; with --side-by-side DIR (the files of
  scripts/planted_side_by_side.sh) also what `allclose` against an fp32 reference caught on
  the same problems, with mamba_ssm's tolerances and with the tightest tolerance that never
  fails the bundled twins; --markdown FILE writes docs/planted-bugs.md's tables.

Exit status 0 when the promise holds, 1 otherwise (each broken promise is printed).
Standard library only (Debian's /usr/bin/python3).
"""
import argparse
import json
import os
import statistics
import sys

MAX_MEDIAN = 4  # tokens and per dimension, over the caught bugs' counterexamples


def load_results(catalogue, results_dir):
    results, missing = {}, []
    for bug in catalogue["bugs"]:
        path = os.path.join(results_dir, bug["name"] + ".json")
        if not os.path.exists(path):
            missing.append(bug["name"])
            continue
        with open(path) as f:
            results[bug["name"]] = json.load(f)
    return results, missing


def check(catalogue, results, missing):
    problems = [f"no result for {name} (its test did not run or did not finish)" for name in missing]
    for bug in catalogue["bugs"]:
        r = results.get(bug["name"])
        if r is None:
            continue
        want = "passed" if bug["class"] == "rounding_path" else "caught"
        if r["outcome"] != want:
            problems.append(f"{bug['name']} ({bug['class']}): {r['outcome']}, expected {want}")
    caught = [r for r in results.values() if r["outcome"] == "caught" and "counterexample" in r]
    medians = {}
    for dim in ("tokens", "H", "P", "N"):
        values = [r["counterexample"][dim] for r in caught]
        if values:
            medians[dim] = statistics.median(values)
            if medians[dim] > MAX_MEDIAN:
                problems.append(f"median counterexample {dim} = {medians[dim]} > {MAX_MEDIAN}")
    return problems, medians


def counts_by_class(catalogue, results):
    rows = {}
    for bug in catalogue["bugs"]:
        key = (bug["kernel"], bug["class"])
        row = rows.setdefault(key, {"bugs": 0, "caught": 0})
        row["bugs"] += 1
        if results.get(bug["name"], {}).get("outcome") == "caught":
            row["caught"] += 1
    return rows


# mamba_ssm's test tolerances (rtol, atol) by output format (verify/allclose/allclose.h).
MAMBA = {"fp32": (3e-4, 1e-3), "bf16": (1e-2, 5e-2), "fp16": (5e-3, 1e-2)}
SETS = ("property_mix", "production")


def excess_at(tensor, rtols, rtol):
    v = tensor["excess"][rtols.index(rtol)]
    return float("inf") if v == "inf" else v


def flagged(problem, rtols, tol_of):
    """Whether allclose fails y or the state of `problem`; tol_of(tensor name, format) gives (rtol, atol)."""
    for name in ("y", "state"):
        t = problem[name]
        rtol, atol = tol_of(name, t["format"])
        if not excess_at(t, rtols, rtol) <= atol:
            return True
    return False


def tightest(control, rtols):
    """Per (set, tensor, format): the least atol at mamba_ssm's rtol that never fails the control."""
    out = {}
    for p in control["problems"]:
        for name in ("y", "state"):
            t = p[name]
            key = (p["set"], name, t["format"])
            out[key] = max(out.get(key, 0.0), excess_at(t, rtols, MAMBA[t["format"]][0]))
    return out


def side_by_side_row(bug_file, control):
    """Per set: problems, caught by ssmv, by allclose (mamba_ssm's tolerances; a problem the
    control also fails is a false alarm, not a catch), by allclose at the tightest tolerance."""
    rtols = control["rtols"]
    tight = tightest(control, rtols)
    row = {}
    for name in SETS:
        probs = [(b, c) for b, c in zip(bug_file["problems"], control["problems"]) if b["set"] == name]
        mamba = lambda tensor, fmt: MAMBA[fmt]
        row[name] = {
            "problems": len(probs),
            "ssmv": sum(b["ssmv_violation"] for b, _ in probs),
            "allclose": sum(flagged(b, rtols, mamba) and not flagged(c, rtols, mamba) for b, c in probs),
            "allclose_tight": sum(
                flagged(b, rtols, lambda tensor, fmt, s=b["set"]: (MAMBA[fmt][0], tight[(s, tensor, fmt)]))
                for b, _ in probs),
        }
    return row


def control_false_alarms(control):
    rtols = control["rtols"]
    out = {}
    for name in SETS:
        probs = [p for p in control["problems"] if p["set"] == name]
        out[name] = {"problems": len(probs), "ssmv": sum(p["ssmv_violation"] for p in probs),
                     "allclose": sum(flagged(p, rtols, lambda t, f: MAMBA[f]) for p in probs)}
    return out


def load_side_by_side(catalogue, folder):
    control = {}
    for kernel in ("ssu", "chunk_scan"):
        with open(os.path.join(folder, f"none.{kernel}.json")) as f:
            control[kernel] = json.load(f)
    rows = {}
    for bug in catalogue["bugs"]:
        path = os.path.join(folder, f"{bug['name']}.{bug['kernel']}.json")
        if os.path.exists(path):
            with open(path) as f:
                rows[bug["name"]] = side_by_side_row(json.load(f), control[bug["kernel"]])
    return control, rows


def markdown(catalogue, results, medians, side_by_side):
    out = ["| bug | kernel | class | ssmv | property | cases | shrunk to (seq, tokens, H, G, P, N) | worst element |"
           + (" allclose vs fp32 ref |" if side_by_side else ""),
           "|---|---|---|---|---|---|---|---|" + ("---|" if side_by_side else "")]
    for bug in catalogue["bugs"]:
        r = results.get(bug["name"], {})
        cex = r.get("counterexample")
        size = (f"{cex['sequences']}, {cex['tokens']}, {cex['H']}, {cex['G']}, {cex['P']}, {cex['N']}" if cex else "–")
        worst = cex["worst"].replace("|", "\\|") if cex else "–"
        row = (f"| `{bug['name']}` | {bug['kernel']} | {bug['class']} | {r.get('outcome', 'not run')} | "
               f"{r.get('property', '–')} | {r.get('cases', '–')} | {size} | {worst} |")
        if side_by_side:
            s = side_by_side.get(bug["name"])
            row += (" " + "; ".join(f"{k}: ssmv {v['ssmv']}, allclose {v['allclose']}, tight {v['allclose_tight']} of {v['problems']}"
                                    for k, v in s.items()) + " |") if s else " – |"
        out.append(row)
    return "\n".join(out)


def class_table(catalogue, results, sbs, control):
    """Per kernel and class: bugs caught by the CI properties, and on the side-by-side sets
    (any problem of the set) by ssmv, allclose with mamba_ssm's tolerances, allclose at the
    tightest tolerance; then the bundled twins' false alarms."""
    lines = ["| kernel | class | bugs | CI properties | " + " | ".join(
        f"{s}: ssmv | {s}: allclose (mamba_ssm tol.) | {s}: allclose (tightest tol.)" for s in SETS) + " |",
             "|---|---|---|---|" + "---|---|---|" * len(SETS)]
    groups = {}
    for bug in catalogue["bugs"]:
        groups.setdefault((bug["kernel"], bug["class"]), []).append(bug["name"])
    for (kernel, cls), names in sorted(groups.items()):
        ci = sum(results.get(n, {}).get("outcome") == "caught" for n in names)
        cells = []
        for s in SETS:
            for key in ("ssmv", "allclose", "allclose_tight"):
                cells.append(str(sum(sbs.get(n, {}).get(s, {}).get(key, 0) > 0 for n in names)))
        lines.append(f"| {kernel} | {cls} | {len(names)} | {ci} | " + " | ".join(cells) + " |")
    for kernel in ("ssu", "chunk_scan"):
        fa = control_false_alarms(control[kernel])
        cells = []
        for s in SETS:
            cells += [f"{fa[s]['ssmv']} of {fa[s]['problems']}", f"{fa[s]['allclose']} of {fa[s]['problems']}", "0 (by construction)"]
        lines.append(f"| {kernel} | bundled twin (false alarms) | – | 0 | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--catalogue", required=True)
    ap.add_argument("--results", required=True, help="the folder of <name>.json results")
    ap.add_argument("--side-by-side", help="the folder of the side-by-side files (scripts/planted_side_by_side.sh)")
    ap.add_argument("--markdown", help="write the tables here")
    args = ap.parse_args()
    with open(args.catalogue) as f:
        catalogue = json.load(f)
    results, missing = load_results(catalogue, args.results)
    problems, medians = check(catalogue, results, missing)

    for (kernel, cls), row in sorted(counts_by_class(catalogue, results).items()):
        print(f"{kernel:10s} {cls:13s} {row['bugs']:3d} bugs, {row['caught']:3d} caught")
    print("median counterexample size over the caught bugs: "
          + ", ".join(f"{k} {v:g}" for k, v in medians.items()))
    sbs = None
    if args.side_by_side:
        control, sbs = load_side_by_side(catalogue, args.side_by_side)
        print(class_table(catalogue, results, sbs, control))
    if args.markdown:
        text = markdown(catalogue, results, medians, sbs)
        if sbs is not None:
            text = class_table(catalogue, results, sbs, control) + "\n\n" + text
        text = ("<!-- Generated by scripts/planted_side_by_side.sh (properties/planted/summary.py): do not edit;"
                " the page that explains it is docs/planted-bugs.md. -->\n\n" + text)
        tmp = args.markdown + ".tmp"
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, args.markdown)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
