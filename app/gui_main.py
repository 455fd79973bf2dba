"""`gemmscope` (live, or replay of the bundled recording) and `gemmscope replay FILE`.

    gemmscope                          live where CuPy and a CUDA device are present,
                                       else the bundled H200 recording, saying why
    gemmscope replay FILE [--speed S]  replay any recording
    gemmscope replay FILE --screenshot out.png [--view NAME] [--level ID]
                                       render after loading, save a PNG, exit
    gemmscope replay FILE --export out.svg [--chart NAME] [--scale S] [--frames N]
                                       render after loading, export (png, svg, gif,
                                       webp, mp4, csv, md by the suffix), exit
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

START = time.perf_counter()


def build_parser() -> argparse.ArgumentParser:
    from ..kernels.cli import COMMANDS

    others = ", ".join([*COMMANDS, "doctor"])
    p = argparse.ArgumentParser(
        prog="gemmscope", description="GEMM ladder visualizer",
        epilog=f"other commands (no display needed): gemmscope {{{others}}}; "
               "gemmscope COMMAND --help says more")
    p.add_argument("command", nargs="?", choices=["replay"], help="replay a recording")
    p.add_argument("file", nargs="?", help="the recording (.jsonl) to replay")
    p.add_argument("--speed", choices=["1x", "4x", "16x", "instant"],
                   help="replay speed (default: the last one used)")
    p.add_argument("--screenshot", metavar="PATH",
                   help="load the whole recording, save a PNG of the window, exit")
    p.add_argument("--view", default="window",
                   help="with --screenshot: the view to render (window, ladder, charts, "
                        "bars, stream, sweep, or any registered view)")
    p.add_argument("--level", metavar="ID",
                   help="with --screenshot: select this level first (default: the first)")
    p.add_argument("--size", default="1400x900",
                   help="window size for --screenshot and --export")
    from .window.exports import ANIMATION_TARGETS, CHART_TARGETS, SUFFIXES

    charts = [t.name for t in CHART_TARGETS]
    animations = [t.name for t in ANIMATION_TARGETS]
    p.add_argument("--export", metavar="PATH",
                   help="load the whole recording, export, exit; the format is the "
                        f"suffix: {', '.join(SUFFIXES)} (md: the ladder report with "
                        "chart PNGs beside it)")
    p.add_argument("--chart", metavar="NAME", choices=[*charts, *animations],
                   help=f"with --export: png or svg of {{{','.join(charts)}}} (default bars), "
                        f"or of an animation view; gif, webp or mp4 of "
                        f"{{{','.join(animations)}}} (default tiling)")
    p.add_argument("--scale", type=float, default=1.0, metavar="S",
                   help="with --export: pixels per screen pixel of a png, gif, webp or mp4 "
                        "(2 for slides)")
    p.add_argument("--frames", type=int, metavar="N",
                   help="with --export of an animation: frames, one per step from the "
                        "first, wrapping (default: every step of the animation)")
    p.add_argument("--fps", type=float, default=2.0, metavar="F",
                   help="with --export of an animation: frames per second (default 2)")
    p.add_argument("--settings", metavar="INI", help="keep preferences in this ini file")
    p.add_argument("--runner", metavar="CMD",
                   help="live: the runner command line (default: the preference set in "
                        "File ▸ Live runner…, else python -m gemmscope.kernels runner)")
    p.add_argument("--remote", metavar="[USER@]HOST[:PORT]",
                   help="live: run the runner on this host through ssh (your keys and ssh "
                        "config, batch mode: never a password)")
    p.add_argument("--remote-command", default="gemmscope runner", metavar="CMD",
                   help="live, with --remote: how to start the runner there "
                        "(default `gemmscope runner`)")
    p.add_argument("--ssh-option", action="append", default=[], metavar="OPT",
                   help="live, with --remote: an ssh -o option (repeatable)")
    p.add_argument("--session-file", metavar="PATH", help="live: record the session here")
    p.add_argument("--watchdog-s", type=float, metavar="S",
                   help="live: restart a runner silent this long during a run (default 60)")
    p.add_argument("--exit-after-paint", action="store_true",
                   help="exit after the window is first painted; print the time (benchmark)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "replay" and not args.file:
        print("gemmscope replay: give the recording to open (FILE)", file=sys.stderr)
        return 2
    if args.export:
        from .window.export_run import check_request
        from .window.exports import ExportError

        try:  # a request that cannot be made is said before any window opens
            check_request(args.export, args.chart)
        except ExportError as exc:
            print(f"gemmscope: --export: {exc}", file=sys.stderr)
            return 2
        if args.screenshot:
            print("gemmscope: give --screenshot or --export, not both", file=sys.stderr)
            return 2
    if args.remote:
        from .core.runner_command import plan_live

        try:  # a malformed host is said before any window opens
            plan_live(None, None, remote=args.remote)
        except ValueError as exc:
            print(f"gemmscope: --remote: {exc}", file=sys.stderr)
            return 2
        if args.runner:
            print("gemmscope: give --runner or --remote, not both", file=sys.stderr)
            return 2

    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from .core.desktop_entry import APP_ID, icon_path
    from .window.main_window import MainWindow
    from .window.preferences import open_settings

    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("gemmscope")
    app.setDesktopFileName(APP_ID)  # Wayland finds the .desktop entry (and icon) by it
    app.setWindowIcon(QIcon(str(icon_path())))
    with tempfile.TemporaryDirectory(prefix="gemmscope-") as scratch:
        settings = args.settings
        # a picture or an export never writes the user's preferences
        if settings is None and (args.screenshot or args.export):
            settings = str(Path(scratch) / "prefs.ini")
        return _run(app, MainWindow(open_settings(settings)), args)


def _run(app: Any, window: Any, args: argparse.Namespace) -> int:
    """Open what the command line asks for; a screenshot, or the event loop."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    if args.speed:
        window.set_replay_speed(args.speed)

    # a screenshot or an export needs the recording read first
    interactive = not (args.screenshot or args.export)
    if args.command == "replay":
        if not window.open_recording(args.file, background=interactive):
            print(window.statusBar().currentMessage(), file=sys.stderr)
            window.close()
            return 2
    else:
        from .core.runner_command import plan_live

        plan = plan_live(args.runner, window.runner_command(),
                         asked_live=bool(args.session_file), remote=args.remote,
                         remote_command=args.remote_command, ssh_options=args.ssh_option)
        if plan.command:
            window.start_live(plan.label, plan.command, args.session_file, args.watchdog_s,
                              remote=plan.remote)
        else:
            window.open_bundled(f"{plan.reason}; see `gemmscope doctor`", background=interactive)

    if args.screenshot:
        return _screenshot(app, window, args)
    if args.export:
        return _export(app, window, args)

    if args.exit_after_paint:
        class _FirstPaint(QObject):
            def eventFilter(self, obj, event):
                if event.type() == QEvent.Type.Paint:
                    print(f"first paint after {time.perf_counter() - START:.3f} s")
                    QTimer.singleShot(0, window.close)
                    app.removeEventFilter(self)
                return False

        painted = _FirstPaint()
        app.installEventFilter(painted)
    window.resize(1400, 900)
    window.show()
    return app.exec()


