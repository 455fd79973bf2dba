"""What counts as throttled is decided once (kernels/protocol/throttle.py): the runner's summary of
a run, the ladder's mark, the run band and the reason strip of the telemetry view agree."""

from __future__ import annotations

from gemmscope.app.core.store import SessionStore
from gemmscope.app.core.telemetry import RunEnd
from gemmscope.kernels.device import telemetry
from gemmscope.kernels.device.telemetry import Sampler
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.throttle import (
    NOT_A_SLOWDOWN,
    THROTTLE_MARK,
    is_slowdown,
    slowdowns,
)
from gemmscope.kernels.results.number_texts import NOT_THROTTLED
from gemmscope.kernels.results.rows import Column

SET_CLOCKS = ["ApplicationsClocksSetting", "SyncBoost", "DisplayClockSetting", "GpuIdle"]


def test_slowdowns_keep_the_reasons_that_hold_clocks_back_once_in_order():
    assert slowdowns(None) == () and slowdowns([]) == ()
    assert slowdowns(SET_CLOCKS) == ()
    assert slowdowns(["GpuIdle", "HwSlowdown", "SwPowerCap", "HwSlowdown", "SyncBoost"]) == \
        ("HwSlowdown", "SwPowerCap")
    assert slowdowns(["0x1000"]) == ("0x1000",)  # an unknown bit may be one: shown
    assert all(not is_slowdown(r) for r in NOT_A_SLOWDOWN) and is_slowdown("SwPowerCap")


def _run(store: SessionStore, run_id: str, level: str, t0: float, reasons: list[str],
         throttled: list[str]) -> None:
    where = {"id": run_id, "level": level, "M": 64, "N": 64, "K": 64}
    store.handle(of({"type": "run_start", "t": t0, **where, "repeats": 2}))
    for i in range(3):
        store.handle(of({"type": "telemetry", "t": t0 + 0.1 + 0.1 * i, "sm_clock_mhz": 1500,
                      "reasons": reasons}))
    store.handle(of({"type": "result", "t": t0 + 0.5, **where, "dtype": "fp32",
                  "precision": "fp32", "median_ms": 1.0, "tflops": 1.0, "verified": True,
                  "rel_err": 0.0, "repeats": 2, "throttled": throttled,
                  "sm_clock_mhz_avg": 1500.0}))


def test_one_rule_for_the_ladder_mark_the_run_band_and_the_reason_strip():
    store = SessionStore()
    # a runner of another make (or an older file) that listed clocks set by the user and
    # idle time as throttling: neither counts, here or anywhere
    _run(store, "a", "naive", 1.0, SET_CLOCKS, SET_CLOCKS)
    _run(store, "b", "coalesced", 2.0, ["SwPowerCap", "GpuIdle"], ["SwPowerCap", "GpuIdle"])
    quiet, capped = store.latest("naive"), store.latest("coalesced")
    assert quiet.throttled == () and capped.throttled == ("SwPowerCap",)
    assert store.row(quiet).texts()[Column.THROTTLED] == NOT_THROTTLED
    assert store.row(capped).texts()[Column.THROTTLED] == f"{THROTTLE_MARK} SwPowerCap"
    assert store.row(quiet).throttle_note() == ""
    assert "SwPowerCap" in store.row(capped).throttle_note()
    bands = {w.level: w for w in store.run_windows() if w.end is RunEnd.RESULT}
    assert bands["naive"].throttled == () and bands["coalesced"].throttled == ("SwPowerCap",)
    # the strip draws the slowdowns only; the others are counted for the status line
    assert list(store.telemetry.reason_bits) == ["SwPowerCap"]
    assert store.telemetry.other_reasons_seen == dict.fromkeys(SET_CLOCKS, 3) | {"GpuIdle": 6}
    assert len(store.telemetry.reason_intervals("SwPowerCap")) == 1


class _Reasons:
    """NVML that reports the given reasons with every sample."""

    available = True

    def __init__(self, reasons: list[str]):
        self.reasons = reasons

    def sample(self):
        return {**dict.fromkeys(telemetry.FIELDS), "reasons": self.reasons}


def test_the_runner_summarises_a_run_by_the_same_rule():
    for reasons, want in ((SET_CLOCKS, []), (["GpuIdle", "SwThermalSlowdown"],
                                             ["SwThermalSlowdown"])):
        times = iter([1.0, 2.0])
        sampler = Sampler(_Reasons(reasons), None, lambda times=times: next(times))
        sampler.sample_now()
        sampler.sample_now()
        assert sampler.window(0.0, 3.0).throttled == want == list(slowdowns(reasons))


def test_the_telemetry_view_lists_what_it_does_not_count(show_telemetry, tmp_path):
    from gemmscope.kernels.protocol.events import PROTOCOL_VERSION, dumps

    events = [{"type": "session", "t": 0.0, "protocol": PROTOCOL_VERSION, "created": "now",
               "levels": {}},
              {"type": "telemetry", "t": 1.0, "sm_clock_mhz": 1500,
               "reasons": ["ApplicationsClocksSetting"]},
              {"type": "telemetry", "t": 1.1, "sm_clock_mhz": 1400, "reasons": ["SwPowerCap"]}]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(dumps(e) + "\n" for e in events), encoding="utf-8")
    _, view = show_telemetry(path)
    assert view.reason_rows == ["SwPowerCap"]
    assert "clocks held back by: SwPowerCap (1 sample)" in view.status.text()
    assert "not counted: ApplicationsClocksSetting (1 sample)" in view.status.text()
