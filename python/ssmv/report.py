"""The report `ssmv check --json` / `ssmv compare --json` writes (docs/report-schema.md), as
Python objects, and the failure message of `assert_within_contract`.

The failure message says the same facts in the same order as the C++ GoogleTest assertion
EXPECT_WITHIN_CONTRACT (verify/reports/report_text.cpp, check_failure_message), with the numbers
printed the same way; both end by pointing to docs/report-schema.md.
"""

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

DOCS_PAGE = "docs/report-schema.md"
VERDICTS = ("EXACT", "WITHIN_CONTRACT", "VIOLATION", "INVALID")


def _ratio(v):
    return math.inf if v == "inf" else float(v)


@dataclass(frozen=True)
class Real:
    """A double, exactly: `value`, and the `decimal` (%.17g) and `hex` (%a) texts."""
    decimal: str
    hex: str

    @property
    def value(self) -> float:
        return float(self.decimal)

    def __float__(self):
        return self.value

    def text(self) -> str:
        """'0.5 (0x1p-1)', or 'nan' / 'inf' (C++ exact_text)."""
        if self.decimal in ("nan", "inf", "-inf"):
            return self.decimal
        return f"{self.decimal} ({self.hex})"

    @staticmethod
    def of(j):
        return None if j is None else Real(j["decimal"], j["hex"])


@dataclass(frozen=True)
class FormatValue(Real):
    """A value of fp32/bf16/fp16: its bit pattern `bits` ('0x3f80') and the value."""
    bits: str = ""

    def text(self) -> str:
        """'0x3f80 = 1 (0x1p+0)' (C++ value_text)."""
        return f"{self.bits} = {Real.text(self)}"

    @staticmethod
    def of(j):
        return None if j is None else FormatValue(j["decimal"], j["hex"], j["bits"])


@dataclass(frozen=True)
class Difference:
    """The element where a statistic is largest: flat `index`, `coords`, `value`."""
    index: int
    coords: Tuple[int, ...]
    value: Real

    @staticmethod
    def of(j):
        return None if j is None else Difference(j["index"], tuple(j["coords"]), Real.of(j["value"]))


@dataclass(frozen=True)
class BoundSource:
    """One source of the worst element's bound (docs/bounds.md §5): e.g. source 'decayed_CB',
    label 'decayed_CB (bf16)', share 0.62."""
    source: str
    label: str
    share: float


@dataclass(frozen=True)
class Input:
    """An input the worst element depends on directly: tensor `name`, `index`, `format`, values."""
    name: str
    index: Tuple[int, ...]
    format: str
    values: Tuple[FormatValue, ...]


@dataclass(frozen=True)
class Exact:
    """The certified exact value: 40 significant digits, its nearest double, and its correctly
    rounded value in the tensor's format."""
    decimal40: str
    nearest_double: Real
    rounded: FormatValue


@dataclass(frozen=True)
class WorstElement:
    index: int
    coords: Tuple[int, ...]
    verdict: str
    bound_usage: float
    unwritten: bool
    ulps: Optional[int]
    computed: FormatValue
    exact: Exact
    error: Real
    bound: Real
    inputs: Tuple[Input, ...]

    @staticmethod
    def of(j):
        if j is None:
            return None
        e = j["exact"]
        return WorstElement(
            j["index"], tuple(j["coords"]), j["verdict"], _ratio(j["bound_usage"]), j["unwritten"], j["ulps"],
            FormatValue.of(j["computed"]),
            Exact(e["decimal40"], Real.of(e["nearest_double"]), FormatValue.of(e["rounded"])),
            Real.of(j["error"]), Real.of(j["bound"]),
            tuple(Input(i["name"], tuple(i["index"]), i["format"], tuple(FormatValue.of(v) for v in i["values"]))
                  for i in j.get("inputs", [])))


