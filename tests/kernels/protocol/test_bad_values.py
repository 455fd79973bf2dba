"""Bad values get one line, never a traceback: session times that are absurd or add up
past the bound are refused as the line's own problem; numbers that overflow are shown as
what they are, in cells of bounded width, and the window keeps its size; a talk nested
40,000 deep is refused in a line; a full disk names the file that holds what was kept.
(Addresses: tests/kernels/drive/test_cluster_address.py.)"""

from __future__ import annotations

import io
import json
import math
import sys
from pathlib import Path

import places
import pytest
import synthetic_session
from hypothesis import given
from hypothesis import strategies as st

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol import records as rec
from gemmscope.kernels.protocol.decoding import decode, of
from gemmscope.kernels.protocol.events import MAX_SESSION_S, ProtocolError
from gemmscope.kernels.protocol.timeline import Timeline
from gemmscope.kernels.results.rows import Result, rows_of

FAKE = places.FAKE_RUNNER
numbers = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                    st.integers(min_value=-(10**30), max_value=10**30),
                    st.sampled_from([1e300, -1e300, 1e-300, 5e-324, 1.7976931348623157e308,
                                     2**63, -(2**63), 0.0, -0.0]))


def one_line(text: str) -> bool:
    return "\n" not in text.strip() and "Traceback" not in text


@given(numbers)
def test_a_time_is_a_session_time_or_the_line_is_refused(t):
    line = json.dumps({"type": "info", "t": t, "message": "x"})
    try:
        event = decode(line, 7, "f.jsonl")
    except ProtocolError as exc:
        assert abs(t) > MAX_SESSION_S and one_line(str(exc)) and "f.jsonl:7" in str(exc)
    else:
        assert math.isfinite(event.t) and abs(event.t) <= MAX_SESSION_S


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e400", "1e300"])
def test_non_finite_or_absurd_times_in_json_are_refused(raw):
    with pytest.raises(ProtocolError):
        decode('{"type": "info", "t": ' + raw + ', "message": "x"}')


@given(st.lists(st.floats(min_value=-MAX_SESSION_S, max_value=MAX_SESSION_S), min_size=1,
                max_size=30))
def test_restarts_never_carry_the_axis_past_its_bound(times):
    def header(t: float) -> rec.Session:
        return rec.Session(t=t, protocol=4, created="", levels={})

    timeline = Timeline()
    timeline.place(header(0.0))
    for t in times:
        for event in (header(t), rec.Info(t=t, message="x")):
            try:
                placed = timeline.place(event)
            except ProtocolError as exc:
                assert one_line(str(exc))
            else:
                assert abs(placed.t) <= MAX_SESSION_S


@given(st.dictionaries(st.sampled_from(["tflops", "median_ms", "rel_err", "pct_of_peak",
                                        "pct_of_reference", "reference_tflops", "energy_j",
                                        "gflop_per_j", "avg_power_w", "sm_clock_mhz_avg",
                                        "tol", "t"]), numbers))
def test_every_number_is_a_short_cell(fields):
    event = {"type": "result", "t": 1.0, "level": "naive", "M": 16, "N": 16, "K": 16,
             "dtype": "fp32", "precision": "fp32", "median_ms": 1.0, "tflops": 1.0,
             "verified": True, "rel_err": 0.0, "repeats": 3, **fields}
    try:
        result = of(event)
    except ProtocolError:  # only a time off the session's axis is refused
        assert abs(fields["t"]) > MAX_SESSION_S
        return
    assert isinstance(result, Result)
    for row in rows_of([result]):
        for column, text in row.texts().items():
            assert len(text) <= 40, (column, text)


