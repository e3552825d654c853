"""Installing: `pip install ./python` offline into a plain venv (no system site packages, so no
NumPy; build isolation on, so nothing but the package's own backend), where a check runs on
torch-free, NumPy-free tensors; ssmv found on PATH after `cmake --install`, without SSMV_BINARY;
and the error that names every place tried when ssmv is nowhere."""

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ssmv
from conftest import REPO
from recurrence import honest_case
from test_fixtures import cli_report, load, summary

PACKAGE = Path(__file__).resolve().parent.parent
OFFLINE = dict(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_FIND_LINKS="")


def _copy_of_the_package(tmp_path):
    source = tmp_path / "src"  # a copy: pip must not leave anything in the tree
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"))
    return source


def _venv(tmp_path):
    if importlib.util.find_spec("venv") is None or importlib.util.find_spec("ensurepip") is None:
        pytest.fail("the venv module with ensurepip is missing (Debian: python3-venv; scripts/install-deps.sh)")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    return venv / "bin" / "python"


# Run in the venv: the fixture's tensors as nested lists (bf16 through ssmv.bf16, exact), fp32
# buffers (array.array viewed with its shape) and integer lists; NumPy must be absent.
CHECK_WITHOUT_NUMPY = r"""
import array, importlib, importlib.util, json, sys
import ssmv
assert importlib.util.find_spec("numpy") is None, "NumPy is importable in the plain venv"
spec = json.load(open(sys.argv[1]))

def nest(flat, shape):
    if not shape:
        return flat[0]
    n = len(flat) // shape[0] if shape[0] else 0
    return [nest(flat[i * n:(i + 1) * n], shape[1:]) for i in range(shape[0])]

tensors = {}
for name, t in spec["tensors"].items():
    if t["kind"] == "bf16":
        tensors[name] = ssmv.bf16(nest(t["values"], t["shape"]))
    elif t["kind"] == "fp32":
        tensors[name] = memoryview(array.array("f", t["values"])).cast("B").cast("f", t["shape"])
    else:
        tensors[name] = nest([int(v) for v in t["values"]], t["shape"])
r = ssmv.check(**tensors, **spec["options"])
print(json.dumps({"ok": r.ok, "tensors": r.json["entries"][0]["tensors"], "notes": r.notes,
                  "file": ssmv.__file__, "repository": importlib.import_module("ssmv._source").REPOSITORY}))
"""


def _spec(tensors, kw):
    out = {}
    for name, a in tensors.items():
        if a.dtype == np.int16 and name not in ("cu_seqlens", "prefill_tokens"):
            values = (a.astype(np.uint16).astype(np.uint32) << 16).view(np.float32)  # the bf16 values, exactly
            out[name] = dict(kind="bf16", shape=list(a.shape), values=values.reshape(-1).tolist())
        elif a.dtype == np.float32:
            out[name] = dict(kind="fp32", shape=list(a.shape), values=a.reshape(-1).tolist())
        else:
            out[name] = dict(kind="int", shape=list(a.shape), values=a.reshape(-1).tolist())
    return {"tensors": out, "options": kw}


def test_pip_install_into_a_plain_venv_offline_then_check_without_numpy(tmp_path, ssmv_binary):
    python = _venv(tmp_path)
    source = _copy_of_the_package(tmp_path)
    env = dict(os.environ, **OFFLINE)
    before = sorted(source.rglob("*"))
    # Build isolation on (pip's default): the backend needs nothing that an index would provide.
    build = subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(source)], capture_output=True,
                           text=True, env=dict(env, PYTHONDONTWRITEBYTECODE="1"), cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    assert sorted(source.rglob("*")) == before  # nothing written into the tree (no build/, no egg-info)
    name = "ssu_bf16in_fp32state_z_D_T4.npz"
    tensors, kw, _ = load(name)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(_spec(tensors, kw)))
    script = tmp_path / "check.py"
    script.write_text(CHECK_WITHOUT_NUMPY)
    run = subprocess.run([str(python), str(script), str(spec)], capture_output=True, text=True, cwd=tmp_path,
                         env=dict(os.environ, SSMV_BINARY=ssmv_binary))
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["file"].startswith(str(python.parent.parent)) and got["repository"] == str(tmp_path.resolve())
    cli = cli_report(ssmv_binary, tmp_path, name)
    assert got["ok"] is cli["ok"] is True
    assert summary(got["tensors"]) == summary(cli["entries"][0]["tensors"])  # the CLI's verdicts, exactly
    assert "input_format bf16: inferred from the dtype of x, dt, B, C, z (ssmv.bf16)" in got["notes"]
    # And it uninstalls cleanly (the wheel's RECORD lists what it installed).
    gone = subprocess.run([str(python), "-m", "pip", "uninstall", "--yes", "--quiet", "ssmv"], capture_output=True,
                          text=True, env=env)
    assert gone.returncode == 0, gone.stderr