@dataclass(frozen=True)
class SharpVerdict:
    """The sharp verdict of one tensor (docs/sharp-verdicts.md): SUSPICIOUS when its error is
    larger than the contract's own rounding model gives; `explanations` the candidate defects,
    best first, as (name, share of the unexplained error energy explained, consistent)."""
    suspicious: bool
    ratio: float                 # error energy / the model's, whole tensor
    worst_head: Optional[int]
    worst_ratio: float
    p_value_bound: float
    allowed_configuration: str
    explanations: Tuple[Tuple[str, float, bool], ...]

    @staticmethod
    def of(j):
        if not j or not j.get("evaluated"):
            return None
        return SharpVerdict(j["verdict"] == "SUSPICIOUS", _ratio(j["whole"]["ratio"]), j["worst_slice"]["head"],
                            _ratio(j["worst_slice"]["ratio"]), _ratio(j["p_value_bound"]), j["allowed_configuration"],
                            tuple((a["name"], _ratio(a["explained"]), a["consistent"]) for a in j["attribution"]))


@dataclass(frozen=True)
class TensorResult:
    """One judged tensor (y, final_state, ...) of one kernel check."""
    name: str
    format: str
    coord_names: Tuple[str, ...]
    elements: int
    verdict: str
    counts: Dict[str, int]
    exact_share: float
    ulp: Dict[str, int]                      # p50, p99, max
    max_bound_usage: float                   # error / bound; inf when INVALID
    max_abs_difference: Optional[Difference]
    max_rel_difference: Optional[Difference]
    max_err_over_scale: Optional[Difference]
    max_ulps_at_scale: Optional[Difference]
    worst: Optional[WorstElement]
    worst_bound_sources: Tuple[BoundSource, ...]
    sharp: Optional[SharpVerdict] = None     # None: not run or not applicable

    @property
    def suspicious(self) -> bool:
        return self.sharp is not None and self.sharp.suspicious

    @property
    def ok(self) -> bool:
        return self.verdict in ("EXACT", "WITHIN_CONTRACT")

    @property
    def mismatched(self) -> int:
        """VIOLATION + INVALID elements: what assert_close would call mismatched."""
        return self.counts["VIOLATION"] + self.counts["INVALID"]

    @staticmethod
    def of(j):
        return TensorResult(
            j["name"], j["format"], tuple(j["coord_names"]), j["elements"], j["verdict"], dict(j["counts"]),
            _ratio(j["exact_share"]), dict(j["ulp"]), _ratio(j["max_bound_usage"]),
            Difference.of(j["max_abs_difference"]), Difference.of(j["max_rel_difference"]),
            Difference.of(j["max_err_over_scale"]), Difference.of(j["max_ulps_at_scale"]),
            WorstElement.of(j["worst"]),
            tuple(BoundSource(b["source"], b["label"], float(b["share"])) for b in j["worst_bound_sources"]),
            SharpVerdict.of(j.get("sharp")))

    # --- text, as verify/reports/report_text.cpp prints it --------------------------------------

    def coords_text(self, coords) -> str:
        """'sequence 0, token 12, head 1, dim 0' (C++ coords_text)."""
        names = self.coord_names
        return ", ".join(f"{names[i] if i < len(names) else f'axis {i}'} {c}" for i, c in enumerate(coords))

    def bound_sources_text(self) -> str:
        """'bound of worst y[0,3,1,7]: 62% decayed_CB (bf16), 21% output (bf16), ...' (C++
        bound_sources_text); '' when not attributed."""
        if not self.worst_bound_sources or self.worst is None:
            return ""

        def pct(share):
            v = 100.0 * share
            return ("%.0f%%" if v >= 9.5 else "%.2g%%") % v

        t = f"bound of worst {self.name}[{','.join(map(str, self.worst.coords))}]:"
        rest, shown, more = 0.0, 0, 0
        for b in self.worst_bound_sources:
            if shown < 6 and b.share >= 1e-4:
                t += (", " if shown else " ") + pct(b.share) + " " + b.label
                shown += 1
            else:
                rest += b.share
                more += 1
        if more:
            t += f", {more} more " + ("< 0.01%" if rest < 1e-4 else pct(rest))
        return t

    def worst_element_lines(self) -> List[str]:
        """The worst element, one fact per line (C++ worst_element_lines)."""
        w = self.worst
        if w is None:
            return ["no elements"]
        ulps = "n/a (NaN)" if w.ulps is None else str(w.ulps)
        return [
            f"worst element: ({self.coords_text(w.coords)}) [flat index {w.index}]: {w.verdict}, "
            f"{usage_text(w.bound_usage)} x bound" + (", never written (poison pattern)" if w.unwritten else ""),
            f"  computed: {w.computed.text()}",
            f"  exact:    {w.exact.decimal40} (nearest double {w.exact.nearest_double.hex}); correctly rounded "
            f"{w.exact.rounded.text()}",
            f"  error:    {w.error.text()} (upper bound of |computed - exact|); bound {w.bound.text()}; "
            f"ULP distance {ulps}",
        ]

    def failure_lines(self) -> List[str]:
        """This tensor's part of the failure message (C++ check_failure_message)."""
        head = f"tensor '{self.name}' ({self.format}, {self.elements} elements): {self.verdict}"
        if self.ok:
            return [f"{head}, max bound usage {usage_text(self.max_bound_usage)}, ULP max {self.ulp['max']}"]
        bad = self.mismatched
        lines = [head, f"  Mismatched elements (VIOLATION + INVALID): {bad} / {self.elements} "
                       f"({percent(bad, self.elements)})"]
        for label, d in (("absolute", self.max_abs_difference), ("relative", self.max_rel_difference)):
            if d is None:
                lines.append(f"  Greatest {label} difference: none (no finite computed value)")
            else:
                lines.append(f"  Greatest {label} difference: {d.value.text()} at index "
                             f"({self.coords_text(d.coords)}) [flat {d.index}]")
        c = self.counts
        lines.append(f"  Verdicts: EXACT {c['EXACT']}, WITHIN_CONTRACT {c['WITHIN_CONTRACT']}, "
                     f"VIOLATION {c['VIOLATION']}, INVALID {c['INVALID']}")
        lines.append(f"  ULP distance p50 / p99 / max (valid elements): {self.ulp['p50']} / {self.ulp['p99']} / "
                     f"{self.ulp['max']}")
        lines.append(f"  Max bound usage (error / bound): {usage_text(self.max_bound_usage)}")
        lines += ["  " + line for line in self.worst_element_lines()]
        sources = self.bound_sources_text()
        if sources:
            lines.append("  " + sources)
        return lines


