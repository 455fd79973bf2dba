"""Issue 41 item 4: a ratio measured in pairs is shown with its 95% interval ("97.3% ±0.4")
wherever the row model is rendered; a ratio without one says "unpaired" in its notes; the
clock-normalised figures (TFLOPS per GHz held, the ratio at equal clocks) are right."""

from __future__ import annotations

import math

import msgspec
import pytest

from gemmscope.kernels.protocol.records import LaunchClocks, Result
from gemmscope.kernels.results.rows import DASH, UNPAIRED, Column, Row, pct_interval_text
from gemmscope.kernels.results.table import PER_CLOCK_COLUMNS, render


def result(level: str = "wgmma_tma", tflops: float = 760.0, clock: float | None = 1800.0,
           **more) -> Result:
    fields = {"type": "result", "t": 1.0, "id": "r", "level": level, "M": 8192, "N": 8192,
              "K": 8192, "dtype": "bf16", "median_ms": 1.4, "tflops": tflops,
              "verified": True, "rel_err": 1e-3, "repeats": 20, "precision": "bf16",
              "sm_clock_mhz_avg": clock, **more}
    return msgspec.convert(fields, Result)


PAIRED = {"reference": "cublas_bf16", "reference_tflops": 781.0, "pct_of_reference": 97.3,
          "reference_sm_clock_mhz_avg": 1750.0, "paired": True, "pairs": 40,
          "stop_reason": "precision", "pct_ci_low": 96.9, "pct_ci_high": 97.7,
          "throttle_rule": "clock under 95% of the pair's highest", "throttled_pairs": 3,
          "pct_of_reference_unthrottled": 97.8, "budget_s_per_pair": 0.05,
          "target_half_width_pct": 0.5, "pct_estimator": "hodges-lehmann"}
UNPAIRED_FIELDS = {"reference": "cublas_bf16", "reference_tflops": 781.0,
                   "pct_of_reference": 97.3, "reference_sm_clock_mhz_avg": 1750.0}


def test_the_paired_fields_decode_and_old_results_have_none():
    r = result(**PAIRED)
    assert (r.paired, r.pairs, r.stop_reason, r.throttled_pairs) == (True, 40, "precision", 3)
    assert (r.pct_ci_low, r.pct_ci_high, r.pct_of_reference_unthrottled) == (96.9, 97.7, 97.8)
    assert (r.budget_s_per_pair, r.target_half_width_pct) == (0.05, 0.5)
    assert r.pct_estimator == "hodges-lehmann"
    old = result(**UNPAIRED_FIELDS)
    assert old.paired is None and old.pct_ci_low is None and old.pairs is None
    # a paired result from before the estimator was named: its ratio is the plain median
    assert result(**{k: v for k, v in PAIRED.items() if k != "pct_estimator"}).pct_estimator \
        is None


def test_a_paired_ratio_shows_plus_minus_and_its_throttled_pairs():
    row = Row.of(result(**PAIRED))
    texts = row.texts()
    assert texts[Column.PCT_OF_REFERENCE] == "97.3% ±0.4"
    assert (texts[Column.PCT_CI_LOW], texts[Column.PCT_CI_HIGH]) == ("96.90%", "97.70%")
    assert texts[Column.PAIRS] == "40"
    small = Row.of(result(**{**PAIRED, "pct_of_reference": 0.6, "pct_ci_low": 0.5976,
                             "pct_ci_high": 0.6036})).texts()
    assert (small[Column.PCT_CI_LOW], small[Column.PCT_CI_HIGH]) == ("0.5976%", "0.6036%")
    assert "3 of 40 pairs throttled; 97.8% without them" in texts[Column.NOTES]
    assert UNPAIRED not in texts[Column.NOTES]
    assert "97.3% ±0.4 of cublas_bf16 (95% interval over 40 pairs)" in row.summary()


def test_a_skewed_interval_shows_the_farther_end():
    # half-width: the larger distance of the ends from the median, never the mean of the two
    assert pct_interval_text(97.3, 97.1, 98.2) == "97.3% ±0.9"
    assert pct_interval_text(97.3, None, None) == "97.3%"
    # a narrow interval of a small ratio is not shown as exact
    assert pct_interval_text(0.6, 0.598, 0.603) == "0.6% ±0.003"
    assert pct_interval_text(50.0, 49.9, 50.0) == "50.0% ±0.1"
    assert pct_interval_text(None, 1.0, 2.0) == DASH


