#!/usr/bin/env python3
"""Merges the per-shard property results (SSMV_PROP_RESULTS=<folder>, one JSON file per
property and shard, written by properties/harness/property.cpp) into one table per property.

Checks that every property's shards belong to one campaign (same root seed, multiplier and
shard count), that no shard is counted twice and none is missing, and that their seeds are
distinct (disjoint case streams). Prints a Markdown table; exits 1 if a property failed or a
shard is missing.

Usage: python3 properties/merge_results.py RESULTS_DIR [RESULTS_DIR ...]
"""
import json
import pathlib
import sys


def main(dirs):
    runs = {}
    for d in dirs:
        for path in sorted(pathlib.Path(d).glob("*.json")):
            r = json.loads(path.read_text())
            runs.setdefault(r["property"], []).append(r)
    if not runs:
        print("no results found in", ", ".join(dirs))
        return 1
    status = 0
    print("| property | shards | cases | failed shards | CPU seconds | cases/s |")
    print("|---|---|---|---|---|---|")
    for prop, rs in sorted(runs.items()):
        keys = {(r["root_seed"], r["multiplier"], r["shards"]) for r in rs}
        shards = sorted(r["shard"] for r in rs)
        problems = []
        if len(keys) != 1:
            problems.append("results from different campaigns (root seed, multiplier or shard count differ)")
        n = rs[0]["shards"]
        if len(set(shards)) != len(shards):
            problems.append("a shard counted twice")
        missing = sorted(set(range(n)) - set(shards))
        if missing:
            problems.append("missing shards %s" % missing)
        if len({r["seed"] for r in rs}) != len(rs):
            problems.append("two shards share a seed")
        cases = sum(r["cases"] for r in rs)
        seconds = sum(r["seconds"] for r in rs)
        failed = [r["shard"] for r in rs if not r["passed"]]
        print("| %s | %d/%d | %d | %s | %.1f | %.2f |" % (
            prop, len(set(shards)), n, cases, failed or "none", seconds, cases / seconds if seconds else 0))
        for p in problems:
            print("  %s: %s" % (prop, p), file=sys.stderr)
        if problems or failed:
            status = 1
    return status


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
