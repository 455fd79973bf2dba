"""FP8 runs report DeepGEMM's accuracy measure beside the relative error, in the bench
table, the session store and the ladder panel's description of a run."""

from __future__ import annotations

from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.results.rows import Column, Row, resolved, tflops_text

FP8_RESULT = {"type": "result", "t": 3.0, "level": "fp8_block_scaled", "M": 4096, "N": 4096,
              "K": 4096, "dtype": "fp8e4m3", "precision": "fp8", "median_ms": 0.13,
              "tflops": 1057.2, "verified": True, "rel_err": 1.7e-3, "tol": 2e-2,
              "deepgemm_diff": 1.4e-6, "repeats": 20, "reference": "cublaslt_fp8",
              "reference_tflops": 1338.0, "pct_of_reference": 79.0, "peak_tflops": 1979.0,
              "pct_of_peak": 53.4, "variant": "tma"}


def test_bench_table_notes_the_deepgemm_measure_for_fp8_only():
    fp8_row = Row.of(of(FP8_RESULT)).texts()
    assert "DeepGEMM diff 1.4e-06" in fp8_row[Column.NOTES]
    bf16 = {**FP8_RESULT, "level": "wgmma_tma", "precision": "bf16", "dtype": "bf16"}
    assert "DeepGEMM" not in Row.of(of(bf16)).texts()[Column.NOTES]


def test_store_and_panel_keep_the_measure():
    r = resolved(of(FP8_RESULT), "fp8")
    assert r.deepgemm_diff == 1.4e-6
    text = Row.of(r).summary()  # the ladder panel's "Last result"
    assert "DeepGEMM diff 1.4e-06 (limit 1e-03)" in text and "rel. error 1.70e-03" in text
    older = resolved(of({k: v for k, v in FP8_RESULT.items() if k != "deepgemm_diff"}), "fp8")
    assert older.deepgemm_diff is None and "DeepGEMM" not in Row.of(older).summary()


def test_bar_values_stay_readable_past_a_thousand_tflops():
    assert tflops_text(1089.75) == "1090"  # not 1.09e+03
    assert tflops_text(783.02) == "783.0" and tflops_text(0.5012) == "0.5012"
