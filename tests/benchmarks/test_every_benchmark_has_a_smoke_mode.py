"""No benchmark rots (issue 40 item 4): every script in benchmarks/ has a small mode that
runs here, in CI, without a GPU, and prints what the script is for.

``--smoke`` runs a script at tiny sizes on synthetic data; a script whose measurement needs
the GPU parses its arguments, has the registry make the levels it would run, renders its
table from made-up rows and says it needs a GPU (benchmarks/_smoke.py). Each test asserts
the lines its script must print, not only the exit status. A shell script is checked for
syntax and for the modules and scripts it calls. A new script without an entry here fails
the first test.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import places
import pytest

BENCHMARKS = places.BENCHMARKS
GPU_LINE = "smoke: arguments ok; needs a GPU for the measurement"
MADE_UP = "smoke: made-up rows, not a measurement:"
OFFLINE_BUILD = "needs NVRTC and nvdisasm (the nvrtc extra)"

# script -> what its smoke must print (substrings of stdout, or compiled patterns)
RUNS = {  # no GPU needed: the script runs end to end, small
    "big_recording.py": ["file MB", re.compile(r"^events \(lines\) +[1-9][0-9,]*$", re.M),
                         re.compile(r"^read \+ delivered s +[0-9.]+$", re.M),
                         "longest loop gap ms"],
    "cold_start.py": [re.compile(r"^gemmscope \(no GPU: replay fallback\) +[0-9.]+", re.M),
                      re.compile(r"^gemmscope replay FILE +[0-9.]+", re.M)],
    "gui_frame_breakdown.py": [re.compile(r"^charts +normal", re.M),
                               re.compile(r"^mean ms per frame \([1-9][0-9]* frames\)$",
                                          re.M)],
    "gui_frame_time.py": [re.compile(r"^floor +- +\(empty-widget\) +[1-9]", re.M),
                          re.compile(r"^charts +normal +\(still@frame-clock\) +[1-9]", re.M),
                          re.compile(r"^banks +normal +register_2d +[1-9]", re.M)],
    # the tests' stand-in runner, twice over one build cache folder
    "ladder_warm.py": [re.compile(r"^builds from the cache +0/20 +20/20$", re.M),
                       re.compile(r"^naive +1\.50 NVRTC +0\.02 cache"
                                  r" +[0-9.]+ / – / – +[0-9.]+ / – / –$", re.M)],
    "level_switch.py": [re.compile(r"^charts +normal +[1-9][0-9]* +[0-9.]+ +[0-9.]+", re.M),
                        re.compile(r"^code +normal +[1-9][0-9]* +[0-9.]+ +[0-9.]+", re.M)],
    "many_gpus.py": [re.compile(r"^ +GPUs +events +read s .* window s .* µs/event$", re.M),
                     re.compile(r"^ +2 +41 +[0-9.]+ ", re.M),
                     re.compile(r"^ +8 +161 +[0-9.]+ ", re.M)],
    "readme_table.py": [re.compile(r"^\| burst 4096³ \| 0\.300 \(0\.6%\) \|", re.M),
                        "| wmma (FP16) |"],
    "report_speed.py": [re.compile(r"^report wall s \(median\) +[0-9.]+$", re.M),
                        re.compile(r"^whole read, in process s +[0-9.]+$", re.M)],
    "reproduce_check.py": [re.compile(r"^(\d+) of \1 within 2% in every run$", re.M)],
    "split_overhead.py": [re.compile(r"^one runner +4 ", re.M),
                          re.compile(r"^--devices 0,1 --split +4 ", re.M)],
    # stretch 30's H200 paired run, kept in docs/paired-runs, read back
    "paired_machines.py": [re.compile(r"^\| fp8_deep \| 4096x4096x4096 \| 99\.85 \(2\.08\) \|",
                                      re.M),
                           re.compile(r"^[0-9]+ of [1-9][0-9]* rows hold", re.M)],
    # the bundled recording's measured fp8_deep trace, read back
    "trace_steps.py": ["smoke: the bundled recording's fp8_deep traces",
                       re.compile(r"^fp8_deep 4096x4096x4096 .*trace build [+-][0-9.]+% over "
                                  r"plain$", re.M),
                       re.compile(r"^ +all +[1-9][0-9]* +[0-9.]+ +[0-9]+ +[0-9.]+ ", re.M),
                       re.compile(r"^epilogue: [0-9.]+ µs \(median of [1-9][0-9]*\)$", re.M)],
    "telemetry_redraw.py": ["600 samples, 5 runs (synthetic)",
                            re.compile(r"^paint of the whole session: [0-9.]+ ms$", re.M)],
    "user_kernel_sweep_table.py": ["BM/BN", "4 variants: 3 ran, 3 verified, 1 refused or failed"],
    # the tests' stand-ins for Nsight Compute (tests/support/fake_ncu*.py)
    "bank_conflicts_ncu.py": [re.compile(r"^smem_padded +ld bank conflicts +0 +1,000", re.M),
                              "wrote "],
    "ncu_report_read.py": ["sgemm_register_2d", "correlated metrics of the first kernel"],
    "ncu_residue.py": [re.compile(r"^smem_padded +ld +0 as built +1,000", re.M)],
}
OFFLINE = {  # NVRTC and nvdisasm from PyPI (the nvrtc extra, in the test extra): no GPU
    "build_determinism.py": [re.compile(r"^naive +2 +1 ", re.M)],
    "sass_shared_ops.py": [re.compile(r"^ +model \{.*\} +ok$", re.M)],
    "sass_unchanged.py": ["instruction streams and resources all the same"],
}
GPU_ONLY = {  # the measurement needs the GPU: arguments, levels and the table
    "build_rule_speed.py": [MADE_UP, re.compile(r"^cp_async +4096 .* yes$", re.M)],
    "energy_check.py": [MADE_UP, re.compile(r"^wgmma_tma +4096\^3 +17000 ", re.M)],
    "cutlass_mma_anchor.py": ["smoke: the instrument's source has 5 CUTLASS configurations",
                              MADE_UP, re.compile(r"^mma_tma +4096 +526\.0 +745\.0 +70\.6%", re.M)],
    "clock_state.py": [MADE_UP, re.compile(r"^mma_tma +none +64\.50 +1752MHz +216p", re.M),
                       "rel: (greatest - least) / least"],
    "energy_trace.py": [MADE_UP, "J/GEMM around whole 0.6 "],
    "reference_spread.py": [MADE_UP, re.compile(r"^cublaslt_fp8 +fresh +1301\.0 +1980MHz "
                                                r"+1336\.0 +1980MHz +2\.69$", re.M)],
    "fp8_side_by_side.py": [MADE_UP, "| M x N x K | DeepGEMM | fp8_block_scaled"],
    "hopper_bench.py": [MADE_UP, re.compile(r"^wgmma_tma +4096x4096x4096 +501\.0  Y", re.M)],
    "hopper_side_by_side.py": [MADE_UP, "% of reference", "cublas_bf16"],
    "kernel_attempts.py": [MADE_UP, "== issue 42 attempts",
                           re.compile(r"^ +\d+ fp8_deep +fp8_deep ", re.M),
                           re.compile(r"^r2d_lb2 +LB=2 +4096 +y/y ", re.M)],
    "mma_ceiling.py": [MADE_UP, "HMMA/SM/clk"],
    # and the kept H100 series of vectorized (docs/ratio-series), read back: its loops of
    # 50 pairs spread 1.31% by the plain median and 0.26% by the pseudo-median
    "ratio_series.py": [MADE_UP, "replay of 2026-12-07-h100-GPU-937b635f-vectorized-4096",
                        re.compile(r"^vectorized +50 +27 +1\.31% +0\.26% +0\.41%$", re.M),
                        re.compile(r"^fp8_block_scaled +6000 +91\.36 +0\.50 \(60\) ", re.M),
                        "every 2 s (ratio %/level TFLOPS/reference TFLOPS): 90.91/1249/1374",
                        re.compile(r"^1 +96\.30 / +1322 \( 700\) +97\.40 / +1337 \( 690\) +1\.14$",
                                   re.M)],
    "paired_ratio.py": [MADE_UP, re.compile(r"^wgmma_tma +4096x4096x4096 +99\.60 ", re.M),
                        "spread: greatest - least"],
    "operand_power.py": [MADE_UP, re.compile(r"^zeros +wgmma_tma +745\.2 +98\.6% +430 ", re.M),
                         re.compile(r"^wrote .*operand_power\.svg", re.M)],
    "simt_mma_side_by_side.py": [MADE_UP, "== issue 17 candidates"],
    "telemetry_overhead.py": [MADE_UP, "sampling off"],
    # a real computation on the CPU (the TF32 emulations), then the GPU line
    "tf32_accuracy.py": ["smoke: numpy on the CPU",
                         re.compile(r"^TF32 dropped \(emulated\) +1024 +[1-9]\.[0-9]+e-04 ", re.M),
                         re.compile(r"^TF32 rounded \(emulated\) +4096 +[1-9]\.[0-9]+e-04 ", re.M)],
    "tf32_variants.py": [MADE_UP, "smoke: the registry makes every level and variant named",
                         re.compile(r"^tf32_wgmma +sk2 +8192x8192x8192 +300\.0 +yes", re.M)],
    # made-up costs of 1 + i % for the i-th level: the first rows within the goal
    "trace_overhead.py": [MADE_UP, re.compile(r"^naive +256x256x256 +1 .* ok +128 ", re.M),
                          re.compile(r"^double_buffer +256x256x256 .* \+5\.00% +ok ", re.M),
                          re.compile(r"^fp8_deep +256x256x256 .* OVER ", re.M),
                          "smoke: the registry makes every level and variant named (20)"],
    "tune.py": ["smoke: the registry makes every level and variant named"],
}
SHELL = ("gpu_tier.sh", "ncu_fp8_deep.sh", "ncu_levels.sh", "record_bundled.sh",
         "record_two_gpu.sh", "tf32_h200.sh", "trace_h200.sh", "update_bundled.sh",
         "update_timing.sh", "user_kernels_h200.sh")


def _scripts() -> set[str]:
    return {p.name for p in BENCHMARKS.iterdir()
            if p.suffix in (".py", ".sh") and not p.name.startswith("_")}


def test_every_script_in_benchmarks_has_its_smoke_test():
    listed = {*RUNS, *OFFLINE, *GPU_ONLY, *SHELL}
    assert _scripts() - listed == set(), "a script without a smoke test: add it here"
    assert listed - _scripts() == set(), "a smoke test of a script that is gone"


def _smoke(name: str, tmp_path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, str(BENCHMARKS / name), "--smoke"],
                          capture_output=True, text=True, timeout=150, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]  # a slot's error is printed
    return proc


def _prints(out: str, expected: list[str | re.Pattern[str]]) -> None:
    for want in expected:
        if isinstance(want, str):
            assert want in out, f"{want!r} not in:\n{out[-3000:]}"
        else:
            assert want.search(out), f"{want.pattern!r} not in:\n{out[-3000:]}"


@pytest.mark.parametrize("name", sorted(RUNS))
def test_smoke_runs_the_script_without_a_gpu(name, tmp_path):
    _prints(_smoke(name, tmp_path).stdout, RUNS[name])


@pytest.mark.parametrize("name", sorted(OFFLINE))
def test_smoke_builds_offline(name, tmp_path):
    from gemmscope.kernels.toolchain.sass_check import tools_missing

    if (missing := tools_missing()) is not None:
        pytest.skip(f"{OFFLINE_BUILD}: {missing}")
    _prints(_smoke(name, tmp_path).stdout, OFFLINE[name])


@pytest.mark.parametrize("name", sorted(GPU_ONLY))
def test_a_gpu_script_parses_its_arguments_and_renders_its_table(name, tmp_path):
    out = _smoke(name, tmp_path).stdout
    _prints(out, [*GPU_ONLY[name], GPU_LINE])
    helped = subprocess.run([sys.executable, str(BENCHMARKS / name), "--help"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert "--smoke" in helped.stdout


@pytest.mark.parametrize("name", SHELL)
def test_a_shell_script_parses_and_calls_what_exists(name):
    path = BENCHMARKS / name
    text = path.read_text()
    shell = "sh" if text.startswith("#!/bin/sh") else "bash"
    proc = subprocess.run([shell, "-n", str(path)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    for module in re.findall(r"python3? -m (gemmscope[\w.]*)", text):
        assert importlib.util.find_spec(module) is not None, module
    for script in re.findall(r"benchmarks/(\w+\.py)", text):
        assert (BENCHMARKS / script).is_file(), script
