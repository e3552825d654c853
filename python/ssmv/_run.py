"""Finding and running the ssmv program."""

import json
import os
import shutil
import subprocess
from pathlib import Path

from ._errors import BinaryNotFoundError, SsmvError

HOW_TO_BUILD = ("install it (cmake --install build/release --prefix DIR puts it in DIR/bin: put that on PATH), "
                "set SSMV_BINARY=/path/to/ssmv, or build it in the repository with ./scripts/build.sh (it is then "
                "build/release/ssmv)")


def _executable(p):
    return p.is_file() and os.access(p, os.X_OK)


def find_binary(binary=None):
    """The ssmv program: `binary`, else $SSMV_BINARY (an override), else `ssmv` on PATH (where
    `cmake --install` puts it), else the build tree (build/release, build/cpu, build/debug) of
    the repository this package sits in or was installed from. BinaryNotFoundError naming every
    place tried when none has it."""
    if binary is not None:
        p = Path(binary)
        if not _executable(p):
            raise BinaryNotFoundError(f"binary={str(binary)!r}: no executable ssmv there; {HOW_TO_BUILD}")
        return str(p)
    env = os.environ.get("SSMV_BINARY")
    if env:
        if not _executable(Path(env)):
            raise BinaryNotFoundError(f"SSMV_BINARY={env!r}: no executable ssmv there; {HOW_TO_BUILD}")
        return env
    on_path = shutil.which("ssmv")
    if on_path:
        return on_path
    tried = []
    for repo in _repositories():
        for build in ("release", "cpu", "debug"):
            p = repo / "build" / build / "ssmv"
            if _executable(p):
                return str(p)
            tried.append(str(p))
    path = os.environ.get("PATH", "")
    where = [
        "SSMV_BINARY (not set)",
        f"`ssmv` on PATH ({path})" if path else "`ssmv` on PATH (PATH is empty)",
    ]
    where += tried or ["no ssmv repository's build tree (this package is neither in one nor installed from one)"]
    raise BinaryNotFoundError("the ssmv program was not found; tried:\n" + "\n".join(f"  {w}" for w in where) +
                              f"\n{HOW_TO_BUILD[0].upper()}{HOW_TO_BUILD[1:]}")


def _repositories():
    """The ssmv repository this package sits in (python/ssmv/), and the one it was installed
    from (recorded by the build backend, python/_backend), when they are one."""
    found = []
    candidates = [Path(__file__).resolve().parent.parent.parent]
    try:
        from ._source import REPOSITORY
        candidates.append(Path(REPOSITORY))
    except ImportError:
        pass
    for repo in candidates:
        if (repo / "CMakeLists.txt").is_file() and (repo / "python" / "ssmv").is_dir() and repo not in found:
            found.append(repo)
    return found


def run_json(binary, args, cwd, dump_for_errors=None):
    """Runs `ssmv ARGS --json report.json` in `cwd`; returns (report dict, stdout). Exit
    code 2 (bad input) is an SsmvError carrying ssmv's message."""
    report = Path(cwd) / "report.json"
    # A library's caller reads the report, not a progress line (which would also lead an error
    # message of a long check).
    quiet = ["--quiet"] if list(args)[:1] == ["check"] else []
    cmd = [binary] + list(args) + quiet + ["--json", str(report)]
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    except OSError as e:
        raise BinaryNotFoundError(f"cannot run {binary!r}: {e}; {HOW_TO_BUILD}") from None
    message = (proc.stderr.strip() or proc.stdout.strip())
    if proc.returncode == 2:
        raise SsmvError(message, command=cmd, dump=dump_for_errors)
    # 0 nothing found, 1 VIOLATION/INVALID, 3 SUSPICIOUS (the sharp verdict) without either.
    if proc.returncode not in (0, 1, 3) or not report.exists():
        raise RuntimeError(f"{' '.join(cmd)} exited with code {proc.returncode} without a report: {message}")
    with open(report, encoding="utf-8") as f:
        return json.load(f), proc.stdout
