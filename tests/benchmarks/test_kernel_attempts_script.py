"""benchmarks/kernel_attempts.py and its attempt sources (benchmarks/attempts/*_x.cu) without
a GPU: every variant is a level the runner can launch, paired with a reference that exists;
an attempt source with its default switches builds its level's own machine code (so the
control in a run is the level); every attempt compiles for sm_90a without spilling; and
siboehm's kernel 5 is read from the anchor, bounded, and made compilable."""

from __future__ import annotations

import argparse
import io
import re
import tarfile

import benchmark_script
import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.toolchain.sass_check import tools_missing


@pytest.fixture(scope="module")
def attempts():
    return benchmark_script.load("kernel_attempts")


def _variants():
    return benchmark_script.load("kernel_attempts").VARIANTS


def test_every_variant_is_a_launchable_level_with_a_known_reference(attempts):
    names = [v.name for v in attempts.VARIANTS]
    assert len(names) == len(set(names)), "two variants share a name"
    for v in attempts.VARIANTS:
        level = attempts.variant_level(v)
        assert level.params == {**level.params, **v.changes}
        threads = level.threads[0] * level.threads[1]
        assert threads <= registry.MAX_THREADS_PER_BLOCK, v.name
        assert level.dyn_smem_bytes() <= 227 * 1024, v.name
        for k5 in (False, True):
            ref = attempts.reference_id(v, k5)
            assert ref == attempts.SIBOEHM_K5 or registry.get(ref).kind is registry.Kind.REFERENCE


def test_register_2d_is_paired_with_kernel_5_only_when_the_anchor_is_given(attempts):
    v = next(v for v in attempts.VARIANTS if v.base == "register_2d_x")
    assert attempts.reference_id(v, True) == attempts.SIBOEHM_K5
    assert attempts.reference_id(v, False) == "cublas_fp32"
    mma = next(v for v in attempts.VARIANTS if v.base == "mma_tma_x")
    assert attempts.reference_id(mma, True) == registry.get("mma_tma").reference


def test_two_ctas_per_sm_launch_two_blocks_per_sm_and_stream_k_every_sm(attempts):
    two = attempts.family_level("mma_tma_x").with_params(attempts.TWO_CTAS)
    assert two.grid(8192, 8192, 132) == (264, 1, 1)
    assert two.grid(256, 256, 132) == (4, 1, 1)  # 128x128 tiles: fewer than blocks
    sk = attempts.family_level("mma_tma_x").with_params({"SK": 2})
    assert sk.stream_k and sk.grid(256, 256, 132) == (132, 1, 1)
    assert not attempts.family_level("mma_tma_x").stream_k


def test_mma_tma_attempts_keep_the_c_and_stages_they_were_measured_with(attempts):
    """The family's defaults are the level's form (round 13's OUT16 2: FP16 C by stmatrix
    and TMA stores, 3 stages); the variants measured before it keep an FP32 C and 4 stages
    (a zero switch the level's checks would refuse), and each variant's shared memory
    stages C as its OUT16 does, beside the level's stages."""
    by_name = {v.name: attempts.variant_level(v) for v in attempts.VARIANTS}
    level = registry.get("mma_tma")
    for name in ("mma_tma_x", "mma_tma_tmast", "mma_tma"):
        lv = by_name[name]
        assert (lv.params.get("OUT16", 2), lv.params["STAGES"]) == (2, 3), name
        assert lv.output_format is level.output_format is registry.OutputFormat.FP16, name
        assert lv.dyn_smem_bytes() == level.dyn_smem_bytes() == 214_016, name
    old = {v.name for v in attempts.VARIANTS if v.base == "mma_tma_x"} - {
        "mma_tma_x", "mma_tma_tmast"}
    assert "mma_tma_gm16" in old and len(old) == 16
    for name in old:
        lv = by_name[name]
        assert lv.params["STAGES"] == (3 if name in ("mma_tma_st3", "mma_tma_2cta") else 4)
        out16 = lv.params["OUT16"]
        assert out16 == {"mma_tma_out16": 1, "mma_tma_out16_rel3": 1,
                         "mma_tma_tmast4": 3}.get(name, 0), name
        assert lv.output_format is (registry.OutputFormat.FP16 if out16
                                    else registry.OutputFormat.FP32), name
    # the stages alone, then 8 KB or 4 KB of staging a consumer warp (OUT16 2 and 3)
    assert by_name["mma_tma_rel3"].dyn_smem_bytes() == 4 * 48 * 1024 + 1024
    assert by_name["mma_tma_out16"].dyn_smem_bytes() == 4 * 48 * 1024 + 1024
    assert by_name["mma_tma_tmast4"].dyn_smem_bytes() == 230_400
    assert by_name["mma_tma_2cta"].dyn_smem_bytes() == 3 * 32 * 1024 + 1024
    with pytest.raises(ValueError, match="STAGES=0"):  # a level's size still refuses 0
        attempts.variant_level(attempts.Variant("x", "mma_tma_x", {"STAGES": 0}, ""))


