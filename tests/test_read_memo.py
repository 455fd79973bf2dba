"""tests/support/read_memo.py: a bundled recording read once per test process is what a
fresh read gives, a changed one is caught at the next reuse, and every other file is read
afresh (the tests below use the small two-GPU recording, copied under a folder of the
bundled recordings' name)."""

from __future__ import annotations

import os
import shutil
from collections import OrderedDict
from pathlib import Path

import places
import pytest
import read_memo

from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.records import Build
from gemmscope.kernels.protocol.run_records import Result

SMALL = places.REPO / "resources" / "sessions" / "h200x2-ladder.jsonl.gz"


@pytest.fixture(autouse=True)
def own_memo(monkeypatch):
    """These tests keep their sessions apart from the process's (whose bundled reading
    later tests reuse)."""
    monkeypatch.setattr(read_memo, "_kept", OrderedDict())


@pytest.fixture
def bundled_copy(tmp_path) -> Path:
    folder = tmp_path / "resources" / "sessions"
    folder.mkdir(parents=True)
    return Path(shutil.copy(SMALL, folder / "copy.jsonl.gz"))


def test_a_kept_reading_is_the_same_session_and_what_a_fresh_read_gives(bundled_copy):
    first = read_memo.read_session(bundled_copy)
    again = read_memo.read_session(bundled_copy)
    assert again.events is first.events  # kept, not read again
    fresh = read_memo.ORIGINAL(bundled_copy)
    assert fresh.events is not first.events
    assert read_memo.fingerprint(again) == read_memo.fingerprint(fresh)
    assert len(again.results) == len(fresh.results) > 0


def test_a_kept_reading_says_the_path_it_was_asked_for(bundled_copy, monkeypatch):
    read_memo.read_session(bundled_copy)
    monkeypatch.chdir(bundled_copy.parent)
    assert read_memo.read_session(bundled_copy.name).path == bundled_copy.name


def test_a_changed_record_fails_the_next_reader_and_names_where_it_was_read(bundled_copy):
    session = read_memo.read_session(bundled_copy)
    result = session.results[0]
    result.tflops = (result.tflops or 0.0) + 1.0
    with pytest.raises(read_memo.Changed, match="changed by a test") as caught:
        read_memo.read_session(bundled_copy)
    assert "test_a_changed_record_fails_the_next_reader" in str(caught.value)
    # and the next read is a fresh one, the file's own numbers again
    assert read_memo.read_session(bundled_copy).results[0].tflops == result.tflops - 1.0


def test_changed_telemetry_columns_fail_the_next_reader(bundled_copy):
    session = read_memo.read_session(bundled_copy)
    cols = next(iter(session.telemetry.values()))
    cols.values[0, 0] += 1.0
    with pytest.raises(read_memo.Changed):
        read_memo.read_session(bundled_copy)


def test_a_rewritten_file_is_read_afresh(bundled_copy):
    first = read_memo.read_session(bundled_copy)
    st = bundled_copy.stat()
    os.utime(bundled_copy, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert read_memo.read_session(bundled_copy).events is not first.events


def test_files_elsewhere_are_read_every_time(tmp_path):
    other = Path(shutil.copy(SMALL, tmp_path / "copy.jsonl.gz"))
    assert read_memo.read_session(other).events is not read_memo.read_session(other).events


def test_only_is_part_of_the_key_and_a_kept_read_still_ends_its_progress(bundled_copy):
    builds = read_memo.read_session(bundled_copy, only=(Build,))
    assert not any(isinstance(e, Result) for e in builds.events)
    assert read_memo.read_session(bundled_copy).results  # not the Build-only reading
    heard: list[float] = []
    read_memo.read_session(bundled_copy, progress=heard.append, only=(Build,))
    assert heard == [1.0]


def test_the_apps_and_the_gpu_sides_readers_read_through_the_memo():
    from gemmscope.app import gallery
    from gemmscope.app.sources import replay
    from gemmscope.app.window import baseline, sources
    from gemmscope.kernels import protocol

    read_memo.patch_imported()
    for module in (gallery, replay, baseline, sources, protocol, recording):
        assert module.read_session is read_memo.read_session, module.__name__
