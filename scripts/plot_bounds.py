#!/usr/bin/python3
"""Plots of `ssmv bounds --out-json` (schema ssmv.bounds/1): the growth of the p99 relative
bound (bound / scale) and of the bundled twins' measured p99 error / scale with the sequence
length T and with the state dim N, for y and the final state. Writes bounds-vs-T.svg and
bounds-vs-N.svg into OUT_DIR (docs/error-bounds.md links them).

usage: /usr/bin/python3 scripts/plot_bounds.py BOUNDS.json OUT_DIR

Needs Debian's python3-matplotlib (scripts/install-deps.sh). The SVGs are reproducible:
fixed hash salt, no date in the metadata.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

matplotlib.rcParams["svg.hashsalt"] = "ssmv-bounds"
TENSORS = ("y", "final_state")


def series(report, axis):
    """{(contract, formats): {tensor: [(x, p99 bound/scale, p99 measured error/scale or None)]}}
    along one sweep: T at (N0, L0) or N at (T0, L0); sequential rows have no L."""
    grid = report["grid"]
    out = {}
    for row in report["rows"]:
        if row["family"] == "chunked" and row["chunk_size"] != grid["base_chunk_size"]:
            continue
        if axis == "T" and row["N"] != grid["base_state_dim"]:
            continue
        if axis == "N" and row["T"] != grid["base_length"]:
            continue
        f = row["formats"]
        key = (row["contract"], "%s/%s/%s" % (f["input"], f["state"], f["output"]))
        for t in row["tensors"]:
            measured = t["measured"]["error_over_scale"]["p99"] if t["measured"] else None
            out.setdefault(key, {}).setdefault(t["name"], []).append(
                (row[axis], t["bound_over_scale"]["p99"], measured))
    return out


def plot(report, axis, path):
    data = series(report, axis)
    fig, axes = plt.subplots(1, len(TENSORS), figsize=(13, 5.2), sharex=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, tensor in zip(axes, TENSORS):
        for i, (key, tensors) in enumerate(sorted(data.items())):
            points = sorted(p for p in tensors.get(tensor, []) if p[1] is not None)
            if not points:
                continue
            color = colors[i % len(colors)]
            xs = [p[0] for p in points]
            ax.plot(xs, [p[1] for p in points], "-o", color=color, markersize=3,
                    label="%s %s: bound" % key)
            measured = [(p[0], p[2]) for p in points if p[2] is not None and p[2] > 0]
            if measured:
                ax.plot([m[0] for m in measured], [m[1] for m in measured], "--x", color=color,
                        markersize=4, label="%s %s: twin" % key)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(axis)
        ax.set_title("%s: p99 of bound / scale (solid), twin error / scale (dashed)" % tensor, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7, frameon=False)
    grid = report["grid"]
    fixed = ("N = %d" % grid["base_state_dim"]) if axis == "T" else ("T = %d" % grid["base_length"])
    fig.suptitle("ssmv bounds: growth with %s (%s, L = %d, H = %d, P = %d)"
                 % (axis, fixed, grid["base_chunk_size"], grid["heads"], grid["head_dim"]), fontsize=10)
    fig.tight_layout(rect=(0, 0.22, 1, 0.96))
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        report = json.load(f)
    if report.get("schema") != "ssmv.bounds/1":
        sys.stderr.write("plot_bounds: %s: schema %r, expected 'ssmv.bounds/1'\n" % (argv[1], report.get("schema")))
        return 2
    os.makedirs(argv[2], exist_ok=True)
    for axis in ("T", "N"):
        plot(report, axis, os.path.join(argv[2], "bounds-vs-%s.svg" % axis))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
