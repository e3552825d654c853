"""`pip install --no-build-isolation ./python` works offline with Debian's pip and setuptools
(into a temporary target here, so that nothing outside the test changes)."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent


def test_pip_install_without_network(tmp_path):
    for module in ("pip", "setuptools"):  # found, not imported (setuptools patches distutils on import)
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (Debian: python3-{module}; scripts/install-deps.sh)")
    # From a copy: setuptools builds in the source folder (build/, ssmv.egg-info/).
    source = tmp_path / "src"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"))
    target = tmp_path / "site"
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    build = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--quiet",
                            "--target", str(target), str(source)], capture_output=True, text=True, env=env,
                           cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    code = "import ssmv, ssmv._source; print(ssmv.__version__, ssmv.__file__, ssmv._source.REPOSITORY)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=str(target)))
    assert run.returncode == 0, run.stderr
    version, path, repository = run.stdout.split()
    assert version == "0.1.0" and path.startswith(str(target))
    assert repository == str(tmp_path.resolve())  # where its build/release/ssmv is looked for
