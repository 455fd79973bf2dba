"""Every file a user names is read one way (kernels/files/reading.py): a regular file only
(a device or FIFO refused at once, never read or waited on), bounded in bytes and in
nesting before it is parsed, and a refusal is one line naming the file; a kernel source
must lie inside its spec's folder. Each class is tried with several values and every
reader of that kind of file (spec, source, talk, recording, preferences, report, the GPU
table)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import synthetic_session

from gemmscope.app.core import ncu_report
from gemmscope.app.core.preferences_file import PreferencesFile
from gemmscope.app.core.talk import TalkError, read_talk
from gemmscope.kernels.files import reading
from gemmscope.kernels.files.reading import MAX_BYTES, MAX_DEPTH, FileRefused, Kind
from gemmscope.kernels.hardware import gpu_table
from gemmscope.kernels.ladder.kernel_spec import SpecError
from gemmscope.kernels.ladder.source_check import MAX_SOURCE_BYTES
from gemmscope.kernels.ladder.spec_file import MAX_SPEC_BYTES, load_spec, read_source
from gemmscope.kernels.protocol.events import ProtocolError
from gemmscope.kernels.protocol.recording import read_session

SPEC = """
[kernel]
id = "mine"
name = "my_gemm"
source = "mine.cu"
precision = "fp32"

[params]
BM = 64

