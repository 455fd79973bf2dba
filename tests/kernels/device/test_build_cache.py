"""The build cache folder (kernels/device/build_cache.py): where it is, what it tells the
compilers, and that CuPy is imported only after it has been told."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gemmscope.kernels.device import build_cache


def test_the_variable_names_the_folder_and_each_compiler_gets_a_subfolder(tmp_path):
    env = {"GEMMSCOPE_CACHE_DIR": str(tmp_path / "carried"), "HOME": "/home/x"}
    assert build_cache.cache_root(env) == tmp_path / "carried"
    assert build_cache.cache_env(env) == {
        "CUPY_CACHE_DIR": str(tmp_path / "carried" / "cupy"),
        "TRITON_CACHE_DIR": str(tmp_path / "carried" / "triton"),
        "DG_JIT_CACHE_DIR": str(tmp_path / "carried" / "deep_gemm")}
    assert build_cache.sass_dir(env) == tmp_path / "carried" / "sass"


def test_without_the_variable_the_platform_cache_folder():
    assert build_cache.cache_root({"XDG_CACHE_HOME": "/c", "HOME": "/h"}) == \
        Path("/c/gemmscope")
    assert build_cache.cache_root({"HOME": "/h"}) == Path("/h/.cache/gemmscope")


def test_a_library_variable_the_user_set_is_kept():
    env = {"GEMMSCOPE_CACHE_DIR": "/g", "CUPY_CACHE_DIR": "/mine"}
    assert "CUPY_CACHE_DIR" not in build_cache.cache_env(env)
    cupy = next(f for f in build_cache.folders(env) if f.name == "cupy")
    assert cupy.path == Path("/mine") and not cupy.own


def test_folders_count_files_and_bytes(tmp_path):
    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "a.cubin").write_bytes(b"x" * 100)
    (tmp_path / "cupy" / "b.cubin").write_bytes(b"y" * 50)
    found = {f.name: f for f in build_cache.folders({"GEMMSCOPE_CACHE_DIR": str(tmp_path)})}
    assert (found["cupy"].entries, found["cupy"].size_bytes) == (2, 150)
    assert (found["sass"].entries, found["sass"].size_bytes) == (0, 0)  # not made yet
    assert build_cache.entry_names(tmp_path / "cupy") == {"a.cubin", "b.cubin"}
    assert build_cache.entry_names(tmp_path / "none") == frozenset()


# a stand-in CuPy that says which cache folder it was imported under, then is "missing"
FAKE_CUPY = """import os, sys
sys.stderr.write("CUPY_CACHE_DIR=" + os.environ.get("CUPY_CACHE_DIR", "<unset>") + "\\n")
raise ImportError("fake cupy")
"""


def _imported_under(tmp_path: Path, code: str, **env: str) -> str:
    fake = tmp_path / "fake"
    (fake / "cupy").mkdir(parents=True, exist_ok=True)
    (fake / "cupy" / "__init__.py").write_text(FAKE_CUPY)
    base = {k: v for k, v in os.environ.items() if k != "CUPY_CACHE_DIR"}
    paths = [str(fake), os.environ.get("PYTHONPATH", "")]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={**base, **env,
                                           "PYTHONPATH": os.pathsep.join(p for p in paths if p)})
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("CUPY_CACHE_DIR=")]
    assert lines, done.stderr
    return lines[0].split("=", 1)[1]


def test_cupy_is_imported_after_its_cache_folder_is_set(tmp_path):
    code = "from gemmscope.kernels.device.gpu import get_cupy; print(get_cupy())"
    got = _imported_under(tmp_path, code, GEMMSCOPE_CACHE_DIR=str(tmp_path / "g"))
    assert got == str(tmp_path / "g" / "cupy")
    mine = _imported_under(tmp_path, code, GEMMSCOPE_CACHE_DIR=str(tmp_path / "g"),
                           CUPY_CACHE_DIR=str(tmp_path / "mine"))
    assert mine == str(tmp_path / "mine")


def test_the_runner_starts_with_its_cache_folder(tmp_path):
    # the runner's own start (a session header with no GPU, then quit on empty input)
    code = ("import sys, io; sys.stdin = io.TextIOWrapper(io.BytesIO(b''));"
            "from gemmscope.kernels.engine.runner import main; main(telemetry_hz=0)")
    got = _imported_under(tmp_path, code, GEMMSCOPE_CACHE_DIR=str(tmp_path / "r"))
    assert got == str(tmp_path / "r" / "cupy")
