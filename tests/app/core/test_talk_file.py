"""Talk files: what a scene may say, the errors that name the scene and field, captions
filled from the session, and the shipped ladder talk. No Qt."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest
import synthetic_session as syn

from gemmscope.app.core.replay import Speed
from gemmscope.app.core.store import SessionStore
from gemmscope.app.core.talk import (
    CAPTION_FIELDS,
    MAX_FILE_BYTES,
    Scene,
    TalkError,
    caption_text,
    read_talk,
)
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.results.rows import DASH, pct_text, tflops_text

VIEWS = ["charts", "telemetry", "tiling", "banks", "code"]
ANIMATED = ["tiling", "banks"]
LEVELS = [e["id"] for e in registry.catalog()]
LADDER_TALK = Path(str(resources.files("gemmscope.resources") / "talks" / "ladder.toml"))


def talk_of(tmp_path: Path, text: str, name: str = "t.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_talk(path, VIEWS, ANIMATED, LEVELS)


def refused(tmp_path: Path, text: str) -> str:
    with pytest.raises(TalkError) as info:
        talk_of(tmp_path, text)
    return str(info.value)


def test_a_scene_reads_every_field(tmp_path):
    talk = talk_of(tmp_path, '''
title = "Ladder"
recording = "runs/a.jsonl"
[[scene]]
view = "tiling"
level = "smem_tiled"
shape = "1000x999x1001"
step = 3
speed = "16x"
caption = "{title}: {tflops} TFLOPS"
[[scene]]
view = "charts"
shape = 4096
''')
    assert talk.title == "Ladder"
    assert talk.recording == tmp_path / "runs" / "a.jsonl"  # relative to the talk file
    assert talk.scenes[0] == Scene(view="tiling", caption="{title}: {tflops} TFLOPS",
                                   level="smem_tiled", shape=Shape(1000, 999, 1001),
                                   steps=(3,), speed=Speed.X16)
    assert talk.scenes[1] == Scene(view="charts", shape=Shape(4096, 4096, 4096))


@pytest.mark.parametrize(("scene", "says"), [
    ('view = "charst"', "t.toml: scene 2: view: 'charst' is not a view (views: charts,"),
    ('level = "naive"', "t.toml: scene 2: view: missing"),
    ('view = "charts"\nlevel = "naïve"', "scene 2: level: 'naïve' is not a level"),
    ('view = "charts"\nshape = "4096x7"', "scene 2: shape: '4096x7': give N (a cube) or MxNxK"),
    ('view = "charts"\nshape = "0"', "scene 2: shape: '0': M must be"),
    ('view = "charts"\nshape = true', "scene 2: shape: is a boolean"),
    ('view = "charts"\nshape = [64, 64, 64]', "scene 2: shape: is an array"),
    ('view = "tiling"\nstep = "3"', "scene 2: step: is a string, not an integer"),
    ('view = "tiling"\nstep = 0', "scene 2: step: 0: steps count from 1"),
    ('view = "charts"\nstep = 2', "scene 2: step: the charts view has no animation steps"),
    ('view = "charts"\nspeed = "8x"', "scene 2: speed: '8x' is not a replay speed (speeds: 1x,"),
    ('view = "charts"\ncaption = 3', "scene 2: caption: is an integer, not a string"),
    ('view = "charts"\ncaptoin = "x"', "scene 2: captoin: unknown field (fields: view,"),
    ('view = "charts"\ncaption = "{tflop} TFLOPS"', "scene 2: caption: unknown field {tflop}"),
    ('view = "charts"\ncaption = "{tflops:.1f}"', "caption: {tflops} takes no format"),
    ('view = "charts"\ncaption = "{tflops.real}"', "caption: unknown field {tflops.real}"),
    ('view = "charts"\ncaption = "a } b"', "scene 2: caption: Single '}'"),
    ('view = "charts"\nlevel = "naive"\nat = "for"', "scene 2: at: only a code scene"),
    ('view = "code"\nat = "for"', "scene 2: at: only a code scene with a level"),
    ('view = "code"\nlevel = "naive"\nat = " "', "scene 2: at: give a piece of one source"),
    ('view = "code"\nlevel = "naive"\nat = "a\\nb"', "scene 2: at: give a piece of one"),
    (f'view = "code"\nlevel = "naive"\nat = "{"x" * 121}"', "at: give a piece of one source "
                                                            "line, 1 to 120 characters"),
    ('view = "code"\nlevel = "naive"\nat = 3', "scene 2: at: is an integer, not a string"),
])
def test_a_bad_scene_is_refused_naming_the_scene_and_field(tmp_path, scene, says):
    text = f'[[scene]]\nview = "charts"\n\n[[scene]]\n{scene}\n'
    message = refused(tmp_path, text)
    assert says in message, message


@pytest.mark.parametrize(("text", "says"), [
    ("", "scene: no scenes"),
    ('[[scene]]\nview = "charts"\n[scene', "t.toml: not TOML"),
    ('title = 3\n[[scene]]\nview = "charts"', "t.toml: title: is an integer"),
    ('view = "charts"', "t.toml: view: unknown field"),
    ('scene = "charts"', "t.toml: scene: no scenes"),
    ('scene = [1]', "t.toml: scene 1: is an integer; write it as [[scene]]"),
])
def test_a_bad_file_is_refused_with_a_reason(tmp_path, text, says):
    message = refused(tmp_path, text)
    assert says in message, message


def test_unreadable_and_oversized_files_are_refused(tmp_path):
    with pytest.raises(TalkError, match="cannot read"):
        read_talk(tmp_path / "missing.toml", VIEWS, ANIMATED, LEVELS)
    (tmp_path / "big.toml").write_text("# " + "x" * MAX_FILE_BYTES)
    with pytest.raises(TalkError, match="at most"):
        read_talk(tmp_path / "big.toml", VIEWS, ANIMATED, LEVELS)
    (tmp_path / "bin.toml").write_bytes(b"title = \"\xff\"")
    with pytest.raises(TalkError, match="not UTF-8"):
        read_talk(tmp_path / "bin.toml", VIEWS, ANIMATED, LEVELS)


def _store(events=None) -> SessionStore:
    store = SessionStore()
    for ev in events or syn.events():
        store.handle(of(ev))
    return store


def test_a_caption_quotes_the_sessions_numbers():
    store = _store()
    scene = Scene(view="charts", level="register_2d", shape=Shape(*syn.SHAPE),
                  caption="{title} ({precision}) on {device}: {tflops} TFLOPS at {shape}, "
                          "{pct_ref} of {ref}; {speedup} the TFLOPS of {prev} "
                          "({prev_tflops}); {{braces}}")
    ref = syn.REFERENCE_TFLOPS["cublas_fp32"]
    mine = syn.LADDER_TFLOPS["register_2d"]
    prev = syn.LADDER_TFLOPS["double_buffer"]
    assert caption_text(scene, store) == (
        f"{registry.get('register_2d').title} (FP32) on {store.device_name()}: "
        f"{tflops_text(mine)} TFLOPS at {Shape(*syn.SHAPE)}, {pct_text(100 * mine / ref)} "
        f"of {registry.get('cublas_fp32').title}; {mine / prev:.3g}× the TFLOPS of "
        f"{registry.get('double_buffer').title} ({tflops_text(prev)}); {{braces}}")
    # the sweep's other shapes are other results: the caption follows the scene's shape
    n, tflops = 8192, syn.SWEEP[8192]
    at = Scene(view="charts", level=syn.SWEEP_LEVEL, shape=Shape(n, n, n), caption="{tflops}")
    assert caption_text(at, store) == tflops_text(tflops)


def test_a_caption_without_a_result_shows_a_dash():
    store = _store()
    scene = Scene(view="charts", level="fp8_block_scaled", caption="{tflops} TFLOPS, {prev}")
    assert caption_text(scene, store) == f"{DASH} TFLOPS, {DASH}"
    first = Scene(view="charts", level="naive", caption="{speedup}")
    assert caption_text(first, store) == DASH  # nothing below the first level
    empty = Scene(view="charts", caption="{title} {tflops}")
    assert caption_text(empty, SessionStore()) == f"{DASH} {DASH}"


def test_a_caption_is_the_recordings_text_as_written():
    events = syn.events()
    header = dict(events[0])
    header["catalog"] = [dict(e, title="<b>bold</b>") if e["id"] == "naive" else e
                         for e in header["catalog"]]
    store = _store([header, *events[1:]])
    assert caption_text(Scene(view="charts", level="naive", caption="{title}"),
                        store) == "<b>bold</b>"  # plain text; the caption bar shows it so


def test_the_ladder_talk_walks_the_ladder_on_the_bundled_recording():
    from gemmscope.app.window.talk import load_talk

    talk = load_talk(LADDER_TALK)
    bundled = Path(str(resources.files("gemmscope.resources") / "sessions"
                       / "h200-ladder.jsonl.gz"))
    assert talk.recording is not None and talk.recording.resolve() == bundled.resolve()
    # the ladder the recording carries (levels added since it was made have no numbers
    # in it; a new recording with them asks for their scenes here)
    from gemmscope.app.core.levels import catalog_from_header
    from gemmscope.kernels.protocol.recording import read_session

    header = read_session(talk.recording).header
    ladder = [lv.id for lv in catalog_from_header(header) if not lv.is_reference]
    named = list(dict.fromkeys(s.level for s in talk.scenes if s.level))
    assert named == ladder  # naive to FP8, each level once, in ladder order
    assert ladder[0] == "naive" and ladder[-1] == "fp8_deep"


def test_the_ladder_talks_numbers_all_come_from_the_recording():
    from gemmscope.app.window.talk import load_talk

    for n, scene in enumerate(load_talk(LADDER_TALK).scenes, 1):
        written = re.sub(r"\{\w+\}", "", scene.caption)
        # a digit that starts a number (not FP32, sm_90a): typed in, not measured
        assert not re.search(r"(?<!\w)\d", written), (n, written)
        assert scene.caption, n


def test_every_caption_field_is_filled_for_a_measured_level():
    store = _store()
    for name in CAPTION_FIELDS:
        text = caption_text(Scene(view="charts", level="coalesced", caption=f"{{{name}}}"),
                            store)
        assert text and text != DASH, name


def test_a_code_scene_opens_at_the_first_source_line_holding_its_text(tmp_path):
    from gemmscope.app.core.talk import lines_not_found, source_line

    talk = talk_of(tmp_path, '''
[[scene]]
view = "code"
level = "naive"
at = "acc +="
[[scene]]
view = "code"
level = "naive"
at = "no such text"
[[scene]]
view = "code"
level = "coalesced"
at = "acc"
''')
    assert talk.scenes[0].at == "acc +="
    sources = {"kernels/cuda/naive.cu": "// naive\nfloat acc = 0;\n    acc += a * b;\n",
               "kernels/cuda/common.cuh": "acc += 1;\n"}
    # the level's own file first (as a build lists its sources), 1-based lines
    assert source_line(sources, "acc +=") == ("kernels/cuda/naive.cu", 3)
    assert source_line(sources, "+= 1") == ("kernels/cuda/common.cuh", 1)
    assert source_line(sources, "absent") is None and source_line(None, "acc") is None
    build = {"type": "build", "t": 1.0, "level": "naive", "variant": "scalar",
             "sources": sources}
    # --check: a text on no line, and a level the recording holds no source of
    assert lines_not_found(talk, [of(build)]) == [
        (2, "at 'no such text' is on no line of naive's source"),
        (3, "at 'acc': the recording has no source of coalesced")]