def test_pip_install_editable_and_without_build_isolation(tmp_path):
    python = _venv(tmp_path)
    source = _copy_of_the_package(tmp_path)
    env = dict(os.environ, **OFFLINE)
    for flags, where in ((["-e"], source / "ssmv"), (["--no-build-isolation"], python.parent.parent)):
        r = subprocess.run([str(python), "-m", "pip", "install", "--quiet", *flags, str(source)], capture_output=True,
                           text=True, env=env, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        out = subprocess.run([str(python), "-c", "import ssmv; print(ssmv.__file__, ssmv.__version__)"],
                             capture_output=True, text=True, cwd=tmp_path)
        path, version = out.stdout.split()
        assert path.startswith(str(where)) and version == ssmv.__version__


def test_the_backend_reads_pyproject_as_tomllib_does():
    """The backend's fallback reader (Python 3.9 and 3.10 have no tomllib) agrees with tomllib."""
    tomllib = pytest.importorskip("tomllib")
    sys.path.insert(0, str(PACKAGE / "_backend"))
    try:
        import ssmv_backend
    finally:
        sys.path.pop(0)
    text = (PACKAGE / "pyproject.toml").read_text()
    real = sys.modules.pop("tomllib")
    sys.modules["tomllib"] = None  # import fails: the fallback runs
    try:
        fallback = ssmv_backend._toml(text)
    finally:
        sys.modules["tomllib"] = real
    assert fallback == tomllib.loads(text)
    assert ssmv_backend._name_version() == ("ssmv", ssmv.__version__)


def test_cmake_install_puts_ssmv_on_path(tmp_path):
    build, cmake = os.environ.get("SSMV_BUILD_DIR"), os.environ.get("SSMV_CMAKE", shutil.which("cmake"))
    if not build or not cmake:
        pytest.skip("SSMV_BUILD_DIR (the build folder to install; CTest sets it) is not set")
    prefix = tmp_path / "prefix"
    r = subprocess.run([cmake, "--install", build, "--prefix", str(prefix)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    installed = prefix / "bin" / "ssmv"
    assert installed.is_file() and installed.stat().st_mode & stat.S_IXUSR
    case = tmp_path / "case.py"
    case.write_text("import json, sys, ssmv\nsys.path.insert(0, sys.argv[1])\nfrom recurrence import honest_case\n"
                    "r = ssmv.check(**honest_case())\nprint(json.dumps([ssmv.find_binary(), r.ok]))\n")
    env = {k: v for k, v in os.environ.items() if k != "SSMV_BINARY"}
    env.update(PATH=f"{prefix / 'bin'}{os.pathsep}{os.defpath}", PYTHONPATH=str(PACKAGE))
    run = subprocess.run([sys.executable, str(case), str(Path(__file__).parent)], capture_output=True, text=True,
                         env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [str(installed), True]


def _fake_ssmv(folder):
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "ssmv"
    p.write_text("#!/bin/sh\nexit 99\n")
    p.chmod(0o755)
    return p


def test_ssmv_binary_overrides_path(tmp_path, monkeypatch, ssmv_binary):
    on_path = _fake_ssmv(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(on_path.parent))
    monkeypatch.setenv("SSMV_BINARY", ssmv_binary)
    assert ssmv.find_binary() == ssmv_binary
    monkeypatch.delenv("SSMV_BINARY")
    assert ssmv.find_binary() == str(on_path)


def test_not_found_names_every_place_tried(tmp_path, monkeypatch):
    repo = tmp_path / "repo"  # a repository without a build
    (repo / "python" / "ssmv").mkdir(parents=True)
    (repo / "CMakeLists.txt").write_text("")
    monkeypatch.setattr(ssmv._run, "_repositories", lambda: [repo])
    monkeypatch.delenv("SSMV_BINARY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ssmv.BinaryNotFoundError) as e:
        ssmv.check(**honest_case())
    m = str(e.value)
    assert m.startswith("the ssmv program was not found; tried:\n  SSMV_BINARY (not set)\n"
                        f"  `ssmv` on PATH ({tmp_path / 'empty'})\n"), m
    for build in ("release", "cpu", "debug"):
        assert f"  {repo / 'build' / build / 'ssmv'}\n" in m
    assert "cmake --install build/release --prefix DIR puts it in DIR/bin" in m
    assert isinstance(e.value, FileNotFoundError)
