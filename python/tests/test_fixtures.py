"""bf16 through the package: the committed dumps of mamba_ssm's Triton kernels
(verify/tests/triton_fixtures; bf16 arrays as int16 bit patterns) passed back as arrays,
with their options as keyword arguments, get the verdicts `ssmv check FILE` gives."""

import json
import subprocess

import numpy as np
import pytest

import ssmv
from conftest import FIXTURES

OPTION_KEYS = {"ssmv.kernel": "kernel", "ssmv.contract": "contract", "ssmv.decode_contract": "decode_contract",
               "ssmv.chunk_size": "chunk_size", "ssmv.chunk_layout": "chunk_layout",
               "ssmv.prefill_tokens": "prefill_tokens"}


def load(name):
    """The fixture's tensors and its metadata as check()'s keyword arguments."""
    with np.load(FIXTURES / name) as z:
        tensors = {k: z[k] for k in z.files if k != "__metadata__"}
        meta = json.loads(bytes(z["__metadata__"]))
    kw = {OPTION_KEYS[k]: v for k, v in meta.items() if k in OPTION_KEYS}
    if "chunk_size" in kw:
        kw["chunk_size"] = int(kw["chunk_size"])
    kw["dt_softplus"] = meta["ssmv.dt_softplus"] == "true"
    kw["dt_limit"] = tuple(float.fromhex(v) if v.startswith(("0x", "-0x")) else float(v)
                           for v in meta["ssmv.dt_limit"].split(","))
    # Only the state format is not in the dtypes when the state is bf16 (int16 patterns) or fp16.
    kw["state_format"] = meta["ssmv.state_format"]
    return tensors, kw, meta


def cli_report(ssmv_binary, tmp_path, name, *flags):
    out = tmp_path / "cli.json"
    subprocess.run([ssmv_binary, "check", str(FIXTURES / name), *flags, "--json", str(out)], capture_output=True)
    return json.loads(out.read_text())


def summary(entry_tensors):
    return [(t["name"], t["verdict"], t["counts"], t["max_bound_usage"], t["ulp"]) for t in entry_tensors]


@pytest.mark.parametrize("name", [
    "ssu_bf16in_fp32state_z_D_T4.npz",           # bf16 inputs and outputs, fp32 state
    "ssu_bf16in_bf16state_z_D_T4.npz",           # bf16 state too
    "chunk_scan_batched_L64_init_Dhp_z.npz",     # chunk_scan, chunk 64, initial states, D[H,P]
    "handoff_L64_K100_fp32state.npz",            # hand-off with prefill_tokens [S]
])
def test_bf16_fixture_arrays_get_the_cli_verdict(name, tmp_path, ssmv_binary):
    tensors, kw, meta = load(name)
    r = ssmv.check(**tensors, **kw)
    cli = cli_report(ssmv_binary, tmp_path, name)
    assert r.ok == cli["ok"] is True
    assert summary(r.json["entries"][0]["tensors"]) == summary(cli["entries"][0]["tensors"])
    assert r.entry.contract == cli["entries"][0]["contract"]
    # int16 arrays were read as bf16 bit patterns, and the report says so.
    assert f"input_format bf16: inferred from the dtype of x, dt, B, C{', z' if 'z' in tensors else ''} " \
           "(int16 (bf16 bit patterns))" in r.notes
    assert r["y"].format == "bf16" and r["y"].worst.computed.bits.startswith("0x")
    # The sharp verdict (docs/sharp-verdicts.md) ran on one kernel's dump and found nothing.
    if meta["ssmv.kernel"] != "handoff":
        assert all(t.sharp is not None and not t.suspicious for t in r.entry.tensors)
        assert all(t.sharp.ratio < 4 for t in r.entry.tensors)


def test_triton_decode_under_the_bundled_ssu_contract_fails_like_the_cli(tmp_path, ssmv_binary):
    """docs/real-kernels.md: a correct Triton decode judged by the bundled `ssu` preset is a
    VIOLATION in its states (Triton's softplus): the message names it and its bound's sources,
    and `ssmv check` on the kept dump says the same."""
    tensors, kw, _ = load("ssu_bf16in_fp32state_z_D_T4.npz")
    kw["contract"] = "ssu"
    with pytest.raises(AssertionError) as info:
        ssmv.assert_within_contract(**tensors, **kw)
    m = str(info.value)
    dump = m.split("(re-run: ssmv check ")[1].rstrip(")")
    out = tmp_path / "cli.json"
    assert subprocess.run([ssmv_binary, "check", dump, "--json", str(out)], capture_output=True).returncode == 1
    fs = next(t for t in json.loads(out.read_text())["entries"][0]["tensors"] if t["name"] == "final_state")
    assert fs["verdict"] == "VIOLATION"
    assert f"tensor 'final_state' (fp32, {fs['elements']} elements): VIOLATION" in m
    assert f"VIOLATION {fs['counts']['VIOLATION']}, INVALID 0" in m
    c = fs["worst"]["coords"]
    assert f"bound of worst final_state[{','.join(map(str, c))}]:" in m and "softplus" in m