def _sass_lines(attempts, level):
    from gemmscope.kernels.toolchain import sass

    built, name = attempts.compile_timed(level)
    text = sass.disassemble(built.cubin)[name]
    return [ln.text for ln in sass.parse(text)]


# the switch settings under which an attempt source is its level's code: mma_tma's with the
# defaults; register_2d's with the launch bounds its level states (none until issue 42's
# measurement, LB 1; two blocks per SM since, LB 3); cp_async_interior's with its FMAs in
# serpentine order (ORD 1) since round 7. fp8_deep_x.cu is the level's kernel as round 6 left
# it (before its row scales came by TMA, stretch 18): a record of that round, not the level.
AS_THE_LEVEL = {"mma_tma_x": [{}], "register_2d_x": [{"LB": 1}, {"LB": 3}],
                "wgmma_tma_x": [{}], "cp_async_interior_x": [{"ORD": 1}]}


@pytest.mark.parametrize("family", sorted(AS_THE_LEVEL))
def test_an_attempt_source_builds_its_levels_code_under_one_setting(attempts, family):
    if (missing := tools_missing()) is not None:
        pytest.skip(missing)
    theirs = _sass_lines(attempts, registry.get(attempts.FAMILIES[family].level))
    ours = [_sass_lines(attempts, attempts.family_level(family).with_params(changes))
            for changes in AS_THE_LEVEL[family]]
    assert theirs in ours


@pytest.mark.parametrize("index", [i for i, v in enumerate(_variants())
                                   if v.base in ("mma_tma_x", "wmma_x", "register_2d_x",
                                                 "wgmma_tma_x", "cp_async_interior_x")])
def test_every_attempt_compiles_for_sm_90a_without_spills(attempts, index):
    if (missing := tools_missing()) is not None:
        pytest.skip(missing)
    from gemmscope.kernels.toolchain import cubin

    built, timed = attempts.compile_timed(attempts.variant_level(attempts.VARIANTS[index]))
    res = cubin.kernels(built.cubin)[timed]
    assert res.local_bytes == 0 and 0 < res.regs <= 255


def test_the_wgmma_widths_header_is_what_the_script_makes(attempts):
    """benchmarks/attempts/wgmma_x_ops.cuh is gen_wgmma's wrappers for WGMMA_X_SHAPES, and
    wgmma_tma_x.cu names a wgmma for each width (else a variant would not compile)."""
    assert attempts.WGMMA_X_OPS.read_text(encoding="utf-8") == attempts.wgmma_x_ops(), \
        "stale: write kernel_attempts.wgmma_x_ops() to benchmarks/attempts/wgmma_x_ops.cuh"
    source = (attempts.ATTEMPTS / "wgmma_tma_x.cu").read_text(encoding="utf-8")
    for n in attempts.WGMMA_X_SHAPES:
        assert f"struct GsWgmmaBf16<{n}>" in source and f"gs_wgmma_bf16_n{n}(" in source


