"""Issue 46 item 5 over the bundled recording: every trace measured on the H200 agrees with
its level's model (a persistent level's tiles per block and SM, stream-K's fix-ups), and
verified. The traces come from `gemmscope record --append --profile-only --trace ...`."""

from __future__ import annotations

import places
import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import trace_check, trace_schedule
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol import records as rec
from gemmscope.kernels.protocol.trace_records import Trace


def _traces() -> list[Trace]:
    session = recording.read_session(places.SESSIONS / "h200-ladder.jsonl.gz",
                                     only=(rec.Session, Trace))
    return [e for e in session.events if isinstance(e, Trace) and not e.synthetic]


TRACES = _traces()
needs_traces = pytest.mark.skipif(not TRACES, reason="the bundled recording holds no trace "
                                  "yet (record them on the H200: record --trace)")


@needs_traces
@pytest.mark.parametrize("trace", TRACES, ids=lambda t: f"{t.level}-{t.M}x{t.N}x{t.K}")
def test_bundled_trace_agrees_with_its_model(trace):
    """Against the model of the parameters the trace ran with: a recording keeps the traces
    of a level's earlier forms after `record --update` adds its new form's."""
    level = registry.get(trace.level)
    model = trace_schedule.schedule(level, trace.M, trace.N, trace.K, trace.sm_count or 132,
                                    trace.params)
    assert trace.verified and trace.full_lanes == 0 and trace.lost_blocks == 0
    if model.persistent:
        assert trace_check.check_persistent(trace, model) == []
    if model.stream_k:
        assert trace_check.check_stream_k(trace, model) == []
    if not model.persistent:  # every block recorded, its tile its own index
        assert trace_check.tiles_by_block(trace, 0) == {b: [(b, 0)] for b in range(model.grid)}


@needs_traces
def test_bundled_traces_cover_the_levels_the_issue_names():
    assert {"mma_tma", "wgmma_tma", "wgmma_stream_k", "fp8_deep"} <= {t.level for t in TRACES}
    assert any(registry.get(t.level).precision == "fp32" for t in TRACES)  # a SIMT level
