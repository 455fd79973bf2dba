"""`gemmscope gallery OUT`: every tab in the normal theme and on stage at the screens a
talk meets, and every scene of the example talk, rendered from the bundled recording.

    gemmscope gallery OUT                  PNGs and an index (OUT/index.md)
    gemmscope gallery OUT --sizes 1280x720 --no-talk
    gemmscope gallery docs/gallery --sizes 1280x720 --themes presentation --small
                                           (what docs/gallery/ holds)

A command of the app's own, not a benchmark script: it is the picture of what a person
sees (a reader of docs/gallery/, a speaker checking a projector's size before a talk),
it runs wherever the app runs, with no display (the offscreen platform), and CI runs
the same code (tests/app/entry/test_gallery.py) and checks the stage's rules on the very widgets
behind each picture through :func:`render_gallery`'s ``inspect`` hook.

One window per theme and size renders every tab; one window at 1280x720 on stage plays
the talk. Each window reads the whole recording before its first picture.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from ..kernels.protocol import OneLineParser, ProtocolError, read_session, terminal_text
from ..kernels.protocol import Recording as Session
from .core.preferences_file import PreferencesFile
from .views.registry import VIEWS
from .window.preferences import open_settings

if TYPE_CHECKING:  # (the window loads with the first one made)
    from .window.main_window import MainWindow

SIZES = ((1280, 720), (1366, 768), (1920, 1080))
TALK_SIZE = (1280, 720)
DEFAULT_LEVEL = "register_2d"  # the views' level: a SIMT level with every picture
THEMES = ("normal", "presentation")


@dataclass(frozen=True, slots=True)
class Shot:
    """One picture of the gallery: a tab (``scene`` 0) or a talk's scene (1-based)."""

    name: str  # the file's stem
    theme: str  # "normal" or "presentation"
    size: tuple[int, int]
    tab: str
    scene: int = 0
    path: Path | None = None


Inspect = Callable[[Shot, "MainWindow"], None]  # (the shot, the window behind it): tests


def parse_sizes(text: str) -> list[tuple[int, int]]:
    from .gui_args import parse_size

    sizes = [parse_size(part.strip()) for part in text.split(",") if part.strip()]
    if not sizes or any(s is None for s in sizes):
        raise ValueError(f"--sizes: give WIDTHxHEIGHT[,WIDTHxHEIGHT...], not {text!r}")
    return [s for s in sizes if s is not None]


def settle(window: MainWindow) -> None:
    app = QApplication.instance()
    for _ in range(4):
        if app is not None:
            app.processEvents()
    window.flush_views()
    if app is not None:
        app.processEvents()


def reading(recording: Path, readings: dict[str, Session]) -> Session:
    """``recording`` read, once for all the gallery's windows (``readings``: what was read
    before, by real path). Each of its six windows and the talk's read the 110 MB bundled
    recording anew, about a third of the gallery's time."""
    key = str(Path(recording).resolve())
    if key not in readings:
        try:
            readings[key] = read_session(recording)
        except (OSError, ProtocolError) as exc:
            raise RuntimeError(f"cannot read {recording}: {exc}") from exc
    return readings[key]


def new_window(settings: PreferencesFile, recording: Path, size: tuple[int, int],
               presentation: bool, readings: dict[str, Session] | None = None) -> MainWindow:
    """A main window at ``size`` showing the whole of ``recording``, whole steps only."""
    from .window.main_window import MainWindow

    session = reading(recording, {} if readings is None else readings)
    window = MainWindow(settings)
    window.sources.open_session(session)
    window.set_animated(False)
    window.play_instant()
    if presentation:
        window.set_presentation(True, full_screen=False)
    window.select_level(DEFAULT_LEVEL)
    window.resize(*size)
    window.show()
    settle(window)
    window.resize(*size)  # again: what does not fit hid once shown
    settle(window)
    return window


def save(window: MainWindow, path: Path, small: bool = False) -> QImage:
    """The window's picture as a PNG; ``small``: in at most 256 colours (Pillow), for a
    repository (a stage picture is a few flat colours and text: it stays sharp)."""
    image = window.grab().toImage()
    if small:
        from .window.exports import _pil_frames

        picture = _pil_frames([image])[0].quantize(256, dither=0)
        picture.save(str(path), "PNG", optimize=True)
        return image
    if not image.save(str(path), "PNG"):  # type: ignore[call-overload]  # (takes a str)
        raise OSError(f"could not write {path}")
    return image


def tab_shots(out: Path, settings: PreferencesFile, recording: Path,
              sizes: list[tuple[int, int]], inspect: Inspect | None,
              themes: tuple[str, ...] = THEMES, small: bool = False,
              readings: dict[str, Session] | None = None) -> Iterator[Shot]:
    for theme in themes:
        for size in sizes:
            window = new_window(settings, recording, size, theme == "presentation", readings)
            try:
                for spec in VIEWS:
                    window.named_widget(spec.name)
                    settle(window)
                    yield take(window, out, Shot(f"{theme}-{size[0]}x{size[1]}-{spec.name}",
                                                 theme, size, spec.name), small, inspect)
            finally:
                window.close()