def test_sizes_take_square_and_whole_shapes(attempts):
    assert attempts.parse_sizes("4096, 3000x5000x4096") == [(4096, 4096, 4096),
                                                            (3000, 5000, 4096)]
    assert attempts.size_text(4096) == "4096"
    assert attempts.size_text(3000, 5000, 4096) == "3000x5000x4096"


def _anchor(tmp_path, text: str):
    path = tmp_path / "sgemm.tgz"
    data = text.encode()
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("sgemm_cuda/src/kernels/5_kernel_2D_blocktiling.cuh")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


KERNEL_5 = """#pragma once
#include <cassert>
#include <cuda_runtime.h>
#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))
template <const int BM> __global__ void k(uint n) { assert(n); }
"""


def test_kernel_5_is_read_from_the_tarball_or_its_folder_without_its_includes(attempts,
                                                                              tmp_path):
    from_tar = attempts.k5_source(str(_anchor(tmp_path, KERNEL_5)))
    folder = tmp_path / "sgemm_cuda" / "src" / "kernels"
    folder.mkdir(parents=True)
    (folder / "5_kernel_2D_blocktiling.cuh").write_text(KERNEL_5)
    from_dir = attempts.k5_source(str(tmp_path))
    assert from_tar == from_dir
    assert not re.search(r"^\s*#(include|pragma once)", from_tar, re.M)
    assert "typedef unsigned int uint;" in from_tar and "#define assert(x)" in from_tar
    assert "template <const int BM> __global__ void k(uint n)" in from_tar


def test_an_oversized_kernel_5_is_refused(attempts, tmp_path):
    big = KERNEL_5 + "//" + "x" * attempts.K5_MAX_BYTES
    with pytest.raises(ValueError, match="bytes"):
        attempts.k5_source(str(_anchor(tmp_path, big)))


def test_the_table_gives_ratio_interval_checks_registers_and_clocks(attempts):
    rec = {"index": 0, "name": "r2d_lb2", "changes": {"LB": 2}, "stage": "time", "M": 4096,
           "tflops": 26.1, "ref_tflops": 25.7, "pct_of_reference": 101.6, "pct_ci_low": 101.0,
           "pct_ci_high": 102.3, "pairs": 31, "verified": True, "burst_verified": False,
           "regs": 127, "blocks_per_sm": 2, "sm_clock": 1980.0, "ref_sm_clock": 1965.0}
    failed = {"index": 1, "name": "wmma", "changes": {}, "stage": "check",
              "error": "wrong at 7x13x8"}
    text = attempts.table([rec, failed])
    row = next(ln for ln in text.splitlines() if ln.startswith("r2d_lb2"))
    assert re.search(r"LB=2 +4096 +y/N +26\.1 +25\.7 +101\.6 +\[101\.0,102\.3\] +31 +127 "
                     r"+2 +1980/1965$", row), row
    assert re.search(r"^wmma .* check: wrong at 7x13x8$", text, re.M)


# a stand-in for the script's worker: the variant "hang" never ends, "crash" dies as a CUDA
# fault does, the others answer at once
FAKE_WORKER = '''
import json, sys, time
TAG = "@@attempt "
names = json.loads(sys.argv[1])
for i in [int(x) for x in sys.argv[2].split(",")]:
    print(TAG + json.dumps({"index": i, "name": names[i], "changes": {}, "stage": "start"}),
          flush=True)
    if names[i] == "hang":
        time.sleep(60)
    if names[i] == "crash":
        print("CUDA_ERROR_ILLEGAL_ADDRESS", flush=True)
        sys.exit(3)
    print(TAG + json.dumps({"index": i, "name": names[i], "changes": {}, "stage": "time",
                            "M": 64, "tflops": 1.0, "ref_tflops": 2.0,
                            "pct_of_reference": 50.0, "verified": True,
                            "burst_verified": True}), flush=True)
print(TAG + json.dumps({"done": True}), flush=True)
'''


