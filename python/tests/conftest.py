"""Tests of the ssmv Python package: the package from this tree (not an installed copy),
the ssmv program from SSMV_BINARY (CTest sets it) or the repository's build tree."""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

FIXTURES = REPO / "verify" / "tests" / "triton_fixtures"


@pytest.fixture(autouse=True)
def cex_dir(tmp_path, monkeypatch):
    """Failing dumps of each test go to its own folder."""
    d = tmp_path / "cex"
    monkeypatch.setenv("SSMV_CEX_DIR", str(d))
    return d


@pytest.fixture(scope="session")
def ssmv_binary():
    import ssmv
    return ssmv.find_binary()
