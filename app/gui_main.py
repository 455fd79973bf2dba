"""`gemmscope` (live, or replay of the bundled recording) and `gemmscope replay FILE`.

    gemmscope                          live where CuPy and a CUDA device are present,
                                       else the bundled H200 recording, saying why
    gemmscope replay FILE [--speed S]  replay any recording
    gemmscope replay FILE --screenshot out.png [--view NAME] [--level ID]
                                       render after loading, save a PNG, exit
    gemmscope [replay FILE] --shape 8192 --mode sustained --level cp_async --step 3
                                       what is shown (the view state; any of the above)
    gemmscope replay FILE --export out.svg [--chart NAME] [--scale S] [--frames N]
                                       render after loading, export (png, svg, gif,
                                       webp, mp4, csv, md by the suffix), exit
    gemmscope talk TALK.toml           step through a talk's scenes (app/window/talk.py)
    gemmscope talk TALK.toml --screenshot out.png --scene N
                                       render scene N of the talk, save a PNG, exit
    gemmscope talk TALK.toml --check   list the scenes whose caption does not fit its
                                       band at 1280x720 (exit 1 if any); no display needed
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..kernels.protocol import Mode, shown, terminal_text
from .gui_args import build_parser, parse_size

if TYPE_CHECKING:  # (Qt and the window load when a window is made, not for --help)
    from PySide6.QtWidgets import QApplication

    from ..kernels.drive import DeviceSpec
    from .core.runner_command import LivePlan
    from .window.main_window import MainWindow

START = time.perf_counter()
DEFAULT_SCREENSHOT_SIZE = "1400x900"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "replay" and not args.file:
        print("gemmscope replay: give the recording to open (FILE)", file=sys.stderr)
        return 2
    from ..kernels.drive import gpus_of

    try:  # GPU options are checked before any window opens
        gpus = gpus_of(args.device, args.devices, args.split, args.remote)
    except ValueError as exc:
        print(f"gemmscope: {exc}", file=sys.stderr)
        return 2
    args.gpus = gpus
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
    for option, path in (("--screenshot", args.screenshot), ("--export", args.export)):
        if path:
            from ..kernels.protocol import check_writable, target_of

            try:  # a name that cannot be written is said before any window opens
                # (an export makes its folder; a screenshot's must exist)
                target_of(path) if option == "--export" else check_writable(path)
            except OSError as exc:
                print(terminal_text(f"gemmscope: {option} {path}: {exc.strerror or exc}"),
                      file=sys.stderr)
                return 2
    talk = None
    if args.command == "talk":
        from .window.talk import TalkOptions, check_talk_args

        talk_options = TalkOptions(args.file, args.scene, args.speed, args.check,
                                   args.screenshot, args.presentation, args.size)
        talk = check_talk_args(talk_options)  # a bad file is said before any window opens
        if talk is None:
            return 2
        if args.check:  # measures text; shows no window
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.remote is not None:  # empty included: refused, never local unasked
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

    _import_pyqtgraph_without_cuda()
    from .core.desktop_entry import APP_ID, icon_path
    from .window.main_window import MainWindow
    from .window.preferences import open_settings

    found = QApplication.instance()
    app = found if isinstance(found, QApplication) else QApplication([sys.argv[0]])
    from .window.offscreen import quiet_offscreen_plugin

    quiet_offscreen_plugin()  # a headless picture or export: no plugin noise on stderr
    app.setApplicationName("gemmscope")
    app.setDesktopFileName(APP_ID)  # Wayland finds the .desktop entry (and icon) by it
    app.setWindowIcon(QIcon(str(icon_path())))
    with tempfile.TemporaryDirectory(prefix="gemmscope-") as scratch:
        settings = args.settings
        picture = bool(args.screenshot or args.export)
        if settings is None and picture:  # a picture of the defaults, the same each time
            settings = str(Path(scratch) / "prefs.ini")
        # a picture, an export or a talk reads the preferences and never writes them (a
        # talk's scenes set the speed, presentation mode, the run form: in memory only, so
        # it starts from them and leaves them as they were)
        window = MainWindow(open_settings(settings, writable=not (picture or talk is not None)))
        if talk is not None:
            from .window.talk import run_talk

            return run_talk(app, window, talk, talk_options)
        return _run(app, window, args)


def _device_specs(args: argparse.Namespace, plan: LivePlan) -> list[DeviceSpec] | None:
    """--device/--devices: a runner per GPU, locally or over ssh (None: one runner)."""
    if args.gpus is None:
        return None
    from ..kernels.drive import device_specs, parse_target

    target = parse_target(plan.remote) if plan.remote else None
    return device_specs(args.gpus, [] if target else plan.command or [], target,
                        args.remote_command, args.ssh_option)


def _run(app: QApplication, window: MainWindow, args: argparse.Namespace) -> int:
    """Open what the command line asks for; a screenshot, or the event loop."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    if args.speed:  # this run's, shown on the bar; the remembered one stays as it was
        window.set_replay_speed(args.speed, remember=False)
    # what is shown: chosen before the source opens, so its events never choose for it
    window.choose(shape=args.shape, level=args.level,
                  mode=Mode(args.mode) if args.mode else None)
    if args.per_clock:
        window.set_per_clock(True)
    for spec in args.kernel:  # File ▸ Open kernel… from the command line
        window.open_kernel(spec)
    if args.presentation and (args.screenshot or args.export):  # keeps the asked size
        window.set_presentation(True, full_screen=False)

    if args.screenshot or args.export:  # a picture needs the recording read first
        if not _open_source(window, args, background=False):
            print(terminal_text(window.statusBar().currentMessage()), file=sys.stderr)
            window.close()
            return 2
        if args.baseline:  # read now too: the picture shows it
            from .window.baseline import set_baseline_now

            why = set_baseline_now(window, args.baseline)
            if why is not None:
                print(terminal_text(f"--baseline: {why}"), file=sys.stderr)
                window.close()
                return 2
        return _screenshot(app, window, args) if args.screenshot else _export(app, window, args)

    if args.exit_after_paint:
        class _FirstPaint(QObject):
            def eventFilter(self, obj, event):
                if event.type() == QEvent.Type.Paint:
                    print(f"first paint after {time.perf_counter() - START:.3f} s "
                          f"(cpu {time.process_time():.3f} s)")
                    QTimer.singleShot(0, window.close)
                    app.removeEventFilter(self)
                return False

        painted = _FirstPaint()
        app.installEventFilter(painted)
    if args.tab:  # the tab on screen at the start (its animation takes --step)
        if args.tab not in window.views:
            print(f"no view called {shown(args.tab, 40)}; views: {', '.join(window.views)}",
                  file=sys.stderr)
            window.close()
            return 2
        window.named_widget(args.tab)
    if args.step is not None:
        if args.step < 1:
            print("--step: steps count from 1", file=sys.stderr)
            window.close()
            return 2
        window.step_once_ready(args.step - 1)
    window.show()  # (at the size MainWindow fitted to the screen it starts on)
    if args.presentation:  # after show: leaving it restores this geometry
        window.set_presentation(True)
    # the source opens once the window is on screen: a recording is read in a worker
    # thread, whose parsing holds the GIL half the time, so opening it first delayed the
    # first paint by a quarter of a second (the bundled recording); a timer of 0 ms after
    # show() still ran before the first paint
    window.first_paint.then(lambda: _open_source(window, args, background=True))
    if args.baseline:
        from .window.baseline import open_baseline

        window.first_paint.then(lambda: open_baseline(window, args.baseline))
    return app.exec()


