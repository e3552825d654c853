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

try:
    import matplotlib
except ImportError:
    sys.stderr.write("plot_bounds: python3-matplotlib is not installed (scripts/install-deps.sh)\n")
    sys.exit(77)  # CTest's skip code (verify/cli/CMakeLists.txt ssmv_bounds_plot)

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

matplotlib.rcParams["svg.hashsalt"] = "ssmv-bounds"


def series(report, axis):
    """{(tensor, formats): {contract: [(x, p99 bound/scale, p99 measured error/scale or None)]}}
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
        formats = "%s/%s/%s" % (f["input"], f["state"], f["output"])
        for t in row["tensors"]:
            measured = t["measured"]["error_over_scale"]["p99"] if t["measured"] else None
            out.setdefault((t["name"], formats), {}).setdefault(row["contract"], []).append(
                (row[axis], t["bound_over_scale"]["p99"], measured))
    return out


def panels(data):
    """y for every formats, then the final state once per input/state formats (it does not
    depend on the output format)."""
    keys = [k for k in data if k[0] == "y"]
    seen = set()
    for name, formats in data:
        if name == "final_state" and formats.rsplit("/", 1)[0] not in seen:
            seen.add(formats.rsplit("/", 1)[0])
            keys.append((name, formats))
    return keys


def plot(report, axis, path):
    data = series(report, axis)
    keys = panels(data)
    contracts = report["grid"]["contracts"]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = plt.subplots(1, len(keys), figsize=(5.2 * len(keys), 5), sharex=True, squeeze=False)
    for ax, key in zip(axes[0], keys):
        for contract, points in sorted(data[key].items(), key=lambda kv: contracts.index(kv[0])
                                       if kv[0] in contracts else len(contracts)):
            points = sorted(p for p in points if p[1] is not None)
            color = colors[(contracts.index(contract) if contract in contracts else 0) % len(colors)]
            ax.plot([p[0] for p in points], [p[1] for p in points], "-o", color=color, markersize=3,
                    label="%s: bound" % contract)
            measured = [(p[0], p[2]) for p in points if p[2] is not None and p[2] > 0]
            if measured:
                ax.plot([m[0] for m in measured], [m[1] for m in measured], "--x", color=color,
                        markersize=4, label="%s: twin" % contract)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(axis)
        ax.set_title("%s, %s (in/state/out)" % key, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    labels = {}
    for ax in axes[0]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            labels.setdefault(l, h)
    fig.legend(list(labels.values()), list(labels.keys()), loc="lower center", ncol=4, fontsize=8, frameon=False)
    grid = report["grid"]
    fixed = ("N = %d" % grid["base_state_dim"]) if axis == "T" else ("T = %d" % grid["base_length"])
    fig.suptitle("ssmv bounds: p99 of bound / scale (solid) and of the twins' error / scale (dashed) against %s "
                 "(%s, L = %d, H = %d, P = %d)" % (axis, fixed, grid["base_chunk_size"], grid["heads"],
                                                   grid["head_dim"]), fontsize=10)
    fig.tight_layout(rect=(0, 0.14, 1, 0.95))
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