def usage_text(u) -> str:
    """Bound usage with 4 significant digits, 'inf' for INVALID (C++ usage_text)."""
    return "inf" if math.isinf(u) else "%.4g" % u


def percent(part, whole) -> str:
    return "%.3g%%" % (100.0 * part / whole if whole > 0 else 0.0)


@dataclass(frozen=True)
class Entry:
    """One kernel check: a kernel's outputs judged under its contract."""
    name: str
    problem: str
    kernel: str
    contract: str
    device: str
    verdict: str
    ok: bool
    tensors: Tuple[TensorResult, ...]

    @staticmethod
    def of(j):
        return Entry(j["name"], j["problem"], j["kernel"], j["contract"], j["device"], j["verdict"], j["ok"],
                     tuple(TensorResult.of(t) for t in j["tensors"]))

    def __getitem__(self, name) -> TensorResult:
        """entry['y'], entry['final_state'] (or 'final_states')."""
        for t in self.tensors:
            if t.name == name or t.name + "s" == name:
                return t
        raise KeyError(f"no tensor {name!r} in this check (it has {', '.join(t.name for t in self.tensors)})")

    def failure_message(self) -> str:
        """What EXPECT_WITHIN_CONTRACT prints for this check (C++ check_failure_message)."""
        lines = [f"kernel {self.kernel} (contract {self.contract}, device {self.device}): {self.verdict}"
                 + ("" if self.ok else ", not within its contract")]
        for t in self.tensors:
            lines += t.failure_lines()
        lines.append(f"How to read this: {DOCS_PAGE}")
        return "\n".join(lines)


