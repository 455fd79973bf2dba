"""The build cache on the H200 (issue 40 item 3): a runner over an empty cache folder
compiles each level and says so; a second runner over the same folder takes every build
from it (no new file in CuPy's folder), says so, and makes the same code (code_key)."""

from __future__ import annotations

import os

import pytest

from gemmscope.kernels.drive.session import RunnerSession, default_runner_command
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.plan import RunRequest

pytestmark = pytest.mark.gpu

LEVELS = ("naive", "cp_async", "wgmma_tma")


def _ladder(env: dict[str, str]) -> dict[str, object]:
    seen: list = []
    client = RunnerSession(seen.append, default_runner_command(0), env=env)
    try:
        client.wait_ready()
        client.run([RunRequest(lv, Shape(256, 256, 256), 2, warmup=1, compare=False, energy_s=0)
                    for lv in LEVELS])
    finally:
        client.close()
    return {e.level: e for e in seen if e.type == "result"}


def test_a_second_runner_takes_every_build_from_the_cache_folder(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUPY_CACHE_DIR", "TRITON_CACHE_DIR", "DG_JIT_CACHE_DIR")}
    env["GEMMSCOPE_CACHE_DIR"] = str(tmp_path)
    cold = _ladder(env)
    files = sorted(p.name for p in (tmp_path / "cupy").iterdir())
    assert files and list((tmp_path / "sass").glob("*.json"))
    warm = _ladder(env)
    assert sorted(p.name for p in (tmp_path / "cupy").iterdir()) == files  # nothing new
    for lv in LEVELS:
        assert cold[lv].verified and warm[lv].verified
        assert cold[lv].compile_cached is False and warm[lv].compile_cached is True, lv
        assert warm[lv].compile_s < cold[lv].compile_s, lv
        assert warm[lv].code_key == cold[lv].code_key, lv
        assert warm[lv].energy_j is None  # energy_s 0: no window asked