def test_an_unpaired_ratio_says_so_once_in_its_notes():
    row = Row.of(result(**UNPAIRED_FIELDS))
    texts = row.texts()
    assert texts[Column.PCT_OF_REFERENCE] == "97.3%"
    assert texts[Column.PCT_CI_LOW] == texts[Column.PCT_CI_HIGH] == texts[Column.PAIRS] == DASH
    assert texts[Column.NOTES].split("; ").count(UNPAIRED) == 1
    assert "pairs throttled" not in texts[Column.NOTES]


def test_a_reference_or_a_run_without_a_ratio_has_no_unpaired_note():
    row = Row.of(result("cublas_bf16", 781.0))
    assert row.pct_of_reference is None and UNPAIRED not in row.texts()[Column.NOTES]
    ref = result("cublas_bf16", 781.0)
    itself = Row.of(ref, reference=ref)  # a reference's 100% of itself (the ladder's)
    assert itself.pct_of_reference == 100.0 and not itself.unpaired


def test_no_throttled_pairs_no_note():
    row = Row.of(result(**{**PAIRED, "throttled_pairs": 0}))
    assert "throttled" not in row.texts()[Column.NOTES]


def test_clock_normalised_numbers_for_known_inputs():
    # 760 TFLOPS at 1800 MHz: 422.2 TFLOPS/GHz; cuBLAS 781 at 1750 MHz: 446.3 TFLOPS/GHz;
    # at equal clocks 422.2 / 446.3 = 94.6%
    row = Row.of(result(**PAIRED))
    assert row.tflops_per_ghz == pytest.approx(760.0 / 1.8)
    assert row.pct_equal_clocks == pytest.approx(100 * (760.0 / 1.8) / (781.0 / 1.75))
    low, high = row.pct_equal_clocks_interval
    scale = row.pct_equal_clocks / 97.3
    assert (low, high) == (pytest.approx(96.9 * scale), pytest.approx(97.7 * scale))
    texts = row.texts()
    assert texts[Column.TFLOPS_PER_GHZ] == "422.2"
    assert texts[Column.PCT_EQUAL_CLOCKS] == "94.6% ±0.4"


def test_clock_normalised_needs_both_clocks():
    no_ref_clock = Row.of(result(**{**UNPAIRED_FIELDS, "reference_sm_clock_mhz_avg": None}))
    assert no_ref_clock.tflops_per_ghz is not None and no_ref_clock.pct_equal_clocks is None
    assert no_ref_clock.texts()[Column.PCT_EQUAL_CLOCKS] == DASH
    no_clock = Row.of(result(clock=None, **UNPAIRED_FIELDS))
    assert no_clock.tflops_per_ghz is None and no_clock.pct_equal_clocks is None
    assert no_clock.texts()[Column.TFLOPS_PER_GHZ] == DASH
    # the session's reference result gives its TFLOPS and clock (an older result)
    ref = result("cublas_bf16", 800.0, 1600.0)
    row = Row.of(result(tflops=720.0, clock=1800.0), reference=ref)
    assert row.pct_equal_clocks == pytest.approx(100 * (720 / 1.8) / (800 / 1.6))
    assert math.isfinite(row.pct_equal_clocks)


def test_the_report_table_shows_plus_minus_and_per_clock_on_request():
    rows = [result("cublas_bf16", 781.0, 1750.0), result(**PAIRED)]
    plain = render(rows)
    assert "97.3% ±0.4" in plain and "TFLOPS/GHz" not in plain
    per_clock = render(rows, per_clock=True)
    assert all(c in per_clock for c in PER_CLOCK_COLUMNS)
    assert "422.2" in per_clock and "94.6% ±0.4" in per_clock
    md = render(rows, markdown=True, per_clock=True)
    assert "| 97.3% ±0.4 |" in md and "| 94.6% ±0.4 |" in md


