"""`gemmscope record --launch-clocks` (kernels/profile/launch_clocks.py): the ncu command,
the main kernel's medians read from ncu's raw page, the event it makes, and the step that
measures a shared reference once."""

from __future__ import annotations

import io
import json

import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.models.ncu_compare import parse_raw_csv
from gemmscope.kernels.profile import launch_clocks as lc
from gemmscope.kernels.protocol.decoding import decode

HEAD = ["ID", "Kernel Name", lc.TIME_METRIC, lc.CLOCK_METRIC]


def raw_page(rows: list[tuple[str, str, str]], time_unit: str = "nsecond",
             rate_unit: str = "cycle/nsecond") -> str:
    """FORMAT SAMPLE, NOT MEASURED: ncu's raw page (a header, a units row, a row per
    launch) with made-up kernels, times and clocks."""
    def row(cells: list[str]) -> str:
        return ",".join(f'"{c}"' for c in cells)

    lines = ["==PROF== Connected to process 1", row(HEAD), row(["", "", time_unit, rate_unit])]
    lines += [row([str(i), *r]) for i, r in enumerate(rows)]
    return "\n".join(lines) + "\n"


def test_the_command_times_the_launches_alone_with_the_clocks_left_to_the_gpu(tmp_path):
    cmd = lc.profile_command("ncu", "mma_tma", 4096, 4096, 4096, 20, tmp_path / "r")
    text = " ".join(cmd)
    assert "--clock-control none" in text and "--profile-from-start off" in text
    assert f"--metrics {lc.TIME_METRIC},{lc.CLOCK_METRIC}" in text
    assert cmd[-3:] == ["--launches", "20", "--profiled-range"]
    assert "mma_tma" in cmd and cmd[cmd.index("-c") + 1] == str(20 * lc.MAX_KERNELS)
    with pytest.raises(ValueError, match="launches"):
        lc.profile_command("ncu", "mma_tma", 64, 64, 64, 0, tmp_path / "r")


def test_a_side_is_its_main_kernels_medians_in_mhz_and_us():
    rows = [("memset_kernel", "2,000", "1.98"), ("gemm_kernel", "100,000", "1.55"),
            ("gemm_kernel", "102,000", "1.57"), ("gemm_kernel", "101,000", "1.56"),
            ("memset_kernel", "2,000", "1.98")]
    side = lc.Side.of_rows(parse_raw_csv(raw_page(rows)))
    assert side.kernel == "gemm_kernel" and side.launches == 3
    assert side.us == pytest.approx(101.0) and side.mhz == pytest.approx(1560.0)
    assert side.reason is None


@pytest.mark.parametrize("time_unit, rate_unit, us, mhz", [
    ("usecond", "cycle/usecond", 101.0, 1.56),
    ("msecond", "cycle/second", 101_000.0, 1.56e-6),
    ("nsecond", "GHz", 0.101, 1560.0),
])
def test_ncus_units_are_read_as_they_are_printed(time_unit, rate_unit, us, mhz):
    side = lc.Side.of_rows(parse_raw_csv(raw_page([("k", "101", "1.56")], time_unit,
                                                  rate_unit)))
    assert side.us == pytest.approx(us) and side.mhz == pytest.approx(mhz)


@pytest.mark.parametrize("rows, rate_unit, why", [
    ([], "cycle/nsecond", "no kernel with a GPU time"),
    ([("k", "100", "n/a")], "cycle/nsecond", "no SM clock"),
    ([("k", "100", "1.5")], "furlongs/fortnight", "no SM clock"),
])
def test_a_side_without_numbers_says_why(rows, rate_unit, why):
    side = lc.Side.of_rows(parse_raw_csv(raw_page(rows, rate_unit=rate_unit)))
    assert side.us is None or side.mhz is None
    assert why in (side.reason or "")


def test_the_event_decodes_with_its_ratio_of_cycles_or_says_what_is_missing():
    mine = lc.Side("mma_tma_kernel", 271.3, 1701.0, 20)
    ref = lc.Side("nvjet_sm90_hsh", 179.8, 1569.0, 20)
    ev = decode(json.dumps(lc.event("mma_tma", 4096, 4096, 4096, "cublas_fp16_bt", mine, ref,
                                    20, 1.0, "2025.3")))
    assert type(ev).__name__ == "LaunchClocks" and ev.complete and ev.reason is None
    assert ev.cycles_ratio == pytest.approx((179.8 * 1569) / (271.3 * 1701))
    half = decode(json.dumps(lc.event("mma_tma", 64, 64, 64, "cublas_fp16_bt", mine,
                                      lc.Side(reason="ncu ran past 180 s"), 20, 1.0, None)))
    assert not half.complete and half.cycles_ratio is None
    assert "reference: ncu ran past 180 s" in half.reason


def test_the_step_measures_a_shared_reference_once(monkeypatch):
    measured: list[str] = []

    def fake_measure(exe, level_id, M, N, K, launches, timeout_s=0.0):
        measured.append(level_id)
        return lc.Side(f"{level_id}_kernel", 100.0, 1600.0 if "cublas" in level_id else 1700.0,
                       launches)

    monkeypatch.setattr(lc, "measure", fake_measure)
    monkeypatch.setattr(lc.ncu, "find_ncu", lambda exe: "/usr/bin/ncu-standin")
    monkeypatch.setattr(lc.ncu, "tool_version", lambda exe: "2099.1")
    err = io.StringIO()
    step = lc.LaunchClocksStep(["wmma", "mma_sync"], "ncu", (256, 256, 256), 5, 10.0, err)
    events: list[dict] = []
    step(lambda: 1.0, events.append)
    clocks = [e for e in events if e["type"] == "launch_clocks"]
    assert [c["level"] for c in clocks] == ["wmma", "mma_sync"]
    assert measured == ["wmma", "cublas_fp16", "mma_sync"]  # cuBLAS FP16 once
    assert all(c["ref_mhz"] == 1600.0 and c["level_mhz"] == 1700.0 and c["launches"] == 5
               and c["tool_version"] == "2099.1" for c in clocks)
    assert step.recorded == ["wmma", "mma_sync"] and "2 level(s)" in step.summary()


def test_the_levels_asked_are_ladder_levels_with_a_reference():
    assert "naive" in lc.clock_levels(["all"]) and "cublas_fp16" not in lc.clock_levels(["all"])
    with pytest.raises(ValueError, match="cublas_fp16: not a ladder level"):
        lc.clock_levels(["cublas_fp16"])


@pytest.mark.parametrize("flags, said", [
    (["--launch-clocks-size", "1024"], "pass --launch-clocks LEVELS too"),
    (["--launch-clocks", "no_such_level"], "no_such_level: not a ladder level"),
])
def test_the_record_command_refuses_launch_clock_options_it_cannot_use(tmp_path, flags, said):
    err = io.StringIO()
    out = tmp_path / "rec.jsonl"
    code = cli.main(["record", "-o", str(out), "-l", "wmma", *flags], stdout=io.StringIO(),
                    stderr=err)
    assert code == 2 and said in err.getvalue() and not out.exists()
