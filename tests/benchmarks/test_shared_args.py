"""benchmarks/_args.py: the --levels, --sizes and shape arguments the scripts share refuse
a value they cannot run when the arguments are parsed, in argparse's one line, in every
script that takes them."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

import benchmark_script
import pytest

SCRIPTS = ("bank_conflicts_ncu", "build_determinism", "build_rule_speed",
           "cutlass_mma_anchor", "fp8_side_by_side", "ncu_residue", "sass_shared_ops",
           "sass_unchanged")
# where a script calls its levels otherwise (argparse names -l as "-l/--level")
OPTIONS = [("hopper_bench", "--only"), ("paired_ratio", "-l"), ("tune", "--only"),
           ("tune", "--check-only"), ("simt_mma_side_by_side", "--only")]
KNOWN = {"simt_mma_side_by_side": "cp_async"}  # an id the script takes, else smem_padded


@pytest.fixture(scope="module")
def arg():
    return benchmark_script.load("_args")


def refused(script: str, *argv: str) -> str:
    """The last line of what ``script --smoke ARGV`` said, where argparse refused it: exit
    2, no traceback."""
    done = subprocess.run(
        [sys.executable, str(benchmark_script.BENCHMARKS / f"{script}.py"), "--smoke", *argv],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    return done.stderr.strip().splitlines()[-1]


def test_ids_come_back_in_order_without_blanks_or_spaces(arg):
    assert arg.level_ids()(" naive,,fp8_deep ,cublas_bf16") == ["naive", "fp8_deep",
                                                                 "cublas_bf16"]
    assert arg.level_ids()("") == []


def test_an_id_outside_the_registry_or_the_scripts_choices_is_refused(arg):
    with pytest.raises(argparse.ArgumentTypeError, match="no level 'fp8_dep' here"):
        arg.level_ids()("naive,fp8_dep")
    with pytest.raises(argparse.ArgumentTypeError, match=r"known: smem_tiled, smem_padded$"):
        arg.level_ids(["smem_tiled", "smem_padded"])("smem_tiled,fp8_deep")


@pytest.mark.parametrize(("script", "option"),
                         [*((s, "--levels") for s in SCRIPTS), *OPTIONS])
def test_every_script_taking_levels_refuses_a_mistyped_id_in_one_line(script, option):
    last = refused(script, option, f"{KNOWN.get(script, 'smem_padded')},smem_paded")
    said = "-l/--level" if option == "-l" else option
    assert last.startswith(
        f"{script}.py: error: argument {said}: no level 'smem_paded' here")


def test_sizes_come_back_as_whole_numbers_in_order(arg):
    assert arg.square_sizes(" 4096,,8192 ") == [4096, 8192]
    for bad in ("4096x4096", "0", "-1", "1e3", "٤٠", "1234567", "8192.0"):
        with pytest.raises(argparse.ArgumentTypeError, match="a size is a whole number"):
            arg.square_sizes(f"1024,{bad}")


@pytest.mark.parametrize("script", ["cutlass_mma_anchor", "hopper_bench", "kernel_attempts"])
def test_every_script_taking_sizes_refuses_a_size_it_cannot_run_in_one_line(script):
    last = refused(script, "--sizes", "4096,4O96")
    assert last.startswith(f"{script}.py: error: argument --sizes: ") and "'4O96'" in last


def test_shapes_are_read_by_the_protocols_rule_in_order(arg):
    assert arg.shapes(" 8192x8192x8192,,4096X2112x7168, 4096") == [
        (8192, 8192, 8192), (4096, 2112, 7168), (4096, 4096, 4096)]
    assert arg.shape("3000×5000×4096") == (3000, 5000, 4096)
    for bad, said in (("0x4x4", "M must be at least 1"), ("4096x4096", "give N (a cube)"),
                      ("٤٠٩٦", "whole numbers"), ("4096x1_000x8", "whole numbers"),
                      ("4096x4096x9999999999", "larger than"), (",", "at least one shape")):
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(said)):
            arg.shapes(bad)
    with pytest.raises(argparse.ArgumentTypeError, match="one shape here"):
        arg.shape("4096,8192")


@pytest.mark.parametrize(("script", "option"), [("fp8_side_by_side", "--shapes"),
                                                ("paired_ratio", "-s/--size"),
                                                ("tf32_variants", "-s/--size")])
def test_every_script_taking_shapes_refuses_one_it_cannot_run_in_one_line(script, option):
    assert refused(script, option.split("/")[0], "4096x0x4096") == (
        f"{script}.py: error: argument {option}: '4096x0x4096': N must be at least 1, not 0")


@pytest.mark.parametrize("script", ["gui_frame_breakdown", "gui_frame_time", "operand_power",
                                    "telemetry_overhead"])
def test_every_script_taking_one_level_refuses_a_mistyped_id_in_one_line(script):
    last = refused(script, "--level", "cp_asnyc")
    assert last.startswith(
        f"{script}.py: error: argument --level: no level 'cp_asnyc' here")


def test_one_level_means_one(arg):
    assert arg.level_id()(" fp8_deep ") == "fp8_deep"
    for bad in ("", "naive,fp8_deep"):
        with pytest.raises(argparse.ArgumentTypeError, match="one level id here"):
            arg.level_id()(bad)


ONE_SIZE = ("bank_conflicts_ncu", "build_rule_speed", "clock_state", "energy_check",
            "energy_trace", "ladder_warm", "ncu_residue", "operand_power", "ratio_series",
            "readme_table", "reference_spread", "reproduce_check", "telemetry_overhead",
            "trace_overhead", "tune")


@pytest.mark.parametrize("script", ONE_SIZE)
def test_every_script_taking_one_size_refuses_one_it_cannot_run_in_one_line(script):
    last = refused(script, "--size", "-4096")
    assert last.startswith(f"{script}.py: error: argument ") and "--size: a size is" in last


def test_one_size_means_one(arg):
    assert arg.square_size(" 4096 ") == 4096
    with pytest.raises(argparse.ArgumentTypeError, match="one size here"):
        arg.square_size("4096,8192")
    with pytest.raises(argparse.ArgumentTypeError, match="a size is a whole number"):
        arg.square_size("0")


COUNTS = [("build_determinism", "--processes"), ("build_rule_speed", "--rounds"),
          ("clock_state", "--reps"), ("cold_start", "--runs"),
          ("cutlass_mma_anchor", "--rounds"), ("energy_check", "--trials"),
          ("fp8_side_by_side", "--repeats"), ("gui_frame_breakdown", "--worst"),
          ("hopper_bench", "--repeats"), ("hopper_side_by_side", "--repeats"),
          ("kernel_attempts", "--max-pairs"), ("many_gpus", "--gpus"),
          ("mma_ceiling", "--iters"), ("operand_power", "--trials"),
          ("paired_ratio", "--runs"), ("ratio_series", "--rounds"),
          ("reference_spread", "--launches"), ("report_speed", "--runs"),
          ("split_overhead", "--repeats"), ("telemetry_overhead", "--rounds"),
          ("telemetry_redraw", "--runs"), ("trace_overhead", "--pairs"),
          ("trace_steps", "--steps")]




def test_a_count_is_a_bounded_whole_number(arg):
    assert arg.count(" 30 ") == 30
    for bad in ("0", "-3", "2.5", "1e3", "٣", "1000001", "", "1_000", "9" * 5000):
        with pytest.raises(argparse.ArgumentTypeError, match="a count is a whole number"):
            arg.count(bad)


AMOUNTS = [("build_determinism", "--jobs"), ("build_determinism", "--diff"),
           ("gui_frame_breakdown", "--rate"), ("gui_frame_time", "--rate"),
           ("kernel_attempts", "--warmup"), ("kernel_attempts", "--precompile"),
           ("ratio_series", "--preps"), ("sass_unchanged", "--diff"),
           ("simt_mma_side_by_side", "--precompile")]


COUNT_SAYS = ": a count is a whole number from 1 to 1,000,000, not '0'"
AMOUNT_SAYS = ": a whole number from 0 to 1,000,000 here, not '-2'"
LEADING = {"sass_unchanged": ("save", "/nonexistent")}  # a script's own positionals


@pytest.mark.parametrize(("script", "option", "value", "says"),
                         [*((s, o, "0", COUNT_SAYS) for s, o in COUNTS),
                          *((s, o, "-2", AMOUNT_SAYS) for s, o in AMOUNTS)])
def test_every_count_refuses_nothing_and_every_amount_a_negative_in_one_line(
        script, option, value, says):
    last = refused(script, *LEADING.get(script, ()), option, value)
    assert last.startswith(f"{script}.py: error: argument {option}")  # (then any alias)
    assert last.endswith(says)


def test_an_amount_takes_zero_and_refuses_what_is_not_a_bounded_whole_number(arg):
    assert arg.amount("0") == 0 and arg.amount(" 12 ") == 12 and arg.amount("+4") == 4
    for bad in ("-1", "2.5", "1e3", "٣", "1000001", "", "9" * 5000):
        with pytest.raises(argparse.ArgumentTypeError, match="a whole number from 0"):
            arg.amount(bad)


def test_process_jobs_refuse_zero_where_zero_would_start_no_worker():
    last = refused("sass_unchanged", *LEADING["sass_unchanged"], "--jobs", "0")
    assert last.endswith(COUNT_SAYS)


def test_pairing_a_level_that_has_no_reference_is_refused_in_one_line():
    last = refused("paired_ratio", "-l", "wgmma_tma,cublas_bf16")
    assert last == ("paired_ratio.py: error: argument -l/--level: cublas_bf16 has no "
                    "reference to pair with")


def test_an_unknown_or_empty_tf32_variant_list_is_refused_in_one_line():
    last = refused("tf32_variants", "--variants", "base,st9")
    assert last.startswith("tf32_variants.py: error: argument --variants: unknown variant(s) "
                           "'st9'; known: base, st3")
    last = refused("tf32_variants", "--variants", " , ")
    assert last.startswith("tf32_variants.py: error: argument --variants: name at least one")