@dataclass(frozen=True)
class TensorComparison:
    """One tensor of two kernels side by side: `identical`, `explained` (|a - b| within
    bound_a + bound_b) and `unexplained` elements; `worst` is the raw JSON object."""
    name: str
    format: str
    coord_names: Tuple[str, ...]
    elements: int
    identical: int
    explained: int
    unexplained: int
    ulp_max: int
    max_divergence_over_scale: float
    max_usage: float
    verdict_a: str
    verdict_b: str
    bound_usage_a: float
    bound_usage_b: float
    worst: Optional[dict]

    @staticmethod
    def of(j):
        return TensorComparison(
            j["name"], j["format"], tuple(j["coord_names"]), j["elements"], j["identical"], j["explained"],
            j["unexplained"], j["ulp_max"], _ratio(j["max_divergence_over_scale"]), _ratio(j["max_usage"]),
            j["verdict_a"], j["verdict_b"], _ratio(j["bound_usage_a"]), _ratio(j["bound_usage_b"]), j["worst"])


@dataclass(frozen=True)
class Comparison:
    name: str
    a: Dict[str, str]
    b: Dict[str, str]
    explained_all: bool
    tensors: Tuple[TensorComparison, ...]

    @staticmethod
    def of(j):
        return Comparison(j["name"], dict(j["a"]), dict(j["b"]), j["explained_all"],
                          tuple(TensorComparison.of(t) for t in j["tensors"]))

    def __getitem__(self, name) -> TensorComparison:
        for t in self.tensors:
            if t.name == name or t.name + "s" == name:
                return t
        raise KeyError(f"no tensor {name!r} in this comparison")


@dataclass
class Report:
    """What `ssmv check` / `ssmv compare` found (docs/report-schema.md).

    `ok`: no VIOLATION or INVALID (and, for a comparison, every divergence explained).
    `entries`: one per kernel check (a comparison has two: a, then b); `report['y']` is
    the first entry's tensor. `notes`: what the package inferred or did (formats from
    dtypes, copies from a GPU). `dump`: the dump that `ssmv check DUMP` re-runs, when kept.
    `text`: ssmv's table, as the command prints it. `json`: the raw report.
    """
    ok: bool
    command: str
    entries: List[Entry]
    comparisons: List[Comparison]
    notes: List[str] = field(default_factory=list)
    dump: Optional[str] = None
    text: str = ""
    json: dict = field(default_factory=dict, repr=False)

    @staticmethod
    def of(j, notes=(), dump=None, text=""):
        return Report(j["ok"], j["command"], [Entry.of(e) for e in j["entries"]],
                      [Comparison.of(c) for c in j.get("comparisons", [])], list(notes), dump, text, j)

    @property
    def verdict(self) -> str:
        """The worst verdict of any entry."""
        return max((e.verdict for e in self.entries), key=VERDICTS.index, default="EXACT")

    @property
    def entry(self) -> Entry:
        return self.entries[0]

    @property
    def comparison(self) -> Comparison:
        return self.comparisons[0]

    def __getitem__(self, name) -> TensorResult:
        return self.entries[0][name]

    def failure_message(self) -> str:
        """The assertion's message: per entry the same lines as the C++ assertion, then what
        only the Python side has: its notes (formats inferred, copies) and the kept dump."""
        parts = [e.failure_message() for e in self.entries]
        extra = [f"Note: {n}" for n in self.notes]
        if self.dump:
            extra.append(f"Dump kept at {self.dump} (re-run: ssmv check {self.dump})")
        return "\n".join(parts + extra)

    def __str__(self):
        return self.text or self.failure_message()