def take(window: MainWindow, out: Path, shot: Shot, small: bool, inspect: Inspect | None) -> Shot:
    """Save the window's picture as ``out/NAME.png`` (the shot's path, set here) and let
    ``inspect`` see it while the window is live."""
    path = out / f"{shot.name}.png"
    shot = replace(shot, path=path)
    save(window, path, small)
    if inspect is not None:
        inspect(shot, window)
    return shot


def talk_shots(out: Path, settings: PreferencesFile, talk_name: str, size: tuple[int, int],
               inspect: Inspect | None, small: bool = False,
               readings: dict[str, Session] | None = None) -> Iterator[Shot]:
    from .window.talk import load_talk, open_talk, recording_of, talk_path

    talk = load_talk(talk_path(talk_name))
    recording = recording_of(talk)
    if recording is None:
        raise RuntimeError(f"{talk.path}: no recording")
    window = new_window(settings, recording, size, presentation=True, readings=readings)
    # (the whole recording read: the captions quote it, as a talk's first scene does)
    assert window.replay is not None  # (new_window opened it)
    controller = open_talk(window, talk, window.replay.recording.events)
    try:
        for i, scene in enumerate(talk.scenes):
            controller.go(i)
            settle(window)
            window.resize(*size)
            settle(window)
            yield take(window, out, Shot(f"talk-{size[0]}x{size[1]}-scene-{i + 1:02d}",
                                         "presentation", size, scene.view, scene=i + 1),
                       small, inspect)
    finally:
        controller.stop()
        window.close()


def render_gallery(out: Path, recording: Path, sizes: list[tuple[int, int]] | None = None,
                   talk: str | None = "ladder", inspect: Inspect | None = None,
                   settings_file: Path | None = None, themes: tuple[str, ...] = THEMES,
                   small: bool = False) -> list[Shot]:
    """Render the gallery into ``out``; the shots, in order. ``inspect`` is called with
    each shot and its window right after the picture is taken (the window is live)."""
    out.mkdir(parents=True, exist_ok=True)
    # a scratch file that is never written: the gallery changes no one's preferences
    settings = open_settings(str(settings_file or out / ".gallery-prefs.ini"), writable=False)
    readings: dict[str, Session] = {}  # each recording read once
    shots = list(tab_shots(out, settings, recording, list(sizes or SIZES), inspect, themes,
                           small, readings))
    if talk:
        shots += list(talk_shots(out, settings, talk, TALK_SIZE, inspect, small, readings))
    (out / "index.md").write_text(index_text(shots), encoding="utf-8")
    return shots


def index_text(shots: list[Shot]) -> str:
    lines = ["# gemmscope gallery", "",
             "Rendered by `gemmscope gallery OUT` from the bundled recording "
             f"(level {DEFAULT_LEVEL} in the tabs).", ""]
    section = None
    for shot in shots:
        title = ("Talk scenes" if shot.scene else
                 f"{shot.theme.capitalize()} theme, {shot.size[0]}×{shot.size[1]}")
        if title != section:
            section = title
            lines += [f"## {title}", ""]
        label = f"scene {shot.scene} ({shot.tab})" if shot.scene else shot.tab
        name = shot.path.name if shot.path else shot.name
        lines += [f"![{label}]({name})", ""]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="gemmscope gallery",
        description="Render every tab (normal and presentation mode) at the screen sizes "
                    "a talk meets, and every scene of a talk, from a recording.")
    p.add_argument("out", help="the folder to write PNGs and index.md into")
    p.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES),
                   help="window sizes, WIDTHxHEIGHT,... (default %(default)s)")
    p.add_argument("--recording", metavar="FILE",
                   help="the recording (default: the bundled H200 session)")
    p.add_argument("--talk", default="ladder",
                   help="the talk whose scenes to render (default %(default)s)")
    p.add_argument("--no-talk", action="store_true", help="no talk scenes")
    p.add_argument("--themes", default=",".join(THEMES),
                   help="normal, presentation or both (default %(default)s)")
    p.add_argument("--small", action="store_true",
                   help="PNGs in at most 256 colours, optimized (for a repository)")
    return p


def main(argv: list[str]) -> int:
    import sys

    args = build_parser().parse_args(argv)
    try:
        sizes = parse_sizes(args.sizes)
        themes = tuple(t.strip() for t in args.themes.split(",") if t.strip())
        if not themes or set(themes) - set(THEMES):
            raise ValueError(f"--themes: {', '.join(THEMES)}, not {args.themes!r}")
    except ValueError as exc:
        print(terminal_text(f"gemmscope gallery: {exc}"), file=sys.stderr)
        return 2
    from .gui_main import _import_pyqtgraph_without_cuda
    from .window.sources import bundled_session

    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("gemmscope")
    _import_pyqtgraph_without_cuda()
    recording = Path(args.recording) if args.recording else bundled_session()
    if recording is None or not Path(recording).is_file():
        print(terminal_text(f"gemmscope gallery: no recording: {recording or 'none bundled'}"),
              file=sys.stderr)
        return 2
    try:
        shots = render_gallery(Path(args.out), Path(recording), sizes,
                               None if args.no_talk else args.talk, themes=themes,
                               small=args.small)
    except (OSError, RuntimeError, ValueError) as exc:  # (a recording's text: escaped)
        print(terminal_text(f"gemmscope gallery: {exc}"), file=sys.stderr)
        return 1
    print(f"{len(shots)} pictures in {args.out} (index.md lists them)")
    return 0
