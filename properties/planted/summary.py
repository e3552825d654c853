#!/usr/bin/env python3
"""The planted-bug catalogue's summary: reads the per-bug results that `ssmv-planted-<name>
catalogue` writes ($SSMV_PLANTED_RESULTS/<name>.json) and

* checks the catalogue's promise: every semantic and precision bug caught (a VIOLATION,
  shrunk, replayed — the per-bug test asserts those), every rounding-path change passed,
  a result for every bug, and the shrunk counterexamples small: the median of tokens and
  of each dimension (H, P, N) over the caught bugs at most 4;
* prints the per-class counts and the table of docs/planted-bugs.md (--markdown FILE
  writes it, with the side-by-side columns when --side-by-side DIR holds their results).

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
            row += f" {s['summary'] if s else '–'} |"
        out.append(row)
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--catalogue", required=True)
    ap.add_argument("--results", required=True, help="the folder of <name>.json results")
    ap.add_argument("--markdown", help="write the per-bug table here")
    args = ap.parse_args()
    with open(args.catalogue) as f:
        catalogue = json.load(f)
    results, missing = load_results(catalogue, args.results)
    problems, medians = check(catalogue, results, missing)

    for (kernel, cls), row in sorted(counts_by_class(catalogue, results).items()):
        print(f"{kernel:10s} {cls:13s} {row['bugs']:3d} bugs, {row['caught']:3d} caught")
    print("median counterexample size over the caught bugs: "
          + ", ".join(f"{k} {v:g}" for k, v in medians.items()))
    if args.markdown:
        text = markdown(catalogue, results, medians, None)
        tmp = args.markdown + ".tmp"
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, args.markdown)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
