"""Text from outside never reaches a terminal as control or bidi characters, and CSV and
Markdown exports hold it as text (kernels/protocol/text_safety.py, kernels/results/table.py,
app/core/export.py): property-based over any text, then through ``gemmscope report``,
the progress line, the CLI's error line and the app's ``--export`` on a recording whose
every text carries terminal escapes, bidi overrides, Markdown, HTML and a lone
surrogate (tests/support/hostile_text.py). Markdown is checked by parsing it (markdown-it)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import hostile_text
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gemmscope.app.core import export
from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.text_safety import clean_text, markdown_text, terminal_text
from gemmscope.kernels.results.progress import Progress

markdown_it = pytest.importorskip("markdown_it")

TAIL = hostile_text.TERMINAL + hostile_text.MD + hostile_text.MARKUP + "\udcff"
# any text, lone surrogates and every kind of control, format and bidi character included
any_text = st.text(st.characters(codec=None), max_size=300) | st.lists(st.sampled_from(
    ["\x1b[2J", "\x1b]0;t\x07", "\r", "\n", "\t", "\u202e", "\u2066", "\u200b", "\ufeff",
     "\udcff", "\x00", "\x9b", "\u2028", "<b>", "](x)", "![a](b)", "|", "`", "*", "_", "#",
     "&amp;", "www.x.org", "http://x", "a@b.c", "1.", "-", "\\", "é", "中"]),
    max_size=20).map("".join)


def printable_lines(text: str) -> bool:
    return all(line.isprintable() for line in text.split("\n"))


def write_recording(path, events) -> None:
    """Events as JSON lines, every non-ASCII character escaped (a lone surrogate is
    valid JSON, not UTF-8)."""
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="ascii")


@pytest.fixture
def hostile_file(tmp_path):
    path = tmp_path / "hostile.jsonl"
    write_recording(path, hostile_text.poisoned_events(TAIL))
    session = recording.read_session(path)
    assert session.problem is None and session.results
    return path


# ------------------------------------------------------------------ the helpers
@given(any_text)
def test_terminal_text_writes_nothing_a_terminal_obeys(text):
    out = terminal_text(text)
    assert out.isprintable()
    out.encode("utf-8")  # no lone surrogate left (UnicodeEncodeError otherwise)
    assert printable_lines(terminal_text(text, keep_newlines=True))
    if text.isprintable():
        assert out == text  # what is safe is shown as it is


@given(any_text)
def test_clean_text_is_one_printable_line(text):
    out = clean_text(text)
    assert out.isprintable()
    out.encode("utf-8")


def inline_text(md: str) -> str | None:
    """The text of one line of Markdown as a reader sees it; None if it made anything
    but text (a link, an image, HTML, code, emphasis)."""
    tokens = markdown_it.MarkdownIt("commonmark").enable("strikethrough").parseInline(md)
    children = tokens[0].children or []
    if any(t.type not in ("text", "text_special") for t in children):
        return None
    return "".join(t.content for t in children)


@given(any_text)
def test_markdown_text_renders_as_the_text_itself(text):
    md = markdown_text(text)
    assert "\n" not in md
    assert inline_text(md) == " ".join(clean_text(text).split())


# ------------------------------------------------------------------ terminal
def test_report_of_a_hostile_recording_is_safe_on_a_terminal(hostile_file):
    for markdown in ([], ["--markdown"]):
        out, err = io.StringIO(), io.StringIO()
        cli.main(["report", str(hostile_file), *markdown], out, err)
        assert hostile_text.WORD in out.getvalue()
        assert printable_lines(out.getvalue()) and printable_lines(err.getvalue())


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream", [io.StringIO, Tty])
def test_the_progress_line_never_passes_a_runners_control_characters(stream):
    out = stream()
    progress = Progress(out, 2)
    sink = progress.sink([])
    for ev in hostile_text.poison([
            {"type": "run_start", "t": 1, "id": "r", "level": "naive", "M": 1, "N": 1, "K": 1,
             "repeats": 1},
            {"type": "error", "t": 2, "kind": "runner_crash", "level": "naive",
             "message": "the runner said", "host": "h", "device": 0},
            {"type": "info", "t": 3, "message": "note"}], TAIL):
        sink(of(ev))
    text = out.getvalue().replace("\r\x1b[2K", "")  # the line rewritten: ours alone
    assert printable_lines(text) and hostile_text.WORD in text


def test_the_cli_error_line_is_one_safe_line(tmp_path):
    err = io.StringIO()
    code = cli.main(["record", "-o", str(tmp_path / "r.jsonl"), "-l", "x\x1b[2J\u202e\ny"],
                    io.StringIO(), err)
    assert code == 2 and err.getvalue().count("\n") == 1
    assert printable_lines(err.getvalue())


def test_the_bench_table_of_hostile_results_keeps_its_columns():
    from gemmscope.kernels.results.table import render

    results = [of(e) for e in hostile_text.poisoned_events(TAIL) if e["type"] == "result"]
    lines = render(results).split("\n")
    assert printable_lines("\n".join(lines)) and hostile_text.WORD in lines[2]
    assert len({len(line) for line in lines[:2]}) == 1  # header and rule the same width


# ------------------------------------------------------------------ exports
@pytest.fixture
def hostile_store(hostile_file) -> SessionStore:
    store = SessionStore()
    for ev in recording.read_session(hostile_file).events:
        store.handle(ev)
    return store


def test_csv_of_a_hostile_recording_holds_plain_cells(hostile_store, tmp_path):
    text = export.results_csv(hostile_store)
    rows = list(csv.reader(io.StringIO(text)))
    assert len({len(r) for r in rows}) == 1 and len(rows) == 1 + len(hostile_store.results)
    assert all(cell.isprintable() for row in rows for cell in row)
    assert any(hostile_text.WORD in cell for row in rows for cell in row)
    path = export.write_export(tmp_path / "out.csv", text)
    assert path.read_bytes().decode("utf-8")  # a lone surrogate broke this (UnicodeError)


def walk(tokens):
    for t in tokens:
        yield t
        yield from walk(t.children or [])


def test_the_markdown_report_takes_no_markup_from_a_recording(hostile_store):
    title = "Per-repeat TFLOPS — wmma" + TAIL
    md = export.ladder_markdown(hostile_store, "x" + TAIL + ".jsonl",
                                [(title, "report-" + TAIL + ".png")])
    assert printable_lines(md) and hostile_text.WORD in md
    parser = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
    tokens = list(walk(parser.parse(md)))
    kinds = {t.type for t in tokens}
    assert not kinds & {"html_inline", "html_block", "link_open", "code_block", "fence",
                        "em_open", "strong_open", "s_open"}
    assert [t.tag for t in tokens if t.type == "heading_open"] == ["h1", "h2", "h2"]
    images = [t for t in tokens if t.type == "image"]
    assert len(images) == 1 and images[0].attrs["src"].startswith("report-")
    assert "".join(c.content for c in images[0].children) == clean_text(title).strip()
    rows = [t for t in tokens if t.type == "tr_open"]
    row_cells, count = [], 0
    for t in tokens:
        if t.type in ("td_open", "th_open"):
            count += 1
        elif t.type == "tr_close":
            row_cells.append(count)
            count = 0
    assert len(rows) == len(row_cells) == 1 + len(hostile_store.levels)
    assert len(set(row_cells)) == 1  # no cell of the recording's own


def test_the_apps_exports_of_a_hostile_recording_succeed(hostile_file, tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    for name in ("out.csv", "out.md"):
        done = subprocess.run([sys.executable, "-m", "gemmscope.app.main", "replay",
                               str(hostile_file), "--export", str(tmp_path / name),
                               "--settings", str(tmp_path / "p.ini")],
                              capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        assert printable_lines(done.stdout) and printable_lines(done.stderr)
        assert (tmp_path / name).read_bytes().decode("utf-8")


@given(folder=st.text(min_size=0, max_size=400),
       name=st.text(st.characters(categories=("L", "N")), min_size=1, max_size=30))
def test_a_long_path_is_cut_in_the_middle_and_keeps_its_file_name(folder, name):
    # (any folder, hostile characters too; a plain file name shorter than the kept tail)
    from gemmscope.kernels.protocol.text_safety import shown_path, terminal_text

    path = f"/{folder}/{name}"
    said = shown_path(path, 80)
    assert said.startswith("'") and terminal_text(name) in said  # which file, always
    assert "\n" not in said and len(said) <= 80 + len(str(len(path))) + 20
    if len(terminal_text(path)) <= 80:
        assert said == f"'{terminal_text(path)}'"
