"""cuBLAS and the best level at 4096³ on two operand distributions (GPU machine; issue 41
item 5): the power a GEMM draws, and so the clock the 700 W limiter leaves it, depends on
the data, so the same kernel is not the same number on uniform inputs and on zeros.

    python benchmarks/operand_power.py --out DIR [--level LEVEL] [--size 4096]
        [--operands uniform,zeros] [--window-s 3] [--trials 2] [--cooldown-s 5]
    python benchmarks/operand_power.py --from DIR/operand_power.jsonl --out DIR  # redraw
    python benchmarks/operand_power.py --smoke  # CI: the table and chart of made-up rows

Records with the project's own ``record`` (one call per distribution, ``--append`` after
the first, sustained mode: back-to-back windows at the power limit, docs/energy.md), so
the numbers are a recording with its source hashes (DIR/operand_power.jsonl), then prints
a table per distribution (TFLOPS, % of cuBLAS, average power, SM clock, J per GEMM) and
draws the chart DIR/operand_power.svg (and .png where PySide6 can render it): three panels,
TFLOPS, W and SM MHz, a bar per kernel and distribution.

Default level: the level with the highest % of its reference at 4096³ in the bundled H200
recording (its newest burst results), with that reference.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import _smoke
from _args import count, level_id, square_size

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.level import Kind
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.events import Distribution, Mode
from gemmscope.kernels.protocol.records import Result
from gemmscope.kernels.results.rows import (
    energy_text,
    mhz_text,
    pct_text,
    rows_of,
    tflops_text,
    watts_text,
)

BUNDLED = Path(__file__).resolve().parents[1] / "resources" / "sessions" / "h200-ladder.jsonl.gz"
NAME = "operand_power"
COLORS = {"uniform": "#3d8bfd", "normal": "#7048e8", "pm1": "#f59f00", "zeros": "#2f9e44"}


def best_level(path: Path, size: int) -> str:
    """The level (not a reference) with the highest % of its reference at size³ among the
    newest burst results of the recording at ``path``."""
    session = recording.read_session(str(path), only=(Result,))
    best: tuple[float, str] | None = None
    for row in rows_of(session.results):
        r, level = row.result, registry.BY_ID.get(row.result.level)
        if (level is None or level.kind is not Kind.LEVEL or r.mode is not Mode.BURST
                or (r.M, r.N, r.K) != (size, size, size) or row.pct_of_reference is None):
            continue
        if best is None or row.pct_of_reference > best[0]:
            best = (row.pct_of_reference, r.level)
    if best is None:
        raise SystemExit(f"{path}: no level with a ratio at {size}³; give --level")
    return best[1]


def record(out: Path, level: str, size: int, operands: list[str],
           args: argparse.Namespace) -> Path:
    """One ``gemmscope record`` per distribution into one file (the reference runs first
    in each: the runner keys a ratio by distribution)."""
    path = out / f"{NAME}.jsonl"
    for i, operand in enumerate(operands):
        cmd = [sys.executable, "-m", "gemmscope.kernels", "record", "-o", str(path),
               "-l", level, "-s", str(size), "--sustained", "--operands", operand,
               "--window-s", str(args.window_s), "--trials", str(args.trials),
               "--cooldown-s", str(args.cooldown_s),
               *(["--append"] if i else ["--force"])]
        print("$ " + " ".join(cmd[1:]), flush=True)
        subprocess.run(cmd, check=True)
    return path


@dataclass(frozen=True, slots=True)
class Bar:
    kernel: str
    operands: str
    tflops: float
    pct: float | None
    power_w: float | None
    clock_mhz: float | None
    energy_j: float | None
    verified: bool


def bars(path: Path, level: str, size: int) -> list[Bar]:
    """The newest result of the level and of its reference per distribution."""
    session = recording.read_session(str(path), only=(Result,))
    reference = registry.get(level).reference
    latest: dict[tuple[str, str], Bar] = {}
    for row in rows_of(session.results):
        r = row.result
        if r.level not in (level, reference) or (r.M, r.N, r.K) != (size, size, size):
            continue
        operands = r.operands or "uniform"
        # a level's ratio is the runner's, of the reference on the same distribution; the
        # reference is the denominator (the reader's own lookup keys by shape and mode)
        pct = None if r.level == reference else r.pct_of_reference
        latest[(r.level, operands)] = Bar(
            r.level, operands, r.tflops, pct, r.avg_power_w,
            r.sm_clock_mhz_avg, r.energy_j, r.verified)
    order = {d: i for i, d in enumerate(Distribution)}
    return sorted(latest.values(), key=lambda b: (order.get(b.operands, 99),  # type: ignore[call-overload]
                                                  b.kernel != reference))


def table(rows: list[Bar]) -> list[str]:
    head = ["operands", "kernel", "TFLOPS", "% of cuBLAS", "avg W", "SM MHz", "J/GEMM",
            "verified"]
    body = [[b.operands, b.kernel, tflops_text(b.tflops), pct_text(b.pct),
             watts_text(b.power_w), mhz_text(b.clock_mhz), energy_text(b.energy_j),
             "yes" if b.verified else "NO"] for b in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in (head, ["-" * w for w in widths], *body)]


PANELS = (("TFLOPS", lambda b: b.tflops), ("average W", lambda b: b.power_w),
          ("SM MHz", lambda b: b.clock_mhz))


def svg(rows: list[Bar], title: str) -> str:
    """Three panels of bars (TFLOPS, W, MHz), a group per kernel, a bar per distribution;
    each bar labelled with its value. Plain SVG: no plotting library needed."""
    kernels = list(dict.fromkeys(b.kernel for b in rows))
    dists = list(dict.fromkeys(b.operands for b in rows))
    pw, ph, top, left, gap = 300, 260, 70, 20, 30
    width = left + len(PANELS) * (pw + gap)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + ph + 30}" '
           f'font-family="sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{left}" y="24" font-size="15">{escape(title)}</text>']
    for i, d in enumerate(dists):  # the legend
        x = left + i * 110
        out.append(f'<rect x="{x}" y="36" width="12" height="12" '
                   f'fill="{COLORS.get(d, "#868e96")}"/><text x="{x + 16}" y="46">'
                   f'{escape(d)}</text>')
    for p, (label, value) in enumerate(PANELS):
        x0 = left + p * (pw + gap)
        values = [v for b in rows if (v := value(b)) is not None]
        vmax = max(values, default=1.0) * 1.15 or 1.0
        out.append(f'<text x="{x0}" y="{top - 6}" font-weight="bold">{escape(label)}</text>')
        out.append(f'<line x1="{x0}" y1="{top + ph}" x2="{x0 + pw}" y2="{top + ph}" '
                   'stroke="#495057"/>')
        group_w = pw / max(len(kernels), 1)
        bar_w = (group_w - 20) / max(len(dists), 1)
        for k, kernel in enumerate(kernels):
            gx = x0 + k * group_w + 10
            out.append(f'<text x="{gx + (group_w - 20) / 2:.1f}" y="{top + ph + 16}" '
                       f'text-anchor="middle">{escape(kernel)}</text>')
            for j, d in enumerate(dists):
                bar = next((b for b in rows if b.kernel == kernel and b.operands == d), None)
                v = value(bar) if bar is not None else None
                if v is None:
                    continue
                h = ph * v / vmax
                bx = gx + j * bar_w
                out.append(f'<rect x="{bx:.1f}" y="{top + ph - h:.1f}" width="{bar_w - 2:.1f}" '
                           f'height="{h:.1f}" fill="{COLORS.get(d, "#868e96")}"/>')
                out.append(f'<text x="{bx + (bar_w - 2) / 2:.1f}" y="{top + ph - h - 4:.1f}" '
                           f'text-anchor="middle" font-size="10">{v:.0f}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def png(svg_path: Path) -> Path | str:
    """The SVG rendered to PNG by QtSvg (offscreen); why not where PySide6 cannot."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from PySide6.QtCore import QRectF
        from PySide6.QtGui import QGuiApplication, QImage, QPainter
        from PySide6.QtSvg import QSvgRenderer
    except ImportError as exc:
        return f"no PNG: PySide6 with QtSvg is not importable ({exc.name or exc})"
    _app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(svg_path))
    size = renderer.defaultSize() * 2
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(0xFFFFFFFF)
    painter = QPainter(image)
    renderer.render(painter, QRectF(0, 0, size.width(), size.height()))
    painter.end()
    path = svg_path.with_suffix(".png")
    image.save(str(path))
    return path


