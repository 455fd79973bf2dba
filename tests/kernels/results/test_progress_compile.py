"""The CLI's progress line while a level compiles, and how its result says it was built
(kernels/results/progress.py; issue 40 item 3)."""

from __future__ import annotations

import io

from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.results.progress import Progress

RESULT = {"type": "result", "t": 2.0, "id": "r", "level": "wgmma_tma", "M": 2048, "N": 2048,
          "K": 2048, "dtype": "bf16", "median_ms": 0.025, "tflops": 687.0, "verified": True,
          "rel_err": 1e-3, "repeats": 20}


def shown_for(*events: dict) -> list[str]:
    progress = Progress(io.StringIO(), 3)
    shown: list[str] = []
    progress.show = lambda text, final=False: shown.append(text)
    for ev in events:
        progress.event(of(ev))
    return shown


def test_the_line_says_a_level_compiles():
    assert shown_for({"type": "phase", "t": 1.0, "id": "r", "level": "wgmma_tma", "M": 2048,
                      "N": 2048, "K": 2048, "mode": "burst", "phase": "compile",
                      "trial": 0}) == ["wgmma_tma 2048x2048x2048  compiling ..."]


def test_a_result_says_whether_its_build_came_from_the_cache():
    built, cached, neither = shown_for(
        {**RESULT, "compile_s": 41.23, "compile_cached": False},
        {**RESULT, "compile_s": 0.031, "compile_cached": True}, RESULT)
    assert built.endswith("verified; built in 41.2 s")
    assert cached.endswith("verified; from the build cache (0.03 s)")
    assert neither.endswith("verified")


def test_the_count_is_of_runs_asked_for_and_never_passes_the_total():
    """A paired level's reference starts a run of its own under the level's id: the
    line counted it as a run asked for and said "[10/8]" after 8 runs with references."""
    stream = io.StringIO()
    progress = Progress(stream, 2)
    sink = progress.sink([])
    for run_id, level in (("a", "wmma"), ("b", "wgmma_tma")):
        for lv in (level, "cublas_fp16"):  # the level's start, then its reference's
            sink(of({"type": "run_start", "t": 1.0, "id": run_id, "level": lv, "M": 256,
                     "N": 256, "K": 256, "mode": "burst", "repeats": 20}))
        assert progress.index == (1 if run_id == "a" else 2)
    progress.show("done", final=True)
    assert stream.getvalue().startswith("[2/2] ")
