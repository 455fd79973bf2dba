"""A ladder bar's hover readout says where the burst's launches changed speed mid-burst
(the result's launch_step) and which side its median is of; nothing where they did not."""

from __future__ import annotations

from gemmscope.app.core.store import SessionStore
from gemmscope.app.plots.ladder_bar_rows import hover_text
from gemmscope.app.views.chart_rows import bar_rows
from gemmscope.kernels.protocol.decoding import of

HEADER = {"type": "session", "t": 0.0, "protocol": 4, "created": "x", "levels": {},
          "device": {"name": "NVIDIA H200", "sm_clock_max_mhz": 1980.0}}


def result(level, step):
    return {"type": "result", "t": 1.0, "level": level, "M": 8192, "N": 8192, "K": 8192,
            "dtype": "fp16", "precision": "fp16", "median_ms": 3.75, "tflops": 293.1,
            "verified": True, "rel_err": 1e-3, "repeats": 20, "launch_step": step}


def test_the_hover_of_a_stepped_burst_says_where_its_launches_slowed():
    store = SessionStore()
    step = {"at": 4, "launches": 20, "before_ms": 3.405, "after_ms": 3.8, "change_pct": 11.6}
    for ev in (HEADER, result("wmma", step), result("mma_sync", None)):
        store.handle(of(ev))
    hovers = {row.level: hover_text(row) for row in bar_rows(store)}
    assert hovers["wmma"].endswith(
        "\nlaunches 5–20 ran 11.6% slower than 1–4: the median is of 5–20")
    assert "slower" not in hovers["mma_sync"] and "median" not in hovers["mma_sync"]