def _open_source(window: MainWindow, args: argparse.Namespace, background: bool) -> bool:
    """The recording to replay, or the live runner, else the bundled recording. False
    when a recording read now (not ``background``) could not be opened."""
    if args.command == "replay":
        return bool(window.open_recording(args.file, background=background))
    from .core.runner_command import plan_live

    plan = plan_live(args.runner, _confirmed_preference(window, args),
                     asked_live=bool(args.session_file), remote=args.remote,
                     remote_command=args.remote_command, ssh_options=args.ssh_option)
    if plan.command:
        started = window.start_live(plan.label, plan.command, args.session_file,
                                    args.watchdog_s, remote=plan.remote,
                                    devices=_device_specs(args, plan), split=args.split)
        if started is None:  # no session file: said in one line, the replay instead
            print(terminal_text(f"gemmscope: {window.live_refused}"), file=sys.stderr)
            window.open_bundled(window.live_refused, background=background)
    else:
        window.open_bundled(f"{plan.reason}; see `gemmscope doctor`", background=background)
    return True


def _confirmed_preference(window: MainWindow, args: argparse.Namespace) -> str | None:
    """The preferences' runner command where the user has confirmed it (asked now, once,
    where someone can answer); else None, and the window says why it did not start."""
    from .core.runner_command import confirm, is_confirmed, unconfirmed_note
    from .window.runner_confirm import ask_to_start, can_ask

    command = window.runner_command()
    if not command or args.runner or args.remote is not None:  # (those come first)
        return command or None
    settings = window.prefs.settings.path
    if is_confirmed(settings, command):
        return str(command)
    if can_ask() and not (args.screenshot or args.export) and \
            ask_to_start(window, settings, command):
        why = confirm(settings, command)
        if why is not None:
            window.note(why, False)
        return str(command)
    note = unconfirmed_note(settings, command)
    window.note(note, False)
    window.statusBar().showMessage(note, 30_000)
    return None