def render(path: Path, out: Path, level: str, size: int, made_up: bool = False) -> None:
    rows = bars(path, level, size)
    lines = table(rows)
    if made_up:
        _smoke.made_up("\n".join(lines))
    else:
        print("\n".join(lines))
    title = (f"{level} and {registry.get(level).reference} at {size}³, sustained, by "
             "operand distribution" + (" (made-up rows)" if made_up else " (H200)"))
    svg_path = out / f"{NAME}.svg"
    svg_path.write_text(svg(rows, title), encoding="utf-8")
    drawn = png(svg_path)
    print(f"wrote {svg_path}" + (f" and {drawn}" if isinstance(drawn, Path) else f"; {drawn}"))


def smoke_recording(folder: Path, level: str, size: int) -> Path:
    """The synthetic session with made-up sustained results of ``level`` and its reference
    on uniform data and on zeros (zeros: less power, a higher clock, more TFLOPS)."""
    synth = _smoke.support("synthetic_session")
    events = synth.events()
    t = events[-1]["t"]
    reference = registry.get(level).reference
    for operands, boost in (("uniform", 1.0), ("zeros", 1.08)):
        for kernel, tflops in ((reference, 700.0), (level, 690.0)):
            t += 1.0
            events.append({"type": "result", "t": t, "level": kernel, "M": size, "N": size,
                           "K": size, "mode": str(Mode.SUSTAINED), "dtype": "bf16",
                           "precision": "bf16", "median_ms": 0.2, "tflops": tflops * boost,
                           "verified": True, "rel_err": 0.0 if operands == "zeros" else 1e-3,
                           "repeats": 2, "operands": operands,
                           "avg_power_w": 690.0 if operands == "uniform" else 430.0,
                           "sm_clock_mhz_avg": 1590.0 if operands == "uniform" else 1980.0,
                           "energy_j": 0.12 / boost,
                           "pct_of_reference": None if kernel == reference else 690 / 7,
                           "reference": None if kernel == reference else reference})
    return synth.write(folder / f"{NAME}.jsonl", events)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="folder for the recording and the chart")
    ap.add_argument("--from", dest="source", type=Path,
                    help="draw from this recording (made by this script) instead of running")
    ap.add_argument("--level", type=level_id(),
                    help="default: the best level at --size in the bundled recording")
    ap.add_argument("--size", type=square_size, default=4096)
    ap.add_argument("--operands", default="uniform,zeros",
                    help="comma-separated distributions (default uniform,zeros)")
    ap.add_argument("--window-s", type=float, default=3.0)
    ap.add_argument("--trials", type=count, default=2)
    ap.add_argument("--cooldown-s", type=float, default=5.0)
    _smoke.add_flag(ap)
    args = ap.parse_args(argv)
    operands = [x.strip() for x in args.operands.split(",") if x.strip()]
    unknown = [x for x in operands if x not in tuple(Distribution)]
    if unknown or len(operands) < 1:
        ap.error(f"--operands: {', '.join(unknown) or 'none'}; known: "
                 f"{', '.join(Distribution)}")
    if args.smoke:
        level = args.level or "wgmma_tma"
        _smoke.level_variants([(level, {})])
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            render(smoke_recording(folder, level, args.size), folder, level, args.size,
                   made_up=True)
        return _smoke.needs_gpu()
    if args.out is None:
        ap.error("--out DIR is needed (the recording and the chart go there)")
    args.out.mkdir(parents=True, exist_ok=True)
    level = args.level or best_level(BUNDLED, args.size)
    print(f"level: {level} (reference {registry.get(level).reference}), {args.size}³, "
          f"operands {', '.join(operands)}", flush=True)
    path = args.source or record(args.out, level, args.size, operands, args)
    render(path, args.out, level, args.size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
