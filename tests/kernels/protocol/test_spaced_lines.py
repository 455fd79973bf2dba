"""A recording written with Python's json.dumps (spaces after ':' and ','), as a tool that
makes or converts one may write it, reads as the runner's compact lines do: the same
events, its NVML samples decoded together in blocks rather than one line at a time (a test
that wrote the bundled recording that way read it three times slower)."""

from __future__ import annotations

import json

import numpy as np
import synthetic_session as syn

from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.events import dumps
from gemmscope.kernels.protocol.telemetry_columns import TelemetryBlock


def written(tmp_path, name, line_of) -> recording.Session:
    path = tmp_path / name
    path.write_text("".join(line_of(e) + "\n" for e in syn.events()), encoding="utf-8")
    return recording.read_session(path)


def test_spaced_lines_read_as_the_compact_ones_and_their_samples_in_blocks(tmp_path,
                                                                          monkeypatch):
    compact = written(tmp_path, "compact.jsonl", dumps)
    one_by_one = []
    real = recording.decode
    monkeypatch.setattr(recording, "decode",
                        lambda raw, *a, **k: one_by_one.append(raw) or real(raw, *a, **k))
    spaced = written(tmp_path, "spaced.jsonl", json.dumps)
    samples = sum(e["type"] == "telemetry" for e in syn.events())
    assert samples > 100
    assert not [raw for raw in one_by_one if b'"telemetry"' in raw[:30]]
    assert len(one_by_one) == len(syn.events()) - samples
    kinds = [type(e).__name__ for e in spaced.events]
    assert kinds == [type(e).__name__ for e in compact.events]
    assert "TelemetryBlock" in kinds
    for a, b in zip(spaced.events, compact.events, strict=True):
        if isinstance(a, TelemetryBlock):
            assert (a.start, a.stop) == (b.start, b.stop)
    for device, cols in compact.telemetry.items():
        np.testing.assert_array_equal(spaced.telemetry[device].t, cols.t)
        np.testing.assert_array_equal(spaced.telemetry[device].values, cols.values)