def test_a_variant_past_its_time_limit_or_faulting_is_stopped_and_the_next_ones_run(
        attempts, tmp_path, monkeypatch):
    import json
    import sys
    import time

    names = ["ok0", "hang", "ok2", "crash", "ok4"]
    variants = [attempts.Variant(n, "register_2d", {}, "") for n in names]
    monkeypatch.setattr(attempts, "VARIANTS", variants)
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE_WORKER)
    monkeypatch.setattr(attempts, "worker_command", lambda todo, _deadline, _args: [
        sys.executable, str(script), json.dumps(names), ",".join(map(str, todo))])
    args = attempts.main.__globals__["argparse"].Namespace(
        out=str(tmp_path / "out"), budget=60.0, variant_limit_s=2.0, precompile=0)
    started = time.monotonic()
    assert attempts.run(list(range(len(names))), args) == 0
    assert time.monotonic() - started < 30
    lines = (tmp_path / "out" / "kernel_attempts.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    timed = sorted(r["name"] for r in recs if r["stage"] == "time")
    stopped = sorted(r["name"] for r in recs if r["stage"] == "stopped")
    assert timed == ["ok0", "ok2", "ok4"] and stopped == ["crash", "hang"]
    log = (tmp_path / "out" / "kernel_attempts.log").read_text()
    assert "== issue 42 attempts" in log and "CUDA_ERROR_ILLEGAL_ADDRESS" in log


class _Stream:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        pass


class _FakeBench:
    """measure.Bench's surface that the worker uses, on numpy: every check passes, every
    launch is counted."""

    def __init__(self, device, clock):
        import numpy as np

        from gemmscope.kernels.engine.operands import Accuracy

        self.cp, self.device, self.clock, self.stream = np, device, clock, _Stream()
        self.launches: list[str] = []
        self._acc = Accuracy(1e-7, False, 0.0)

    def run(self, level, M, N, K, **_kw):
        return {"rel_err": 1e-7, "verified": True, "regs": 99, "local_bytes": 0}

    def prepare(self, level, M, N, K, params, warmup):
        import types

        import numpy as np

        ops = types.SimpleNamespace(a=np.ones((M, K), np.float32), b=np.ones((K, N), np.float32),
                                    poison=lambda: self.launches.append("poison"))
        return types.SimpleNamespace(ops=ops, launch=lambda: self.launches.append(level.id),
                                     verified=True, acc=self._acc,
                                     info={"regs": 127, "local_bytes": 0, "code_key": "k"})


def test_the_worker_pairs_each_size_and_checks_again_after_a_burst(attempts, monkeypatch,
                                                                    capsys):
    import json
    import types

    from gemmscope.kernels.device import gpu
    from gemmscope.kernels.engine import measure, operands, paired
    from gemmscope.kernels.results.ratio_stats import ClockReading

    benches: list[_FakeBench] = []

    def make_bench(device, clock):
        benches.append(_FakeBench(device, clock))
        return benches[-1]

    monkeypatch.setattr(gpu, "device_info", lambda: types.SimpleNamespace(
        name="fake H200", sm_count=132, sm_clock_max_mhz=1980.0))
    monkeypatch.setattr(measure, "Bench", make_bench)
    monkeypatch.setattr(operands, "check", lambda ops: benches[-1]._acc)
    seen = []

    def fake_run_paired(bench, level, ref, M, N, K, max_pairs, warmup, budget_s, **kw):
        seen.append((level.id, ref.id, M, kw.get("energy")))
        return ({"tflops": 700.0, "verified": True, "sm_clock_mhz_avg": 1700.0},
                {"tflops": 500.0, "verified": True, "rel_err": 1e-6, "regs": 168,
                 "local_bytes": 0, "code_key": "c", "pct_of_reference": 71.4,
                 "pct_ci_low": 70.9, "pct_ci_high": 72.0, "pairs": 50,
                 "stop_reason": "precision", "throttled_pairs": 0,
                 "sm_clock_mhz_avg": 1750.0})

    monkeypatch.setattr(paired, "run_paired", fake_run_paired)
    monkeypatch.setattr(paired, "clock_reader",
                        lambda bench: lambda: ClockReading(1900.0, ()))
    times = iter(range(10**6))
    monkeypatch.setattr(paired, "launch_timer", lambda bench, launch, read: (
        lambda: (launch(), (1.0 + next(times) % 2 * 0.01, ClockReading(1900.0, ())))[1]))
    monkeypatch.setattr(attempts, "compile_k5", lambda path: _K5())
    monkeypatch.setattr(attempts, "blocks_per_sm", lambda level: 2)
    names = [v.name for v in attempts.VARIANTS]
    picks = [names.index("wtx_bn232"), names.index("mma_tma_rel3"), names.index("r2d_lb2")]
    args = types.SimpleNamespace(sizes="64,128", max_pairs=20, warmup=1, pair_budget_s=0.05,
                                 sgemm_cuda="anchor.tgz")
    assert attempts.worker(picks, float("inf"), args) == 0
    recs = [json.loads(ln[len(attempts.TAG):]) for ln in capsys.readouterr().out.splitlines()
            if ln.startswith(attempts.TAG)]
    assert not [r for r in recs if "error" in r], recs
    timed = [r for r in recs if r.get("stage") == "time"]
    bf16 = attempts.reference_id(attempts.VARIANTS[picks[0]], True)
    assert [(r["name"], r["M"], r["N"], r["ref"]) for r in timed] == [
        # a variant naming its own shapes is timed at those, not at --sizes
        ("wtx_bn232", 3000, 5000, bf16), ("wtx_bn232", 4096, 4096, bf16),
        ("mma_tma_rel3", 64, 64, "cublas_fp16_bt"), ("mma_tma_rel3", 128, 128, "cublas_fp16_bt"),
        ("r2d_lb2", 64, 64, attempts.SIBOEHM_K5), ("r2d_lb2", 128, 128, attempts.SIBOEHM_K5)]
    assert seen == [("wgmma_tma_x", bf16, 3000, False), ("wgmma_tma_x", bf16, 4096, False),
                    ("mma_tma_x", "cublas_fp16_bt", 64, False),
                    ("mma_tma_x", "cublas_fp16_bt", 128, False)]
    mma, k5 = timed[3], timed[5]
    assert mma["pct_of_reference"] == 71.4 and mma["burst_verified"] is True
    assert mma["sm_clock"] == 1750.0 and mma["ref_sm_clock"] == 1700.0
    assert mma["blocks_per_sm"] == 2
    # kernel 5 times ~1.01 where the level times 1.00 (alternate launches): ratio ~101%
    assert 100.0 < k5["pct_of_reference"] < 102.0 and k5["ref_regs"] == 96
    assert k5["ref_verified"] and k5["burst_verified"] and k5["pairs"] >= 6
    # after the pair loop: C poisoned, then BURST launches of the level back to back
    tail = benches[-1].launches[-attempts.BURST - 1:]
    assert tail == ["poison"] + ["register_2d_x"] * attempts.BURST
    assert recs[-1] == {"done": True}


class _K5:
    """A stand-in for kernel 5 that computes C = A B on numpy, as the real one does."""

    num_regs = 96

    def __call__(self, grid, block, args):
        a, b, c = args[4], args[5], args[7]
        c[...] = a @ b


def test_only_picks_a_variant_by_its_name_and_a_family_by_its_base_or_target(attempts):
    def names(only):
        return [attempts.VARIANTS[i].name for i in attempts.selected(only)]

    assert names("mma_tma") == ["mma_tma"]  # the control alone, a variant's own name
    assert names("mma_tma_tmast,mma_tma") == ["mma_tma_tmast", "mma_tma"]  # table order
    family = names("wmma_x")  # a base that names no variant: its whole family
    assert len(family) > 1 and all(
        v.base == "wmma_x" for v in attempts.VARIANTS if v.name in family)
    assert len(names("")) == len(attempts.VARIANTS)


def test_only_refuses_a_word_that_picks_no_variant(attempts):
    assert attempts.only_words("mma_tma,wmma_x") == "mma_tma,wmma_x"
    with pytest.raises(argparse.ArgumentTypeError, match=r"no variant, base or level 'mma_tmma'"):
        attempts.only_words("mma_tma, mma_tmma")