def _prepare(app, window, args) -> bool:
    """Size the window, read the whole recording, select the level; False: said why."""
    w, _, h = args.size.partition("x")
    window.resize(int(w), int(h))
    window.set_animated(False)  # a picture of whole steps, not mid-animation
    window.play_instant()
    if args.level and not window.select_level(args.level):
        print(f"no level called {args.level!r}; levels: {', '.join(window.level_ids())}",
              file=sys.stderr)
        window.close()
        return False
    window.show()
    return True


def _export(app, window, args) -> int:
    from .window.export_run import export_named
    from .window.exports import ExportError

    if not _prepare(app, window, args):
        return 2
    for _ in range(5):
        app.processEvents()
    try:
        Path(args.export).parent.mkdir(parents=True, exist_ok=True)
        path = export_named(window, args.export, args.chart, scale=args.scale,
                            frames=args.frames, fps=args.fps)
    except (ExportError, OSError) as exc:
        print(f"gemmscope: --export: {exc}", file=sys.stderr)
        window.close()
        return 1 if isinstance(exc, OSError) else 2
    window.close()
    print(path)
    return 0


def _screenshot(app, window, args) -> int:
    if not _prepare(app, window, args):
        return 2
    target = window.named_widget(args.view)
    if target is None:
        print(f"no view called {args.view!r}; views: {', '.join(window.view_names())}",
              file=sys.stderr)
        window.close()
        return 2
    for _ in range(5):
        app.processEvents()
    window.flush_views()
    app.processEvents()
    ok = target.grab().save(args.screenshot, "PNG")
    window.close()
    if not ok:
        print(f"could not write {args.screenshot}", file=sys.stderr)
        return 1
    print(args.screenshot)
    print(f"status: {window.mode_text()}")
    return 0
