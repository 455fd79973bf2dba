"""benchmarks/reference_spread.py --parts: each timed launch split into its kernels and
the gaps between them, from the profiler's kernel list (no GPU), on made-up timelines."""

from __future__ import annotations

import benchmark_script
import pytest

FLUSH = "cupy_fill_float32"
HOLD = "gemmscope_hold"


@pytest.fixture(scope="module")
def rs():
    return benchmark_script.load("reference_spread")


def test_a_launch_is_the_kernels_after_its_hold_up_to_the_next_flush(rs):
    kernels = [  # two timed launches of a memset and a GEMM, out of order as CUPTI may list
        (130.0, 230.0, "nvjet_sm90_gemm"), (0.0, 20.0, FLUSH), (20.5, 25.0, HOLD),
        (27.0, 28.0, "Memset (Device)"), (300.0, 320.0, FLUSH), (320.5, 330.0, HOLD),
        (331.0, 332.0, "Memset (Device)"), (334.0, 434.5, "nvjet_sm90_gemm"),
        (29.5, 129.0, "nvjet_sm90_gemm_other"),
    ]
    launches = rs.split_launches(kernels, FLUSH)
    assert launches[0] == [("gap", 2.0), ("Memset (Device)", 1.0), ("gap", 1.5),
                           ("nvjet_sm90_gemm_other", 99.5), ("gap", 1.0),
                           ("nvjet_sm90_gemm", 100.0)]
    assert launches[1] == [("gap", 1.0), ("Memset (Device)", 1.0), ("gap", 2.0),
                           ("nvjet_sm90_gemm", 100.5)]
    assert len(launches) == 2


def test_a_hold_with_no_kernel_after_it_is_not_a_launch(rs):
    kernels = [(0.0, 10.0, FLUSH), (10.0, 12.0, HOLD), (20.0, 30.0, FLUSH),
               (30.0, 31.0, HOLD), (33.0, 133.0, "fp8gemm_deep")]
    assert rs.split_launches(kernels, FLUSH) == [[("gap", 2.0), ("fp8gemm_deep", 100.0)]]


def test_the_summary_gives_medians_by_position_and_the_whole_span(rs):
    launches = [[("gap", g), ("Memset (Device)", 1.0), ("gap", 2.0), ("nvjet_x<int>(a)", k)]
                for g, k in ((1.0, 100.0), (3.0, 104.0), (2.0, 101.0))]
    summary = rs.parts_summary(launches)
    assert summary == {"gap 1": 2.0, "memset": 1.0, "gap 2": 2.0, "nvjet_x": 101.0,
                       "span": 106.0}
