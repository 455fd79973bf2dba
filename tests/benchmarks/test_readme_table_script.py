"""benchmarks/readme_table.py makes the README's H200 tables from a recording, each cell
the level's newest result there (after ``record --update``: the re-measured run)."""

from __future__ import annotations

import benchmark_script
import places

from gemmscope.kernels.protocol.decoding import of

SCRIPT = benchmark_script.load("readme_table")


def result(t: float, level: str, tflops: float, pct: float | None = None) -> object:
    return of({"type": "result", "t": t, "level": level, "M": 4096, "N": 4096, "K": 4096,
               "dtype": "fp32", "precision": "fp32", "median_ms": 1.0, "tflops": tflops,
               "verified": True, "rel_err": 1e-7, "repeats": 5, "pct_of_reference": pct,
               "reference": "cublas_fp32" if pct else None})


def test_a_cell_shows_the_newest_result_of_its_level_shape_and_mode():
    lines = SCRIPT.tables([result(1.0, "naive", 0.4, 1.0), result(2.0, "coalesced", 5.0),
                           result(3.0, "naive", 0.5, 1.5)], [4096])
    assert lines[0] == "| | naive | coalesced |"
    assert lines[2] == "| burst 4096³ | 0.500 (1.5%) | 5.00 |"  # no clocks: no †


def test_the_readme_holds_the_tables_the_bundled_recording_gives(capsys):
    """The README's H200 tables follow the bundled recording: every row the script makes
    of it is in the README as it is (a re-measured level changes both, or this fails)."""
    assert SCRIPT.main([]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert "| | wmma (FP16) | mma_sync (FP16) |" in "\n".join(rows)
    assert any(r.startswith("| burst 4096³ | ") for r in rows)
    readme = (places.REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert [r for r in rows if r not in readme] == []


def test_launch_clocks_add_a_row_of_the_burst_ratio_at_equal_clocks():
    clocks = of({"type": "launch_clocks", "t": 4.0, "level": "naive", "M": 4096, "N": 4096,
                 "K": 4096, "tool": "ncu", "reference": "cublas_fp32", "launches": 20,
                 "level_mhz": 1800.0, "level_us": 1.0, "ref_mhz": 1980.0, "ref_us": 1.0})
    ref = of({"type": "result", "t": 0.5, "level": "cublas_fp32", "M": 4096, "N": 4096,
              "K": 4096, "dtype": "fp32", "precision": "fp32", "median_ms": 1.0,
              "tflops": 40.0, "verified": True, "rel_err": 1e-7, "repeats": 5})
    lines = SCRIPT.tables([ref, result(1.0, "naive", 0.4, 1.0)], [4096], [clocks])
    # 0.4 TFLOPS at 1.8 GHz against 40 at 1.98 GHz: 1.1% at equal clocks
    assert "| burst 4096³ at equal clocks | (1.1%) |" in lines
    assert not any("equal clocks" in line for line in SCRIPT.tables(
        [ref, result(1.0, "naive", 0.4, 1.0)], [4096]))
