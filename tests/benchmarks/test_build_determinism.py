"""Issue 31 item 1 without a GPU: every level compiled offline (NVRTC from PyPI) in fresh
processes with other heap layouts (benchmarks/build_determinism.py: other malloc settings,
environment size, heap padding and level order) gives one machine code, and one cubin to
the byte, PTX copy and line tables included (kernels.toolchain.nvrtc_options.DETERMINISTIC: without
it NVVM's PTX depended on the process's addresses, and wmma's names on its number)."""

from __future__ import annotations

from typing import Any

import benchmark_script
import pytest

from gemmscope.kernels.ladder import registry

pytest.importorskip("cuda.bindings.nvrtc", reason="the nvrtc extra is not installed")

LEVELS = [lv.id for lv in registry.ladder()]
PROCESSES = 2
# one worker takes the module, so that its module fixture (the costly part) runs once
pytestmark = pytest.mark.xdist_group("build_determinism")


@pytest.fixture(scope="module")
def script():
    return benchmark_script.load("build_determinism")


@pytest.fixture(scope="module")
def rows(script) -> dict[str, dict[str, Any]]:
    # two children: the plain one and one with another heap, environment and level order
    # (a third cost CI 29 s and could only find what a pair of layouts finds more often)
    _compiler, got = script.measure(LEVELS, PROCESSES, script.Settings(backend="nvrtc"),
                                    disassemble=False)
    return {r["level"]: r for r in got}


@pytest.mark.parametrize("level", LEVELS)
def test_level_compiles_to_one_machine_code_in_processes_with_other_heaps(rows, level):
    row = rows[level]
    assert row["processes"] == PROCESSES
    assert row["codes"] == 1, row["what"]


@pytest.mark.parametrize("level", LEVELS)
def test_level_compiles_to_one_cubin_in_processes_with_other_heaps(rows, level):
    row = rows[level]
    assert (row["cubins"], row["ptx"], row["sections"]) == (1, 1, []), row["what"]


def test_children_get_other_heaps_and_environments(script):
    plain = script.perturbed_env(0, {"A": "1", "MALLOC_PERTURB_": "7"})
    assert plain == {"A": "1"}
    envs = [script.perturbed_env(i, {"A": "1"}) for i in (1, 2, 3)]
    assert all(e["A"] == "1" for e in envs)
    assert len({len(e["GEMMSCOPE_ENV_PAD"]) for e in envs}) == 3
    assert len({e["MALLOC_TOP_PAD_"] for e in envs}) == 3
    assert script.pad_heap(0) == [] and len(script.pad_heap(1)) != len(script.pad_heap(2))
