"""File ▸ Previous results as baseline: a recording continued by ``record --update`` shows,
for each run it measured again, the newest result beside the one before it (the baseline
view's "before / after" within one file); a recording with no run measured again has no
previous results."""

from __future__ import annotations

from gemmscope.app.core.baseline_run import PREVIOUS, baseline_cell, previous_of
from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol.decoding import of

HEADER = {"type": "session", "t": 0.0, "protocol": protocol.PROTOCOL_VERSION,
          "created": "2026-12-02T00:00:00+00:00", "levels": {},
          "device": {"name": "Test GPU", "arch": "sm_90", "sm_count": 132}}


def result(t: float, level: str, tflops: float) -> dict:
    return {"type": "result", "t": t, "level": level, "M": 4096, "N": 4096, "K": 4096,
            "dtype": "fp32", "precision": "fp32", "median_ms": 1.0, "tflops": tflops,
            "verified": True, "rel_err": 1e-7, "repeats": 5, "code_key": f"{level}{t:g}",
            "compiler": "NVRTC 13.0 through CuPy 14.2.0"}


def store_of(events: list[dict]) -> SessionStore:
    store = SessionStore()
    for e in events:
        store.handle(of(e))
    return store


def test_the_previous_result_of_a_run_measured_again_is_its_baseline():
    store = store_of([HEADER, result(1.0, "naive", 1.0), result(2.0, "coalesced", 4.0),
                      {**HEADER, "t": 0.5}, result(1.0, "naive", 1.1)])
    base = previous_of(store)
    assert base is not None and base.path == PREVIOUS
    assert [(r.level, r.tflops) for r in base.store.results] == [("naive", 1.0)]
    store.set_baseline(base)
    assert store.ladder_shape() == Shape(4096, 4096, 4096)
    assert store.ladder_result("naive").tflops == 1.1  # the newest, shown
    assert baseline_cell(store, "naive") == "1 (+10.0%)"  # before, and the change
    assert baseline_cell(store, "coalesced") == "–"  # measured once: no before


def test_a_recording_with_no_run_measured_again_has_no_previous_results():
    assert previous_of(store_of([HEADER, result(1.0, "naive", 1.0)])) is None
    assert previous_of(SessionStore()) is None