def extreme_recording(path: Path) -> Path:
    """The synthetic session with every measured number at 1e300, a last event at the
    time bound, and lines whose times are absurd or not finite."""
    out = []
    for ev in synthetic_session.with_sustained():
        ev = dict(ev)
        for key, value in list(ev.items()):
            if key != "t" and isinstance(value, float):  # every measured number
                ev[key] = 1e300
        out.append(ev)
    out[-1]["t"] = MAX_SESSION_S
    lines = [json.dumps(e) for e in out]
    lines += ['{"type": "info", "t": 1e300, "message": "far"}',
              '{"type": "info", "t": NaN, "message": "nan"}',
              '{"type": "telemetry", "t": 1e400, "power_w": 1}',
              # a restart that puts the next runner's events past the bound
              json.dumps({"type": "session", "t": -MAX_SESSION_S, "protocol": 2,
                          "created": "", "levels": {}, "device": None}),
              '{"type": "info", "t": 10, "message": "after the bound"}']
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_window_shows_absurd_numbers_as_such_and_keeps_its_size(make_window, tmp_path,
                                                                    qtbot):
    path = extreme_recording(tmp_path / "extreme.jsonl")
    session = recording.read_session(path)
    assert session.skipped_count == 4 and "extreme.jsonl:" in session.problem
    window = make_window()
    window.resize(1280, 720)
    assert window.open_recording(path)
    window.play_instant()
    window.show()
    qtbot.waitExposed(window)
    for i in range(window.tabs.count()):  # every view drawn (a traceback fails the test)
        window.tabs.setCurrentIndex(i)
        window.flush_views()
        qtbot.wait(1)
    assert window.width() <= 1400 and window.height() <= 800
    assert "1.000e+300" in window.ladder.cell_text("naive", "TFLOPS")
    assert len(window.replay_bar.position.text()) < 40
    assert any("extreme.jsonl:" in t for t in window.messages.texts())


def test_a_talk_nested_forty_thousand_deep_is_refused_in_a_line(tmp_path):
    from gemmscope.app.core.talk import TalkError, read_talk

    for text in ("x = " + "[" * 40_000 + "]" * 40_000,
                 "x = " + "{a = " * 40_000 + "}" * 40_000):
        path = tmp_path / "deep.toml"
        path.write_text(text)
        with pytest.raises(TalkError, match="nested too deeply") as caught:
            read_talk(path, ["charts"], [], ["naive"])
        assert one_line(str(caught.value))


def test_a_recording_nested_deep_is_a_bad_line_not_a_crash(tmp_path):
    path = tmp_path / "deep.jsonl"
    lines = synthetic_session.events()[:3]
    text = "\n".join(json.dumps(e) for e in lines) + "\n" + "[" * 100_000 + "\n"
    path.write_text(text)
    session = recording.read_session(path)
    assert session.skipped_count == 1 and "nested deeper" in session.problem


# ------------------------------------------------------------------ a full disk
class FullAfter:
    """A file whose writes fail with ENOSPC after ``lines`` of them."""

    def __init__(self, fh, lines: int):
        self.fh, self.left = fh, lines

    def write(self, text: str) -> int:
        if self.left <= 0:
            raise OSError(28, "No space left on device")
        self.left -= 1
        return self.fh.write(text)

    def __getattr__(self, name):
        return getattr(self.fh, name)


@pytest.mark.parametrize("lines, kept", [(8, True), (1, False)])
def test_a_full_disk_names_the_file_that_holds_what_was_kept(tmp_path, monkeypatch,
                                                            lines, kept):
    from gemmscope.kernels.protocol import session_file

    made = session_file.SessionWriter.__init__

    def full_disk(self, path):
        made(self, path)
        self._fh = FullAfter(self._fh, lines)

    monkeypatch.setattr(session_file.SessionWriter, "__init__", full_disk)
    out, err = io.StringIO(), io.StringIO()
    target = tmp_path / "r.jsonl"
    code = cli.main(["record", "-o", str(target), "--runner", f"{sys.executable} {FAKE}",
                     "-l", "naive,coalesced,smem_tiled", "-s", "16", "-r", "3",
                     "--no-compare", "--telemetry-hz", "0"], out, err)
    said = err.getvalue()
    assert code == 1 and "Traceback" not in said
    assert "No space left on device" in said and not target.exists()
    hidden = [p for p in tmp_path.iterdir() if p.name.startswith(".r.")]
    if kept:  # the hidden file holds the runs measured before the disk filled
        assert len(hidden) == 1 and str(hidden[0]) in said
        assert recording.read_session(hidden[0]).results
    else:
        assert hidden == [] and "nothing was measured" in said
