"""A session file holds each build once: a build event written again (by a restarted
runner, or by a session appended to the file, as the bundled recording's parts are) that
says the same as one already in the file, but for its time and run id, is left out; a
build that differs in anything else is written."""

from __future__ import annotations

import json

from gemmscope.kernels.protocol.recording import read_session
from gemmscope.kernels.protocol.session_file import SessionWriter

HEADER = {"type": "session", "t": 0.0, "protocol": 4, "created": "x", "levels": {}}


def build(run_id: str, t: float, code_key: str = "c0ffee", sass: str = "FFMA R0, R1;"):
    return {"type": "build", "t": t, "id": run_id, "level": "naive", "variant": "scalar",
            "kernel": "sgemm_naive<32, true>", "code_key": code_key, "regs": 40,
            "sass": sass, "sources": {"kernels/cuda/naive.cu": "// the source"}}


def line(event: dict) -> str:
    return json.dumps(event, separators=(",", ":"))


def builds_on_disk(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()
            if json.loads(x)["type"] == "build"]


def test_a_build_written_again_in_the_same_file_is_left_out(tmp_path):
    path = tmp_path / "s.jsonl"
    writer = SessionWriter(path)
    writer.write_line(line(HEADER))
    writer.write_line(line(build("run-1", 1.0)))
    writer.write_line(line(build("run-7", 9.0)))  # a restart's copy
    writer.close()
    assert [b["id"] for b in builds_on_disk(path)] == ["run-1"]
    assert writer.skipped_builds == 1 and writer.lines == 2


def test_a_session_appended_to_a_file_writes_none_of_its_builds_again(tmp_path):
    path = tmp_path / "s.jsonl"
    first = SessionWriter(path)
    for event in (HEADER, build("run-1", 1.0)):
        first.write_line(line(event))
    first.close()
    again = SessionWriter(path)  # record --append continues the file
    for event in ({**HEADER, "t": 0.0}, build("run-30", 2.0),
                  build("run-31", 3.0, code_key="other")):
        again.write_line(line(event))
    again.close()
    assert [b["code_key"] for b in builds_on_disk(path)] == ["c0ffee", "other"]
    session = read_session(path)  # and the file reads as a recording
    assert session.skipped_count == 0


def test_builds_that_differ_in_what_they_say_are_all_written(tmp_path):
    path = tmp_path / "s.jsonl"
    writer = SessionWriter(path)
    writer.write_line(line(HEADER))
    writer.write_line(line(build("run-1", 1.0)))
    writer.write_line(line(build("run-1", 1.5, sass="FFMA R0, R2;")))
    writer.write_line(line({**build("run-1", 1.6), "variant": "vec"}))
    writer.close()
    assert len(builds_on_disk(path)) == 3 and writer.skipped_builds == 0


def test_an_unreadable_build_line_is_written_as_it_came(tmp_path):
    path = tmp_path / "s.jsonl"
    writer = SessionWriter(path)
    writer.write_line(line(HEADER))
    writer.write_line('{"type":"build", cut')
    writer.write_line('{"type":"build", cut')
    writer.close()
    assert path.read_text().count('{"type":"build", cut') == 2