def _prepare(app: QApplication, window: MainWindow, args: argparse.Namespace
             ) -> tuple[int, int] | None:
    """Size the window for a picture of --size pixels, play the recording to its end,
    select the level, show; the window's size in device-independent pixels, or None
    (said why, window closed)."""
    size = parse_size(args.size or DEFAULT_SCREENSHOT_SIZE)
    if size is None:
        print(f"--size: give WIDTHxHEIGHT in pixels, not {args.size!r}", file=sys.stderr)
        window.close()
        return None
    # the window in device-independent pixels; the picture in the screen's pixels
    ratio = app.primaryScreen().devicePixelRatio() if app.primaryScreen() else 1.0
    logical = (round(size[0] / ratio), round(size[1] / ratio))
    if not args.export:  # (an export is drawn at its own size, whatever the window's)
        window.resize(*logical)
    window.set_animated(False)  # a picture of whole steps, not mid-animation
    window.play_instant()
    if args.level and not window.select_level(args.level):
        print(terminal_text(f"no level called {shown(args.level, 40)}; levels: "
                            f"{', '.join(window.level_ids())}"), file=sys.stderr)
        window.close()
        return None
    if args.shape is not None and args.shape not in window.store.shapes():
        from .core.view_state import shape_text, sorted_shapes

        shapes = ", ".join(shape_text(s) for s in sorted_shapes(window.store.shapes()))
        print(f"--shape: the session has no ladder results at {shape_text(args.shape)}; "
              f"shapes: {shapes or 'none'}", file=sys.stderr)
        window.close()
        return None
    window.show()
    return logical


def _apply_step(window: MainWindow, args: argparse.Namespace) -> bool:
    """``--step N`` on the animated view on screen; False (said why) where none is."""
    if args.step is None:
        return True
    if args.step < 1 or not window.set_step(args.step - 1):
        print("--step: give a step from 1, with --tab or --chart of an animated view "
              "(tiling, banks, swizzle, coalescing)", file=sys.stderr)
        window.close()
        return False
    return True


def _export(app: QApplication, window: MainWindow, args: argparse.Namespace) -> int:
    from .window.export_run import export_named
    from .window.exports import ExportError

    if _prepare(app, window, args) is None:
        return 2
    for _ in range(5):
        app.processEvents()
    if args.step is not None:  # the step of the animated view exported
        from .window.export_run import check_request
        from .window.export_targets import TARGETS

        target = TARGETS.get(check_request(args.export, args.chart))
        if target is not None:
            window.named_widget(target.view)
        if not _apply_step(window, args):
            return 2
    try:
        Path(args.export).parent.mkdir(parents=True, exist_ok=True)
        path = export_named(window, args.export, args.chart, scale=args.scale,
                            frames=args.frames, fps=args.fps, every=args.all_results,
                            size=parse_size(args.size) if args.size else None)
    except (ExportError, OSError) as exc:
        print(f"gemmscope: --export: {terminal_text(str(exc))}", file=sys.stderr)
        window.close()
        return 1 if isinstance(exc, OSError) else 2
    window.close()
    print(path)
    return 0


def _screenshot(app: QApplication, window: MainWindow, args: argparse.Namespace) -> int:
    logical = _prepare(app, window, args)
    if logical is None:
        return 2
    size = parse_size(args.size or DEFAULT_SCREENSHOT_SIZE)
    target = window.named_widget(args.view)
    tab = window.named_widget(args.tab) if args.tab else window
    if target is None or tab is None or (args.tab and args.tab not in window.views):
        name = args.view if target is None else args.tab
        print(f"no view called {shown(name, 40)}; views: {', '.join(window.view_names())}",
              file=sys.stderr)
        window.close()
        return 2
    if args.tab:
        window.named_widget(args.tab)  # the tab on screen: its animation takes --step
    if not _apply_step(window, args):
        return 2
    for _ in range(5):
        app.processEvents()
    window.resize(*logical)  # again: panels that do not fit hid once shown at this size
    for _ in range(5):
        app.processEvents()
    window.flush_views()
    app.processEvents()
    image = target.grab()
    if target is window and (image.width(), image.height()) != size:
        print(f"the window is {image.width()}x{image.height()} px, not {args.size}: "
              "it cannot be made that small", file=sys.stderr)
    from .window.exports import ExportError, save_png

    try:  # whole or not at all: an old picture is never left cut
        save_png(image, args.screenshot)
    except (OSError, ExportError) as exc:
        window.close()
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        print(terminal_text(f"could not write {args.screenshot}: {reason}"), file=sys.stderr)
        return 1
    window.close()
    print(args.screenshot)
    print(f"status: {terminal_text(window.mode_text())}")  # names the recording's device
    return 0


def _import_pyqtgraph_without_cuda() -> None:
    """Import pyqtgraph without the CUDA Python bindings. Its RawImageGLWidget (which the
    app does not use) tries ``from cuda.bindings import runtime`` at import time, which
    where the bindings are installed (the ``nvrtc`` extra, GPU machines) adds 50-65 ms to
    the window's start. Hidden only while pyqtgraph imports; the kernels still import the
    bindings themselves later."""
    if "pyqtgraph" in sys.modules or "cuda.bindings.runtime" in sys.modules:
        return
    sys.modules["cuda.bindings.runtime"] = None  # type: ignore[assignment]  # ImportError
    try:
        import pyqtgraph  # noqa: F401
    finally:
        del sys.modules["cuda.bindings.runtime"]