def test_report_per_clock_on_the_command_line(tmp_path):
    import io

    import synthetic_session as syn

    from gemmscope.kernels.cli.report import main

    path = syn.write(tmp_path / "paired.jsonl", syn.with_pairs())
    out, err = io.StringIO(), io.StringIO()
    assert main([str(path), "--per-clock"], out, err) == 0, err.getvalue()
    text = out.getvalue()
    assert "TFLOPS/GHz" in text and "% of cuBLAS at equal clocks" in text
    assert "42.9% ±0.6" in text  # wmma: 300 of 700 TFLOPS, its invented interval
    old = syn.write(tmp_path / "old.jsonl")
    out = io.StringIO()
    assert main([str(old)], out, io.StringIO()) == 0
    assert "TFLOPS/GHz" not in out.getvalue() and UNPAIRED in out.getvalue()


def test_a_paired_run_with_too_few_pairs_is_not_called_unpaired():
    """A paired sustained run of 2 trials has no 95% interval (6 pairs are needed), but it
    was timed in pairs: its note says so, not "unpaired" (the update of 2026-12-02 said
    "unpaired" of every paired sustained result)."""
    from gemmscope.kernels.protocol.decoding import of
    from gemmscope.kernels.results.rows import Row

    result = of({"type": "result", "t": 1.0, "level": "wmma", "M": 4096, "N": 4096,
                 "K": 4096, "dtype": "fp16", "mode": "sustained", "median_ms": 0.47,
                 "tflops": 294.4, "verified": True, "rel_err": 5e-6, "repeats": 2,
                 "reference": "cublas_fp16", "reference_tflops": 654.1,
                 "pct_of_reference": 45.0, "paired": True, "pairs": 2})
    row = Row.of(result, None, None)
    assert not row.unpaired and row.too_few_pairs
    assert row.pairs_note() == "paired, 2 pairs: too few for an interval"


def clocks(level: str = "wgmma_tma", reference: str = "cublas_bf16", level_mhz=1612.0,
           ref_mhz=1617.0, **more) -> LaunchClocks:
    fields = {"type": "launch_clocks", "t": 2.0, "level": level, "M": 8192, "N": 8192,
              "K": 8192, "tool": "ncu", "reference": reference, "launches": 20,
              "level_mhz": level_mhz, "level_us": 1400.0, "ref_mhz": ref_mhz,
              "ref_us": 1360.0, **more}
    return msgspec.convert(fields, LaunchClocks)


def test_the_ratio_at_equal_clocks_takes_the_clocks_inside_the_launches_where_read():
    # NVML held 1800 / 1750 MHz; inside the launches the level ran 1701 MHz, cuBLAS 1569:
    # at equal clocks each side's TFLOPS per GHz inside its launches: the ratio of cycles
    row = Row.of(result(**PAIRED), clocks=clocks(level_mhz=1701.0, ref_mhz=1569.0))
    assert row.in_launch and row.clock_mhz == 1701.0 and row.ref_clock_used_mhz == 1569.0
    assert row.tflops_per_ghz == pytest.approx(760.0 / 1.701)
    assert row.pct_equal_clocks == pytest.approx(100 * (760.0 / 1.701) / (781.0 / 1.569))
    texts = row.texts()
    assert (texts[Column.LAUNCH_CLOCK], texts[Column.REF_LAUNCH_CLOCK]) == ("1701", "1569")
    assert texts[Column.SM_CLOCK] == "1800"  # what NVML said stays in its own column


@pytest.mark.parametrize("other", [
    {"reference": "cublas_fp16"},  # another reference than the ratio's
    {"level": "tf32_wgmma"},  # another level's
    {"ref_mhz": None, "ref_us": None, "reason": "reference: ncu gave no SM clock"},
])
def test_launch_clocks_of_another_pair_or_one_side_are_not_taken(other):
    row = Row.of(result(**PAIRED), clocks=clocks(**other))
    assert not row.in_launch and row.clock_mhz == 1800.0
    assert row.pct_equal_clocks == pytest.approx(100 * (760.0 / 1.8) / (781.0 / 1.75))
    assert row.texts()[Column.LAUNCH_CLOCK] == DASH


def test_the_report_per_clock_uses_the_sessions_launch_clocks():
    rows = [result("cublas_bf16", 781.0, 1750.0), result(**PAIRED)]
    text = render(rows, per_clock=True, clocks=[clocks(level_mhz=1701.0, ref_mhz=1569.0)])
    assert f"{100 * (760 / 1.701) / (781 / 1.569):.1f}%" in text
    assert "1701" in text and "1569" in text
