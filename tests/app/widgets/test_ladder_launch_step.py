"""The ladder's TFLOPS cell says where a burst's launches changed speed mid-burst (the
result's launch_step), beside the throttle note, and nothing where they did not."""

from __future__ import annotations

import pytest

from gemmscope.app.core.store import SessionStore
from gemmscope.app.widgets.ladder_panel import THROTTLE_COLOR, LadderPanel
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.results.rows import Column

HEADER = {"type": "session", "t": 0.0, "protocol": 4, "created": "x", "levels": {},
          "device": {"name": "NVIDIA H200", "sm_clock_max_mhz": 1980.0}}
STEP = {"at": 14, "launches": 20, "before_ms": 3.30, "after_ms": 3.67, "change_pct": 11.2}


def result(level, step=None, throttled=None):
    ev = {"type": "result", "t": 1.0, "level": level, "M": 8192, "N": 8192, "K": 8192,
          "dtype": "fp16", "precision": "fp16", "median_ms": 3.3, "tflops": 333.0,
          "verified": True, "rel_err": 1e-3, "repeats": 20, "sm_clock_mhz_avg": 1980.0,
          "launch_step": step}
    if throttled is not None:
        ev["throttled"] = throttled
    return ev


@pytest.fixture
def panel(qtbot):
    store = SessionStore()
    for ev in (HEADER, result("wmma", STEP), result("mma_sync"),
               result("wgmma_tma", STEP, ["SwPowerCap"])):
        store.handle(of(ev))
    p = LadderPanel()
    qtbot.addWidget(p)
    p.resize(1600, 500)
    p.bind(store)
    p.refresh(store.take_changes())
    return p


def test_a_stepped_burst_says_where_and_which_side_its_median_is_in_the_tflops_tooltip(panel):
    tip = panel.cell("wmma", Column.TFLOPS).toolTip()
    assert "launches 15–20 ran 11.2% slower than 1–14: the median is of 1–14" in tip


def test_a_steady_burst_has_no_step_in_its_tooltip(panel):
    assert "slower" not in panel.cell("mma_sync", Column.TFLOPS).toolTip()


def test_the_step_stands_beside_the_throttle_note_and_only_throttling_marks_orange(panel):
    tip = panel.cell("wgmma_tma", Column.TFLOPS).toolTip()
    assert "SwPowerCap" in tip and "launches 15–20 ran 11.2% slower" in tip
    assert panel.cell("wgmma_tma", Column.TFLOPS).foreground().color() == THROTTLE_COLOR
    assert panel.cell("wmma", Column.TFLOPS).foreground().color() != THROTTLE_COLOR