[launch]
block = ["BM"]
grid = ["ceil_div(N, BM)", "ceil_div(M, BM)"]
"""
SOURCE = "template <int BM, bool VEC>\n__global__ void my_gemm() {}\n"
TALK = '[[scene]]\nview = "charts"\n'


def one_line(text: str) -> bool:
    return bool(text) and "\n" not in text and "Traceback" not in text and len(text) < 600


# ------------------------------------------------------------------ the readers
def _spec(path: Path) -> str:
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    return str(caught.value)


def _talk(path: Path) -> str:
    with pytest.raises(TalkError) as caught:
        read_talk(path, ["charts"], [], ["naive"])
    return str(caught.value)


def _recording(path: Path) -> str:
    with pytest.raises(ProtocolError) as caught:
        read_session(path)
    return str(caught.value)


def _preferences(path: Path) -> str:
    prefs = PreferencesFile(path)
    assert not prefs.writable  # a file it could not read is never written over
    assert prefs.text("runner/command", "default") == "default"
    assert len(prefs.notes) == 1
    return prefs.notes[0]


def _report(path: Path) -> str:
    with pytest.raises(ncu_report.ReportError) as caught:
        ncu_report.checked_path(path, module="json")  # any module: refused before it
    return str(caught.value)


READERS: dict[str, tuple[str, Callable[[Path], str]]] = {
    "spec": ("k.toml", _spec), "talk": ("t.toml", _talk),
    "recording": ("r.jsonl", _recording), "recording.gz": ("r.jsonl.gz", _recording),
    "preferences": ("p.conf", _preferences), "report": ("x.ncu-rep", _report)}


def _special(tmp_path: Path, what: str, name: str) -> Path:
    path = tmp_path / name
    if what == "fifo":
        os.mkfifo(path)
    elif what == "folder":
        path.mkdir()
    else:  # a symlink to a device
        path.symlink_to(what)
    return path


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("what", ["/dev/zero", "/dev/urandom", "/dev/null", "fifo",
                                  "folder"])
def test_a_device_fifo_or_folder_is_refused_in_a_line_not_read(tmp_path, reader, what):
    if what.startswith("/dev/") and not os.path.exists(what):
        pytest.skip(f"no {what} here")
    name, read = READERS[reader]
    path = _special(tmp_path, what, name)
    message = read(path)  # /dev/zero read whole took 2 GB and a MemoryError; a FIFO hung
    assert one_line(message), message
    assert "regular file" in message or "cannot" in message, message


@pytest.mark.parametrize("what", ["/dev/zero", "fifo", "folder"])
def test_a_kernel_source_that_is_a_device_or_fifo_is_refused(tmp_path, what):
    (tmp_path / "k.toml").write_text(SPEC)
    spec = load_spec(tmp_path / "k.toml")
    source = tmp_path / "mine.cu"
    if what == "fifo":
        os.mkfifo(source)
    elif what == "folder":
        source.mkdir()
    else:  # a device linked from inside the folder: refused as leading out, or as a device
        source.symlink_to(what)
    with pytest.raises(SpecError) as caught:
        read_source(spec)
    assert one_line(str(caught.value))


# ------------------------------------------------------------------ bytes
@pytest.mark.parametrize("extra", [1, 1000, 1 << 20])
def test_a_file_over_its_kinds_limit_is_refused_before_it_is_parsed(tmp_path, extra):
    for kind, name, read in ((Kind.SPEC, "k.toml", _spec), (Kind.TALK, "t.toml", _talk),
                             (Kind.PREFERENCES, "p.conf", _preferences)):
        path = tmp_path / name
        path.write_bytes(b"#" * (MAX_BYTES[kind] + extra))
        message = read(path)
        assert one_line(message), message
        assert f"{MAX_BYTES[kind]:,}" in message or f"{MAX_BYTES[kind] >> 20} MiB" in message
    (tmp_path / "k.toml").write_text(SPEC)
    spec = load_spec(tmp_path / "k.toml")
    (tmp_path / "mine.cu").write_text("//" * (MAX_BYTES[Kind.SOURCE] + extra))
    with pytest.raises(SpecError, match=f"{MAX_BYTES[Kind.SOURCE]:,}"):
        read_source(spec)


def test_the_limits_are_stated_once():
    assert MAX_SPEC_BYTES == MAX_BYTES[Kind.SPEC]
    assert MAX_SOURCE_BYTES == MAX_BYTES[Kind.SOURCE]  # (the runner's check, the same)
    assert ncu_report.MAX_REPORT_BYTES == MAX_BYTES[Kind.REPORT]
    assert set(MAX_BYTES) == set(Kind)


# ------------------------------------------------------------------ nesting
def _deep(depth: int, form: str) -> str:
    if form == "arrays":
        return "x = " + "[" * depth + "]" * depth + "\n"
    if form == "tables":
        return "x = " + "{a = " * depth + "1" + "}" * depth + "\n"
    return "x = " + "[{a = " * (depth // 2) + "1" + "}]" * (depth // 2) + "\n"


@pytest.mark.parametrize("depth", [MAX_DEPTH + 2, 1000, 15_000, 100_000])
@pytest.mark.parametrize("form", ["arrays", "tables", "mixed"])
def test_a_spec_or_talk_nested_deep_is_refused_in_a_line(tmp_path, depth, form):
    text = _deep(depth, form)
    for name, read, kind in (("k.toml", _spec, Kind.SPEC), ("t.toml", _talk, Kind.TALK)):
        path = tmp_path / name
        path.write_text(text)
        message = read(path)
        assert one_line(message), message
        big = len(text.encode()) > MAX_BYTES[kind]
        assert ("nested too deeply" in message) != big or "bytes" in message, message


def test_brackets_in_strings_and_comments_are_not_nesting(tmp_path):
    deep = "[" * (3 * MAX_DEPTH)
    text = (f'# {deep}\ntitle = "{deep}"\n[[scene]]\nview = "charts"\n'
            f"caption = '{deep}'\n")
    talk = tmp_path / "t.toml"
    talk.write_text(text)
    assert read_talk(talk, ["charts"], [], ["naive"]).title == deep
    multi = f'title = """\n{deep}\n"""\n' + f"x = '''{deep}'''\n"
    assert reading.nesting(multi) == 0
    assert reading.nesting("x = " + "[" * 40 + "]" * 40) == 40
    assert reading.nesting("[[scene]]\n" * 50) == 2


# ------------------------------------------------------------------ where a source lies
def _spec_in(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.toml").write_text(SPEC)
    return folder / "k.toml"


@pytest.mark.parametrize("target", ["../secret.cu", "../../elsewhere/secret.cu",
                                    "/etc/hostname", "sub/../../secret.cu"])
def test_a_source_linked_from_outside_the_specs_folder_is_refused(tmp_path, target):
    spec_path = _spec_in(tmp_path / "a" / "spec")
    for outside in (tmp_path / "a" / "secret.cu", tmp_path / "elsewhere" / "secret.cu"):
        outside.parent.mkdir(parents=True, exist_ok=True)
        outside.write_text(SOURCE)
    (spec_path.parent / "sub").mkdir()
    (spec_path.parent / "mine.cu").symlink_to(target)
    with pytest.raises(SpecError) as caught:
        read_source(load_spec(spec_path))
    message = str(caught.value)
    assert one_line(message) and "out of the spec's folder" in message, message


def test_a_source_inside_the_folder_is_read_through_links_that_stay_inside(tmp_path):
    real = tmp_path / "real"
    spec_path = _spec_in(real)
    (real / "versions").mkdir()
    (real / "versions" / "v2.cu").write_text(SOURCE)
    (real / "mine.cu").symlink_to("versions/v2.cu")  # a link that stays inside
    assert read_source(load_spec(spec_path)) == SOURCE
    linked = tmp_path / "linked"  # the folder itself reached through a link
    linked.symlink_to(real, target_is_directory=True)
    assert read_source(load_spec(linked / "k.toml")) == SOURCE


# ------------------------------------------------------------------ the GPU table
DAMAGED = ["[[gpu]]\nkey = ", "[[gpu]]\nkey = 'x'\n", "gpu = 3\n", "gpu = [1, 2]\n",
           "\xff\xfe", "x = " + "[" * 20_000 + "]" * 20_000,
           "[[gpu]]\nkey='x'\nnames=['X']\narch='sm_90'\nsource='s'\npeaks={fp32='fast'}\n",
           "[[gpu]]\nkey='x'\nnames=['X']\narch='sm_90'\nsource='s'\npeaks={warp=1.0}\n"]


@pytest.fixture
def table_at(tmp_path, monkeypatch):
    """gpu_table reads its file from ``tmp_path`` (as if the installed one were there)."""
    monkeypatch.setattr(gpu_table.resources, "files", lambda _pkg: tmp_path)
    gpu_table._loaded.cache_clear()
    yield tmp_path / "gpu_table.toml"
    gpu_table._loaded.cache_clear()


@pytest.mark.parametrize("text", DAMAGED)
def test_a_damaged_gpu_table_is_one_line_and_no_table(table_at, text):
    table_at.write_bytes(text.encode("utf-8", "surrogateescape") if text != "\xff\xfe"
                         else b"\xff\xfe")
    assert gpu_table.table() == ()
    assert gpu_table.lookup("NVIDIA H200") is None
    why = gpu_table.problem()
    assert why is not None and one_line(why) and "GPU table" in why
    # a GPU then gets what it says of itself: the FP32 peak computed, no crash
    assert gpu_table.spec_for("NVIDIA H200", 132, 1980.0, "sm_90").peak("fp32")


def test_a_gpu_table_that_is_a_device_is_refused(table_at):
    table_at.symlink_to("/dev/zero")
    assert gpu_table.table() == () and "regular file" in str(gpu_table.problem())


def test_the_roofline_says_the_table_is_damaged_and_draws_without_it(table_at):
    from gemmscope.app.core.roofline_data import roofline_data
    from gemmscope.app.core.store import SessionStore
    from gemmscope.kernels.protocol.decoding import decode
    from gemmscope.kernels.protocol.events import dumps

    table_at.write_text("[[gpu]]\nkey = \n")
    store = SessionStore()
    for i, ev in enumerate(synthetic_session.events(), 1):
        store.handle(decode(dumps(ev), i))
    data = roofline_data(store)
    assert any("GPU table is damaged" in n for n in data.notes)
    assert data.points


def test_the_installed_gpu_table_reads():
    gpu_table._loaded.cache_clear()
    assert gpu_table.table() and gpu_table.problem() is None


def test_reading_a_file_said_plainly(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text("a = 1\n")
    assert reading.read_toml(path, Kind.TALK) == {"a": 1}
    with pytest.raises(FileRefused, match="cannot read"):
        reading.read_bytes(tmp_path / "missing", Kind.TALK)
    shutil.rmtree(tmp_path)


# ------------------------------------------------------------------ the nesting count
def _toml_value(draw_value) -> str:  # a value as TOML writes it (arrays, ints, strings)
    if isinstance(draw_value, list):
        return "[" + ", ".join(_toml_value(v) for v in draw_value) + "]"
    if isinstance(draw_value, str):
        return '"' + draw_value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(draw_value)


def _depth(value) -> int:
    return 1 + max((_depth(v) for v in value), default=0) if isinstance(value, list) else 0


try:
    from hypothesis import given
    from hypothesis import strategies as st
except ImportError:  # the GPU machine has no hypothesis
    pass
else:
    _leaf = st.integers(-5, 5) | st.text(alphabet="[]{}#'\"ab =\\", max_size=8)

    @given(st.recursive(_leaf, lambda inner: st.lists(inner, max_size=3), max_leaves=60),
           st.integers(0, 60))
    def test_the_count_is_the_depth_a_parser_finds(value, wrap):
        for _ in range(wrap):  # deeper than the bound, some of them
            value = [value]
        text = f"x = {_toml_value(value)}\n# a comment [[[[\n"
        depth = _depth(value)
        if depth > MAX_DEPTH:
            assert reading.nesting(text) == depth
            with pytest.raises(FileRefused, match="nested too deeply"):
                reading.loads_toml(text, "v.toml")
        else:
            assert reading.nesting(text) <= MAX_DEPTH
            assert reading.loads_toml(text, "v.toml")["x"] == value
