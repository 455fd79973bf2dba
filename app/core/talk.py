"""A talk: scenes read from a small TOML file, checked once, and their captions.

    title = "The SGEMM ladder on an H200"          # optional
    recording = "../sessions/h200-ladder.jsonl.gz"    # optional, relative to this file
    shape = "4096"                                 # optional: the shape the talk shows
                                                   # (default 4096³)

    [[scene]]
    view = "tiling"              # a tab (app/views/registry.VIEWS); required
    level = "smem_tiled"         # a level id of the recording's catalog
    shape = "4096"               # N (a cube) or "MxNxK": this scene's shape instead of
                                 # the talk's (the caption quotes it, the views show it)
    step = 3                     # animation step, 1-based as the playback bar counts;
                                 # or a list, [1, 3, 5]: PageDown walks them, then the
                                 # next scene
    speed = "16x"                # replay speed: 1x, 4x, 16x or instant
    caption = "{title}: {adds} {tflops} TFLOPS, {pct_ref} of {ref}."

A field left out leaves that part of the window as it is. A caption is plain text; its
``{name}`` fields (:data:`CAPTION_FIELDS`) are filled from the whole recording
(:func:`caption_store`), never from what a replay has delivered so far, so a caption is
the same at any paging speed and in a screenshot of its scene; the numbers a talk shows
are the recording's, never typed in (``{{`` and ``}}`` are braces). Levels are named as
the pictures name them (a reference by its title, "cuBLAS FP32 (no TF32)", not
``cublas_fp32``). A file that cannot be used is refused whole with a :class:`TalkError`
naming the scene and the field. No Qt here.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...kernels import protocol as rec
from ...kernels.files import MAX_BYTES, FileRefused, Kind, loads_toml, read_text
from ...kernels.ladder import Shape
from ...kernels.protocol import Mode, parse_shape
from ...kernels.results import (
    DASH,
    Result,
    gflop_per_j_text,
    ms_text,
    pct_text,
    rel_err_text,
    tflops_text,
    verdict_text,
)
from .replay import Speed
from .store import SessionStore
from .view_state import DEFAULT_SHAPE

MAX_FILE_BYTES = MAX_BYTES[Kind.TALK]
MAX_SCENES = 200
MAX_CAPTION_CHARS = 1000  # as written
MAX_SHOWN_CHARS = 1500  # filled in (a level's catalog text may be long)
MAX_STEP = 10_000
MAX_STEPS = 64  # listed in one scene
TOP_FIELDS = ("title", "recording", "shape", "scene")
# what a caption reads: the header (levels, the GPU) and the results, nothing else
# a later header (what `record --update` appends: the levels as its runner describes
# them, read as a Restart) as well as the first, so that a caption says what the
# pictures draw
CAPTION_EVENTS = (rec.Session, rec.Restart, rec.Joined, rec.Result)
SCENE_FIELDS = ("view", "level", "shape", "step", "speed", "at", "caption")
MAX_AT_CHARS = 120  # a code scene's ``at``: a piece of one source line


class TalkError(ValueError):
    """A talk file that cannot be used; the message names the file, scene and field."""


@dataclass(frozen=True, slots=True)
class Scene:
    view: str
    caption: str = ""
    level: str | None = None
    shape: Shape | None = None
    steps: tuple[int, ...] = ()  # 1-based; PageDown walks them in order
    speed: Speed | None = None
    # a code scene: the Code view opens at the first source line holding this text (the
    # line its caption speaks of; a text, not a number, so an edit above it moves nothing)
    at: str | None = None

    @property
    def step(self) -> int | None:
        """The step the scene opens on (1-based), or None."""
        return self.steps[0] if self.steps else None


@dataclass(frozen=True, slots=True)
class Talk:
    path: Path
    title: str
    scenes: tuple[Scene, ...]
    recording: Path | None  # resolved against the talk file's folder
    shape: Shape = DEFAULT_SHAPE  # the shape every scene shows unless it names its own

    def shape_of(self, scene: Scene) -> Shape:
        return scene.shape or self.shape


def caption_store(events: Iterable[object]) -> SessionStore:
    """A store of the whole recording's header and results: what every caption reads,
    whatever the replay has delivered so far (a few hundred results: milliseconds)."""
    store = SessionStore()
    for ev in events:
        if isinstance(ev, CAPTION_EVENTS):
            store.handle(ev)
    return store


# ------------------------------------------------------------------ captions
def _result_fields(store: SessionStore, level_id: str | None, shape: Shape | None
                   ) -> dict[str, str]:
    """The numbers of the level's burst result at ``shape`` (default: the ladder's)."""
    shape = shape or store.ladder_shape()
    result = _result_at(store, level_id, shape) if level_id else None
    if result is None:
        return {}
    row = store.row(result)
    fields = {"shape": str(result.shape), "tflops": tflops_text(result.tflops),
              "median_ms": ms_text(result.median_ms), "pct_ref": pct_text(row.pct_of_reference),
              "ref": _title(store, row.reference) if row.reference else DASH,
              "ref_id": row.reference or DASH, "pct_peak": pct_text(row.pct_of_peak),
              "gflop_per_j": gflop_per_j_text(result.gflop_per_j),
              "rel_err": rel_err_text(result.rel_err), "verified": verdict_text(result.verified)}
    ladder = [lv.id for lv in store.ladder_levels()]
    if level_id in ladder:  # the level below it on the ladder, at the same shape
        for prev_id in reversed(ladder[:ladder.index(level_id)]):
            prev = _result_at(store, prev_id, result.shape)
            if prev is not None and prev.tflops > 0:
                fields.update(prev=_title(store, prev_id), prev_id=prev_id,
                              prev_tflops=tflops_text(prev.tflops),
                              speedup=f"{result.tflops / prev.tflops:.3g}×")
                break
    return fields


def _title(store: SessionStore, level_id: str) -> str:
    """A level as a caption names it: its catalog title (an id the catalog lacks as is)."""
    level = store.level(level_id)
    return level.title if level is not None else level_id


def _result_at(store: SessionStore, level_id: str, shape: Shape | None) -> Result | None:
    if shape is None:
        return None
    return store.result_at(level_id, shape, Mode.BURST)


def _level_fields(store: SessionStore, level_id: str | None) -> dict[str, str]:
    level = store.level(level_id) if level_id else None
    if level is None:
        return {}
    return {"level": level.title, "level_id": level.id, "title": level.title,
            "adds": level.adds, "precision": level.precision.upper()}


def _session_fields(store: SessionStore) -> dict[str, str]:
    device = store.device_name()
    return {"device": device} if device else {}


# name -> what it is (the docs and the error for an unknown name list these)
CAPTION_FIELDS: dict[str, str] = {
    "device": "the recording's GPU",
    "level": "the level's name (its title in the recording's catalog)",
    "level_id": "the level's id", "title": "its title (the recording's catalog)",
    "adds": "what it adds over the level before (the catalog)",
    "precision": "its precision (FP32, FP16, ...)",
    "shape": "the shape of the result quoted", "tflops": "its TFLOPS",
    "median_ms": "its median time per GEMM", "pct_ref": "% of cuBLAS of the same precision",
    "ref": "that reference's name (cuBLAS FP32 (no TF32), ...)", "ref_id": "its id",
    "pct_peak": "% of the precision's datasheet peak",
    "gflop_per_j": "GFLOP per joule", "rel_err": "relative error against float64",
    "verified": "verified or NOT verified",
    "prev": "the name of the ladder level below with a result", "prev_id": "its id",
    "prev_tflops": "that level's TFLOPS", "speedup": "TFLOPS over that level's, as 1.52×",
}
_FILLERS: tuple[Callable[[SessionStore, str | None, Shape | None], dict[str, str]], ...] = (
    lambda store, level, shape: _session_fields(store),
    lambda store, level, shape: _level_fields(store, level), _result_fields)


def caption_text(scene: Scene, store: SessionStore, shape: Shape | None = None) -> str:
    """The scene's caption with its fields filled from ``store`` (a dash where the
    session has no such number), as plain text; the numbers are at the scene's shape,
    else ``shape`` (the talk's), else the store's ladder shape."""
    values: dict[str, str] = {}
    for fill in _FILLERS:
        values.update(fill(store, scene.level, scene.shape or shape))
    out = []
    for literal, name, _spec, _conv in string.Formatter().parse(scene.caption):
        out.append(literal)
        if name is not None:
            out.append(values.get(name, DASH))
    text = "".join(out)
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 1] + "…"


# ------------------------------------------------------------------ reading
def _check_caption(text: str) -> str | None:
    """Why a caption template cannot be used, or None."""
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        return f"{exc} (write {{{{ and }}}} for braces)"
    for _literal, name, spec, conv in parts:
        if name is None:
            continue
        if name not in CAPTION_FIELDS:
            return (f"unknown field {{{name}}} (fields: "
                    f"{', '.join('{' + f + '}' for f in CAPTION_FIELDS)})")
        if spec or conv:
            return f"{{{name}}} takes no format or conversion"
    return None


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "a table"}.get(type(value), type(value).__name__)


class _Reader:
    def __init__(self, path: Path, views: Collection[str], animated: Collection[str],
                 levels: Collection[str]):
        self.path, self.views, self.animated, self.levels = path, views, animated, levels

    def fail(self, where: str, text: str) -> TalkError:
        return TalkError(f"{self.path.name}: {where}: {text}")

    def scene(self, n: int, table: Any) -> Scene:
        where = f"scene {n}"
        if not isinstance(table, dict):
            raise self.fail(where, f"is {_type_name(table)}; write it as [[scene]]")
        unknown = [k for k in table if k not in SCENE_FIELDS]
        if unknown:
            raise self.fail(f"{where}: {unknown[0]}",
                            f"unknown field (fields: {', '.join(SCENE_FIELDS)})")

        def string_field(name: str) -> str | None:
            value = table.get(name)
            if value is not None and not isinstance(value, str):
                raise self.fail(f"{where}: {name}", f"is {_type_name(value)}, not a string")
            return value

        view = string_field("view")
        if view is None:
            raise self.fail(f"{where}: view", f"missing (views: {', '.join(self.views)})")
        if view not in self.views:
            raise self.fail(f"{where}: view",
                            f"{view!r} is not a view (views: {', '.join(self.views)})")
        level = string_field("level")
        if level is not None and level not in self.levels:
            raise self.fail(f"{where}: level", f"{level!r} is not a level (levels: "
                                               f"{', '.join(self.levels)})")
        caption = string_field("caption") or ""
        if len(caption) > MAX_CAPTION_CHARS:
            raise self.fail(f"{where}: caption",
                            f"{len(caption)} characters; at most {MAX_CAPTION_CHARS}")
        problem = _check_caption(caption)
        if problem is not None:
            raise self.fail(f"{where}: caption", problem)
        at = string_field("at")
        if at is not None:
            if view != "code" or level is None:
                raise self.fail(f"{where}: at", "only a code scene with a level opens at a "
                                                "line (view = \"code\", level = ...)")
            if not at.strip() or "\n" in at or len(at) > MAX_AT_CHARS:
                raise self.fail(f"{where}: at", f"give a piece of one source line, 1 to "
                                                f"{MAX_AT_CHARS} characters")
        return Scene(view=view, caption=caption, level=level,
                     shape=self.shape(where, table.get("shape")),
                     steps=self.steps(where, view, table.get("step")),
                     speed=self.speed(where, string_field("speed")), at=at)

    def shape(self, where: str, value: Any) -> Shape | None:
        """A scene's shape (``where`` names it), or the talk's (``where`` empty)."""
        if value is None:
            return None
        field = f"{where}: shape" if where else "shape"
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise self.fail(field, f"is {_type_name(value)}; give N (a cube) or \"MxNxK\"")
        try:
            return Shape(*parse_shape(str(value)))
        except ValueError as exc:
            raise self.fail(field, str(exc)) from None

    def steps(self, where: str, view: str, value: Any) -> tuple[int, ...]:
        """``step = 3`` or ``step = [1, 3, 5]`` (walked in order by PageDown)."""
        if value is None:
            return ()
        values = value if isinstance(value, list) else [value]
        if not values:
            raise self.fail(f"{where}: step", "an empty list; give a step or leave it out")
        if len(values) > MAX_STEPS:
            raise self.fail(f"{where}: step", f"{len(values)} steps; at most {MAX_STEPS}")
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int):
                raise self.fail(f"{where}: step", f"is {_type_name(v)}, not an integer")
        if view not in self.animated:
            raise self.fail(f"{where}: step", f"the {view} view has no animation steps "
                                              f"(animated: {', '.join(self.animated)})")
        for v in values:
            if not 1 <= v <= MAX_STEP:
                raise self.fail(f"{where}: step", f"{v}: steps count from 1 to {MAX_STEP}")
        return tuple(values)

    def speed(self, where: str, value: str | None) -> Speed | None:
        if value is None:
            return None
        try:
            return Speed(value)
        except ValueError:
            raise self.fail(f"{where}: speed", f"{value!r} is not a replay speed (speeds: "
                                               f"{', '.join(Speed)})") from None


def read_talk(path: str | Path, views: Collection[str], animated: Collection[str],
              levels: Collection[str]) -> Talk:
    """Read and check a talk file: ``views`` are the tab names, ``animated`` those with
    animation steps, ``levels`` the level ids a scene may name."""
    path = Path(path)
    try:  # a regular file only, bounded in bytes and nesting (kernels/files/reading.py)
        data = loads_toml(read_text(path, Kind.TALK), path.name)
    except FileRefused as exc:
        raise TalkError(str(exc)) from None
    except RecursionError:  # (dotted keys nest without brackets)
        raise TalkError(f"{path.name}: nested too deeply to be a talk") from None
    reader = _Reader(path, list(views), list(animated), list(levels))
    unknown = [k for k in data if k not in TOP_FIELDS]
    if unknown:
        raise reader.fail(unknown[0], f"unknown field (fields: {', '.join(TOP_FIELDS)}; "
                                      "a scene's fields go under [[scene]])")
    title, recording = data.get("title", ""), data.get("recording")
    for name, value in (("title", title), ("recording", recording)):
        if value is not None and not isinstance(value, str):
            raise reader.fail(name, f"is {_type_name(value)}, not a string")
    shape = reader.shape("", data.get("shape")) or DEFAULT_SHAPE
    tables = data.get("scene")
    if not isinstance(tables, list) or not tables:
        raise reader.fail("scene", "no scenes: add at least one [[scene]] with a view")
    if len(tables) > MAX_SCENES:
        raise reader.fail("scene", f"{len(tables)} scenes; at most {MAX_SCENES}")
    scenes = tuple(reader.scene(n, table) for n, table in enumerate(tables, 1))
    return Talk(path=path, title=title or "", scenes=scenes,
                recording=(path.parent / recording) if recording else None, shape=shape)


def source_line(sources: Mapping[str, str] | None, text: str) -> tuple[str, int] | None:
    """The first line holding ``text`` in a build's sources (the level's own file first,
    then its headers, as the build lists them): (path, 1-based line), or None."""
    for path, body in (sources or {}).items():
        for n, line in enumerate(body.splitlines(), start=1):
            if text in line:
                return path, n
    return None


def lines_not_found(talk: Talk, events: Iterable[object]) -> list[tuple[int, str]]:
    """(scene number, why) of each code scene whose ``at`` is on no line of its level's
    newest build in ``events`` (``gemmscope talk --check``)."""
    builds = {ev.level: ev for ev in events if isinstance(ev, rec.Build)}
    out = []
    for n, scene in enumerate(talk.scenes, start=1):
        if scene.at is None or scene.level is None:
            continue
        build = builds.get(scene.level)
        if build is None or not build.sources:
            out.append((n, f"at {scene.at!r}: the recording has no source of {scene.level}"))
        elif source_line(build.sources, scene.at) is None:
            out.append((n, f"at {scene.at!r} is on no line of {scene.level}'s source"))
    return out
