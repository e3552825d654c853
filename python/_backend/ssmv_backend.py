"""The package's PEP 517 build backend, in the tree (pyproject.toml: backend-path), standard
library only: `pip install ./python` needs nothing downloaded, with or without build isolation
(setuptools, which an isolated build would fetch from an index, is not used).

It builds a pure-Python wheel (ssmv/*.py, the .dist-info that PEP 427 and the core metadata
spec ask for) from pyproject.toml's [project] table, and adds ssmv/_source.py: the repository
the package was installed from, where an installed copy looks for build/release/ssmv when
ssmv is neither in SSMV_BINARY nor on PATH. Also an editable wheel (PEP 660: a .pth file
naming this folder) and an sdist.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent  # python/
REPOSITORY = HERE.parent
EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same tree gives the same wheel


def _toml(text):
    """pyproject.toml as a dict: tomllib (Python 3.11), else the subset this file uses (tables,
    key = "string" | ["string", ...] | {...}-free values), so that 3.9 and 3.10 build too."""
    try:
        import tomllib
        return tomllib.loads(text)
    except ImportError:
        pass
    out, table = {}, None
    for line in text.splitlines():
        line = line.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            table = out
            for part in line.strip("[]").split("."):
                table = table.setdefault(part.strip(), {})
            continue
        key, value = (s.strip() for s in line.split("=", 1))
        if value.startswith("["):
            table[key.strip('"')] = re.findall(r'"([^"]*)"', value)
        elif value.startswith('"'):
            table[key.strip('"')] = value[1:-1]
        else:
            table[key.strip('"')] = {"true": True, "false": False}.get(value, value)
    return out


def _project():
    return _toml((HERE / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _name_version():
    p = _project()
    return p["name"], p["version"]


def _metadata():
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p['description']}", f"Requires-Python: {p['requires-python']}"]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {d}; extra == \"{extra}\"" for d in deps]
    readme = p.get("readme")
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + (HERE / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n"


class _Wheel:
    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, name, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.zip.writestr(zipfile.ZipInfo(name, EPOCH), data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append(f"{name},sha256={digest},{len(data)}")

    def close(self, dist_info):
        self.add(f"{dist_info}/METADATA", _metadata())
        self.add(f"{dist_info}/WHEEL", "Wheel-Version: 1.0\nGenerator: ssmv_backend\nRoot-Is-Purelib: true\n"
                                       "Tag: py3-none-any\n")
        record = f"{dist_info}/RECORD"
        self.zip.writestr(zipfile.ZipInfo(record, EPOCH), "\n".join(self.records + [f"{record},,"]) + "\n")
        self.zip.close()


def _sources():
    return sorted(p for p in (HERE / "ssmv").glob("*.py") if p.name != "_source.py")


def _build(wheel_directory, editable):
    name, version = _name_version()
    filename = f"{name}-{version}-py3-none-any.whl"
    dist_info = f"{name}-{version}.dist-info"
    w = _Wheel(os.path.join(wheel_directory, filename))
    if editable:
        w.add(f"_{name}_editable.pth", str(HERE) + "\n")
    else:
        for p in _sources():
            w.add(f"ssmv/{p.name}", p.read_bytes())
        w.add("ssmv/_source.py", f'"""Written by the build backend at install time."""\nREPOSITORY = '
                                 f'{str(REPOSITORY)!r}\n')
    w.close(dist_info)
    return filename


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, editable=False)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _build(wheel_directory, editable=True)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    name, version = _name_version()
    base = f"{name}-{version}"
    filename = f"{base}.tar.gz"
    files = [HERE / "pyproject.toml", HERE / "README.md", Path(__file__)] + _sources()
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for p in files:
            data = p.read_bytes()
            info = tarfile.TarInfo(f"{base}/{p.relative_to(HERE).as_posix()}")
            info.size, info.mtime, info.mode = len(data), 315532800, 0o644
            tar.addfile(info, io.BytesIO(data))
        meta = _metadata().encode("utf-8")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size, info.mtime, info.mode = len(meta), 315532800, 0o644
        tar.addfile(info, io.BytesIO(meta))
    return filename
