"""The measuring instruments of ../shared/anchors as the benchmark scripts find them (not a
benchmark: the underscore keeps it out of the smoke test's list of scripts)."""

from __future__ import annotations

import atexit
import shutil
import tarfile
import tempfile
from pathlib import Path


def deepgemm_folder(where: str) -> Path:
    """The folder that holds deep_gemm/: `where` itself, or the tarball extracted into a
    folder of this process's own, removed when it exits (a test run left one in /tmp each
    time)."""
    p = Path(where)
    if p.is_dir():
        if not (p / "deep_gemm").is_dir():
            raise SystemExit(f"{p} holds no deep_gemm/ folder")
        return p
    if not tarfile.is_tarfile(p):
        raise SystemExit(f"{p} is neither a folder nor a tarball")
    out = Path(tempfile.mkdtemp(prefix="deepgemm-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    with tarfile.open(p) as tar:
        tar.extractall(out, filter="data")
    if not (out / "deep_gemm").is_dir():
        shutil.rmtree(out, ignore_errors=True)
        raise SystemExit(f"{p} holds no deep_gemm/ folder at its top")
    return out
