"""The GPU tiers without a GPU (docs/gpu-run-plan.md): the shards together hold every
GPU test exactly once, ``--gpu-shard K`` selects what tests/support/gpu_tiers.py says,
the smoke tier is GPU tests only, with every level at two shapes and each GPU feature,
and every GPU test has a time limit. Collected as the GPU machine collects them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gpu_tiers
import pytest

ROOT = Path(__file__).resolve().parents[1]
# one worker under -n auto --dist loadgroup: the module's collection is made once
pytestmark = pytest.mark.xdist_group("gpu_tiers")

# a plugin for the collecting pytest: each item's time limit and whether it is smoke
PROBE = """
def pytest_collection_finish(session):
    report = session.config.pluginmanager.get_plugin("terminalreporter")
    for item in session.items:
        mark = item.get_closest_marker("timeout")
        limit = mark.args[0] if mark else "none"
        smoke = "smoke" if item.get_closest_marker("smoke") else "-"
        report.write_line(f"ITEM {item.nodeid} {limit} {smoke}")
"""


def collected(*options: str, env: dict[str, str] | None = None) -> list[str]:
    """The output lines of a collection of tests/gpu with these options, as the GPU
    machine's pytest collects it (without a GPU the tests are there, marked to skip)."""
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", "-p", "no:xdist", *options, "tests/gpu"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, **(env or {})})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout.splitlines()


def node_ids(lines: list[str]) -> list[str]:
    return [line for line in lines if "::" in line and not line.startswith("ITEM ")]


@pytest.fixture(scope="module")
def gpu_tests(tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Every GPU test: node id -> (its time limit, "smoke" or "-")."""
    probe = tmp_path_factory.mktemp("probe")
    (probe / "gpu_tier_probe.py").write_text(PROBE)
    path = os.pathsep.join(p for p in (str(probe), os.environ.get("PYTHONPATH")) if p)
    lines = collected("-m", "gpu", "-p", "gpu_tier_probe", env={"PYTHONPATH": path})
    tests = {}
    for line in lines:
        if line.startswith("ITEM "):
            _, nodeid, limit, smoke = line.split()
            tests[nodeid] = (limit, smoke)
    assert len(tests) > 400 and sorted(tests) == sorted(node_ids(lines))
    return tests


def test_every_gpu_test_is_in_exactly_one_shard(gpu_tests):
    files = {t.split("::")[0].rsplit("/", 1)[-1] for t in gpu_tests}
    assert files <= set(gpu_tiers.FILES), files - set(gpu_tiers.FILES)
    by_rule = {t: gpu_tiers.shard_of(t) for t in gpu_tests}
    seen: list[str] = []
    for k in range(1, gpu_tiers.SHARDS + 1):
        shard = node_ids(collected("--gpu-shard", str(k)))
        assert shard, f"shard {k} is empty"
        assert sorted(shard) == sorted(t for t, s in by_rule.items() if s == k), k
        seen += shard
    assert sorted(seen) == sorted(gpu_tests)  # all of them, none twice


def test_test_gpu_py_is_split_by_level(gpu_tests):
    levels = [t for t in gpu_tests if "::test_level_is_correct[" in t]
    assert {gpu_tiers.shard_of(t) for t in levels} == {1, 2}
    assert gpu_tiers.shard_of("tests/gpu/test_gpu.py::test_level_is_correct[naive-1x1x1]") == 1
    assert gpu_tiers.shard_of(
        "tests/gpu/test_gpu.py::test_level_is_correct[wgmma_tma-1x1x1]") == 2
    assert gpu_tiers.shard_of("tests/gpu/test_gpu.py::test_bench_command_prints_the_table") == 2
    with pytest.raises(KeyError, match="not placed in a GPU shard"):
        gpu_tiers.shard_of("tests/gpu/test_new_gpu.py::test_x")


def test_the_smoke_tier_runs_every_level_twice_and_each_feature(gpu_tests):
    from gemmscope.kernels.ladder import registry

    smoke = sorted(node_ids(collected("-m", "smoke")))
    # smoke is a subset of the GPU tests, and the GPU tests marked smoke are all of it
    assert smoke == sorted(t for t, (_, s) in gpu_tests.items() if s == "smoke")
    levels = [t.split("[", 1)[1].rsplit("-", 1)[0] for t in smoke
              if "::test_level_is_correct[" in t]
    assert sorted(levels) == sorted(2 * [lv.id for lv in registry.LEVELS])
    files = {t.split("::")[0].rsplit("/", 1)[-1] for t in smoke}
    # ncu counters, sustained and settle (and burst energy), user kernels, build events,
    # the references beside their levels
    assert {"test_ncu_bank_conflicts.py", "test_sustained_gpu.py", "test_user_kernels_gpu.py",
            "test_gpu_build_events.py"} <= files
    assert any("test_a_settled_burst" in t for t in smoke)
    assert any("sustained" in t for t in smoke)
    # a level beside its reference in one runner (cp_async and wgmma_tma with cuBLAS)
    assert any("test_burst_results_carry_energy_from_the_counter" in t for t in smoke)
    assert len(smoke) < 80  # the quick tier stays quick


def test_every_gpu_test_has_a_time_limit(gpu_tests):
    limits = {t: limit for t, (limit, _) in gpu_tests.items()}
    assert all(s != "none" and 0 < float(s) <= 420 for s in limits.values()), limits
    energy = "tests/gpu/test_sustained_gpu.py::test_the_independent_check_agrees_within_3_percent"
    assert float(limits[energy]) == 300  # its own marker, over its file's limit
