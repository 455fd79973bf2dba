"""The command line of ``gemmscope`` (the window): replay, talk, and what is shown,
rendered or exported. Parsed without Qt, so ``--help`` and a refused argument cost no
window (app/gui_main.py runs what it asks)."""

from __future__ import annotations

import argparse
from typing import Any

from ..kernels.protocol import (
    Mode,
    OneLineParser,
    bounded,
    command_line,
    seconds,
    whole_number,
)

# a picture's side and an animation's frames: the exports' own bounds, one range each for
# the command line and the exporter (a --size of 16384 passed here and failed there)
from .window.export_targets import MAX_FRAMES, MAX_SIDE_PX

MAX_STEPS = 100_000  # a talk's scenes, an animation's steps and frames


def build_parser() -> argparse.ArgumentParser:
    from ..kernels.cli import add_gpu_options, add_remote_options
    from ..kernels.cli.subcommands import NAMES

    others = ", ".join([*NAMES, "doctor"])
    p = OneLineParser(
        prog="gemmscope", description="GEMM ladder visualizer",
        epilog=f"other commands (no display needed): gemmscope {{{others}}}; "
               "gemmscope COMMAND --help says more")
    p.add_argument("command", nargs="?", choices=["replay", "talk"],
                   help="replay a recording; talk: step through a talk's scenes (a TOML "
                        "file, e.g. resources/talks/ladder.toml)")
    p.add_argument("file", nargs="?", help="the recording (.jsonl) to replay, or the talk")
    p.add_argument("--baseline", metavar="FILE",
                   help="replay: a second recording shown beside the first (the roofline's "
                        "hollow squares), with what differs between the two runs")
    p.add_argument("--scene", type=bounded(int, 1, MAX_STEPS), default=1, metavar="N",
                   help="talk: start at scene N (with --screenshot: render scene N)")
    p.add_argument("--check", action="store_true",
                   help="talk: list every scene whose caption does not fit its caption "
                        "band at 1280x720 in presentation mode at the smallest caption "
                        "size (18 px); exit 1 if any does not")
    p.add_argument("--speed", choices=["1x", "4x", "16x", "instant"],
                   help="replay speed for this run (default: the last one chosen on the "
                        "replay bar)")
    p.add_argument("--screenshot", metavar="PATH",
                   help="load the whole recording, save a PNG of the window, exit")
    p.add_argument("--view", default="window",
                   help="with --screenshot: the view to render (window, ladder, charts, "
                        "bars, stream, sweep, or any registered view)")
    p.add_argument("--level", metavar="ID",
                   help="select this level (default: the first of the ladder)")
    p.add_argument("--shape", type=_shape_arg, metavar="MxNxK",
                   help="show the ladder, the charts and the exports at this shape (N for "
                        "a cube; default 4096^3 where the session has it, else its most "
                        "complete shape)")
    p.add_argument("--mode", choices=[str(m) for m in Mode],
                   help="show burst (default) or sustained results")
    p.add_argument("--per-clock", action="store_true",
                   help="the bars per GHz of SM clock held: TFLOPS/GHz and %% of cuBLAS at "
                        "equal clocks (the C key; also in their exports)")
    p.add_argument("--step", type=bounded(int, 1, MAX_STEPS), metavar="N",
                   help="the animation step on screen, from 1 (with --tab or --chart of "
                        "an animated view)")
    p.add_argument("--tab", metavar="NAME",
                   help="show this view's tab (in the window, or in its --screenshot)")
    p.add_argument("--size", metavar="WxH", type=_size_arg,
                   help="with --screenshot: the window's size in pixels (default 1400x900; "
                        "times the screen's device pixel ratio on a HiDPI screen); with "
                        "--export: the picture's, exactly, whatever the window (default: a "
                        "complete picture of the chart, e.g. 1600x900 for the bars)")
    p.add_argument("--presentation", action="store_true",
                   help="presentation mode: large type, high contrast (F11 toggles it); "
                        "with --screenshot, the picture in presentation mode")
    from .window.export_targets import ANIMATION_TARGETS, CHART_TARGETS, SUFFIXES

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
    p.add_argument("--all-results", action="store_true",
                   help="with --export of a .csv: every result of the session (default: "
                        "the ladder shown, at --shape and --mode)")
    p.add_argument("--scale", type=bounded(float, 0.25, 8), default=1.0, metavar="S",
                   help="with --export: --size times S pixels (png, gif, webp, mp4; the "
                        "svg's canvas): 2 for a HiDPI slide")
    p.add_argument("--frames", type=bounded(int, 1, MAX_FRAMES), metavar="N",
                   help="with --export of an animation: frames, one per step from the "
                        "first, wrapping (default: every step of the animation)")
    p.add_argument("--fps", type=bounded(float, 0.1, 60), default=2.0, metavar="F",
                   help="with --export of an animation: frames per second (default 2)")
    p.add_argument("--kernel", action="append", default=[], metavar="SPEC.toml",
                   help="open your own kernel's spec in its panel (docs/user-kernels.md)")
    p.add_argument("--settings", metavar="INI", help="keep preferences in this ini file")
    p.add_argument("--runner", metavar="CMD", type=command_line,
                   help="live: the runner command line (default: the preference set in "
                        "File ▸ Live runner…, else python -m gemmscope.kernels runner)")
    add_remote_options(p, context="live")  # the CLI's options, one definition
    add_gpu_options(p, cluster=False)
    p.set_defaults(gpus=None)  # the GPU indices of --device/--devices, set by main()
    p.add_argument("--session-file", metavar="PATH", help="live: record the session here")
    p.add_argument("--watchdog-s", type=seconds(), metavar="S",
                   help="live: restart a runner silent this long during a run (default 60)")
    p.add_argument("--exit-after-paint", action="store_true",
                   help="exit after the window is first painted; print the time (benchmark)")
    return p


def _shape_arg(text: str) -> Any:
    """``--shape``: N (a cube) or MxNxK, as a Shape (argparse says why not)."""
    from ..kernels.ladder import Shape
    from ..kernels.protocol import parse_shape

    try:
        return Shape(*parse_shape(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_size(text: str) -> tuple[int, int] | None:
    """``WIDTHxHEIGHT`` in pixels, each from 1 to MAX_SIDE_PX; None for anything else."""
    w_text, sep, h_text = text.lower().partition("x")
    w, h = whole_number(w_text), whole_number(h_text)
    if not sep or w is None or h is None or "+" in text or "-" in text \
            or not (1 <= w <= MAX_SIDE_PX and 1 <= h <= MAX_SIDE_PX):
        return None
    return w, h


def _size_arg(text: str) -> str:
    """``--size``: checked where it is parsed (the text kept: its users parse it)."""
    if parse_size(text) is None:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: give WIDTHxHEIGHT in pixels, each "
                                         f"from 1 to {MAX_SIDE_PX}")
    return text
