"""Issue 31 item 3: a ratio to a reference says whether the two ran at the same clock, in
the row model every table, note and export reads (kernels/results/rows.py)."""

from __future__ import annotations

import msgspec

from gemmscope.kernels.protocol.records import Result
from gemmscope.kernels.results.rows import Column, Row


def result(level: str, tflops: float, clock: float | None, **more) -> Result:
    fields = {"type": "result", "t": 1.0, "id": "r", "level": level, "M": 8192, "N": 8192,
              "K": 8192, "dtype": "bf16", "median_ms": 1.4, "tflops": tflops,
              "verified": True, "rel_err": 1e-3, "repeats": 20, "precision": "bf16",
              "sm_clock_mhz_avg": clock, **more}
    return msgspec.convert(fields, Result)


def test_ratio_across_clocks_says_both_clocks():
    # the case: cuBLAS BF16 power-capped at 1650-1815 MHz, wgmma_tma at 1890-1965
    row = Row.of(result("wgmma_tma", 789.4, 1930.0, reference="cublas_bf16",
                        reference_tflops=776.0, pct_of_reference=101.7,
                        reference_sm_clock_mhz_avg=1700.0))
    assert row.clock_comparison() == "at 1930 MHz, reference at 1700 MHz"
    texts = row.texts()
    assert texts[Column.REF_CLOCK] == "1700" and texts[Column.SM_CLOCK] == "1930"
    assert "% of cublas_bf16 at 1930 MHz, reference at 1700 MHz" in texts[Column.NOTES]


def test_ratio_at_one_clock_says_same_and_adds_no_note():
    row = Row.of(result("wgmma_tma", 774.0, 1980.0, reference="cublas_bf16",
                        reference_tflops=770.0, pct_of_reference=100.5,
                        reference_sm_clock_mhz_avg=1965.0))
    assert row.clock_comparison() == "same"
    assert "reference at" not in row.texts()[Column.NOTES]


def test_ratio_from_the_session_reference_takes_its_clock():
    # an older result without the runner's ratio: the percentage and the clock both come
    # from the session's reference result
    ref = result("cublas_bf16", 700.0, 1600.0)
    row = Row.of(result("wgmma_tma", 770.0, 1950.0), reference=ref)
    assert row.pct_of_reference is not None and row.reference_clock_mhz == 1600.0
    assert row.clock_comparison() == "at 1950 MHz, reference at 1600 MHz"


def test_unknown_clock_is_said_and_no_ratio_means_no_comparison():
    row = Row.of(result("wgmma_tma", 770.0, None, reference="cublas_bf16",
                        reference_tflops=700.0, pct_of_reference=110.0,
                        reference_sm_clock_mhz_avg=1600.0))
    assert row.clock_comparison() == "clock of this run unknown"
    assert "clock" not in row.texts()[Column.NOTES]  # the columns show the dash
    assert "% of cublas_bf16: clock of this run unknown" in row.summary()
    # a recording without clocks: the model says so, the notes stay quiet on every row
    old = Row.of(result("wgmma_tma", 770.0, None, reference="cublas_bf16",
                        reference_tflops=700.0, pct_of_reference=110.0))
    assert old.clock_comparison() == "clock of both unknown"
    assert "clock" not in old.texts()[Column.NOTES]
    alone = Row.of(result("cublas_bf16", 700.0, 1600.0))
    assert alone.clock_comparison() is None and alone.texts()[Column.REF_CLOCK] == "–"
