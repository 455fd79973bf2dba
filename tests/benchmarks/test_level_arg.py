"""benchmarks/_level_arg.py: the --levels argument the scripts share refuses an id it does
not know when the arguments are parsed, in argparse's one line, in every script that
takes it."""

from __future__ import annotations

import argparse
import subprocess
import sys

import benchmark_script
import pytest

SCRIPTS = ("bank_conflicts_ncu", "build_determinism", "build_rule_speed",
           "cutlass_mma_anchor", "fp8_side_by_side", "ncu_residue", "sass_shared_ops",
           "sass_unchanged")


@pytest.fixture(scope="module")
def arg():
    return benchmark_script.load("_level_arg")


def test_ids_come_back_in_order_without_blanks_or_spaces(arg):
    assert arg.level_ids()(" naive,,fp8_deep ,cublas_bf16") == ["naive", "fp8_deep",
                                                                 "cublas_bf16"]
    assert arg.level_ids()("") == []


def test_an_id_outside_the_registry_or_the_scripts_choices_is_refused(arg):
    with pytest.raises(argparse.ArgumentTypeError, match="no level 'fp8_dep' here"):
        arg.level_ids()("naive,fp8_dep")
    with pytest.raises(argparse.ArgumentTypeError, match=r"known: smem_tiled, smem_padded$"):
        arg.level_ids(["smem_tiled", "smem_padded"])("smem_tiled,fp8_deep")


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_script_taking_levels_refuses_a_mistyped_id_in_one_line(script):
    done = subprocess.run(
        [sys.executable, str(benchmark_script.BENCHMARKS / f"{script}.py"), "--smoke",
         "--levels", "smem_padded,smem_paded"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"{script}.py: error: argument --levels: no level 'smem_paded' here")
