"""Colours and fonts in one place: the charts' normal and high-contrast presentation themes,
the status colours every panel shares, and the palette of the animated views (tests read
it back from pixels)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from PySide6.QtGui import QColor

# one colour per precision class, used by bars, curves and the ladder table
PRECISION_COLORS = {
    "fp32": "#1f77b4",  # blue
    "tf32": "#17becf",  # cyan
    "fp16": "#ff7f0e",  # orange
    "bf16": "#9467bd",  # purple
    "fp8": "#d62728",  # red
}
UNKNOWN_COLOR = "#7f7f7f"
# status colours, shared by the ladder table, the bars, the run form and the telemetry
THROTTLE_COLOR = "#d46a00"  # a run whose clocks were held back
FAILED_COLOR = "#d62728"  # a run that failed, a field that is refused
# the stage's check boxes: their frame (contrast 9.6 on black) and the check drawn in it
INDICATOR_BORDER = "#b0b0b0"
STAGE_CHECK = "stage-check.svg"


def precision_color(precision: str) -> str:
    return PRECISION_COLORS.get(precision, UNKNOWN_COLOR)


# text on a coloured fill (a tile, a lane, a bank, a warpgroup's box): WCAG's ratio for text
TEXT_CONTRAST = 4.5


def relative_luminance(color: QColor) -> float:
    """WCAG 2's relative luminance of an opaque colour (0 black to 1 white)."""

    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return (0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF())
            + 0.0722 * channel(color.blueF()))


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG 2's contrast ratio of two opaque colours, 1 to 21."""
    hi, lo = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def over(fill: QColor, backdrop: QColor) -> QColor:
    """``fill`` as it shows over ``backdrop`` (a translucent fill lets it through)."""
    a = fill.alphaF()
    return QColor.fromRgbF(*(a * f + (1 - a) * b for f, b in zip(
        (fill.redF(), fill.greenF(), fill.blueF()),
        (backdrop.redF(), backdrop.greenF(), backdrop.blueF()), strict=True)))


def readable_on(fill: QColor, preferred: QColor, backdrop: QColor | None = None) -> QColor:
    """The colour for text on ``fill``: ``preferred`` where it keeps TEXT_CONTRAST, else
    black or white by the fill's luminance, whichever contrasts more (one of them always
    keeps at least 4.58:1). ``backdrop``: what a translucent fill is painted over."""
    if fill.alpha() < 255:
        fill = over(fill, backdrop if backdrop is not None else QColor("black"))
    if preferred.alpha() == 255 and contrast_ratio(preferred, fill) >= TEXT_CONTRAST:
        return preferred
    black, white = QColor("black"), QColor("white")
    return black if contrast_ratio(black, fill) >= contrast_ratio(white, fill) else white


# one colour per GPU of a session (the device comparison bars), in device order
DEVICE_COLORS = ("#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#c53030", "#319795",
                 "#b7791f", "#d53f8c")


def device_color(device: int) -> str:
    return DEVICE_COLORS[device % len(DEVICE_COLORS)]
# markers of the levels within one precision (a sweep's curves): shade and marker both differ
LEVEL_SYMBOLS = ("o", "s", "t", "d", "h", "star", "p", "t1", "x", "+", "t2", "t3")


# a user's kernels (File ▸ Open kernel…, --kernel): colours of their own, outside the
# precisions' hues, in the order they joined the session
USER_COLORS = ("#e040fb", "#00bfa5", "#ffab00", "#ff5252")


def level_colors(levels: list[tuple[str, str, bool]] | list[tuple[str, str, bool, bool]]
                 ) -> dict[str, str]:
    """A colour per level: the hue of its precision, a shade per level within it (dark to
    light in ladder order). ``levels``: (id, precision, is_reference[, is_user]) in catalog
    order; a reference takes its precision's own colour (it is told apart by its
    dashes/hatching); a user's kernel takes one of USER_COLORS."""
    by_precision: dict[str, list[str]] = {}
    references: dict[str, list[str]] = {}
    out: dict[str, str] = {}
    users = [entry[0] for entry in levels if len(entry) > 3 and entry[3]]
    for i, level_id in enumerate(users):
        out[level_id] = USER_COLORS[i % len(USER_COLORS)]
    for level_id, precision, reference, *_user in levels:
        if level_id in out:
            continue
        (references if reference else by_precision).setdefault(precision, []).append(level_id)
    for precision, ids in references.items():
        base = QColor(precision_color(precision))
        for i, level_id in enumerate(ids):  # a second reference (FP8: block scales): lighter
            out[level_id] = base.name() if i == 0 else QColor.fromHslF(
                base.hslHueF(), base.hslSaturationF(),
                min(0.85, base.lightnessF() + 0.18 * i)).name()
    for precision, ids in by_precision.items():
        base = QColor(precision_color(precision))
        h, s, lightness = base.hslHueF(), base.hslSaturationF(), base.lightnessF()
        n = len(ids)
        for i, level_id in enumerate(ids):
            if n == 1:  # darker than the base, which is the reference's
                out[level_id] = QColor.fromHslF(h, s, max(0.12, lightness - 0.12)).name()
                continue
            # from darker to lighter than the base, over a span that keeps them apart;
            # none takes the base itself, which is the reference's
            # (an even count of evenly spaced shades has none at the centre)
            m = n + n % 2
            span = min(0.5, 0.08 * (m - 1))
            shade = lightness - span / 2 + span * i / (m - 1)
            out[level_id] = QColor.fromHslF(h, s, max(0.12, min(0.85, shade))).name()
    return out


def level_symbol(index_in_precision: int) -> str:
    return LEVEL_SYMBOLS[index_in_precision % len(LEVEL_SYMBOLS)]


@dataclass(frozen=True, slots=True)
class Theme:
    name: str
    background: str
    foreground: str
    grid_alpha: float
    font_pt: int
    line_px: int
    # the smallest text the theme lets anything shrink to (0: no floor); on stage a text
    # that would need less is cut with "…" and a tooltip, or moved, never made smaller
    min_text_px: int = 0

    def stylesheet(self) -> str:
        if self.name == "normal":
            return ""
        return (f"QWidget {{ background: {self.background}; color: {self.foreground}; "
                f"font-size: {self.font_pt}pt; }} "
                f"QHeaderView::section {{ background: #202020; color: {self.foreground}; }} "
                "QTableWidget { gridline-color: #606060; } "
                "QPushButton:disabled, QLineEdit:disabled { color: #707070; } "
                "QTabBar::tab:selected { background: #303030; } " + self._indicators())

    def _indicators(self) -> str:
        """Check boxes drawn by the sheet: with a sheet's background, the style drew an
        unchecked box in the background's own colour (black on black: no box at all)."""
        box = round(self.font_pt * 96 / 72 * 0.8)
        check = Path(str(resources.files("gemmscope.resources") / STAGE_CHECK)).as_posix()
        return (f"QCheckBox::indicator {{ width: {box}px; height: {box}px; "
                f"border: 2px solid {INDICATOR_BORDER}; border-radius: 3px; "
                f"background: {self.background}; }} "
                f"QCheckBox::indicator:checked {{ image: url({check}); }} "
                f"QCheckBox::indicator:hover {{ border-color: {self.foreground}; }} "
                "QCheckBox::indicator:disabled { border-color: #606060; }")


NORMAL = Theme("normal", background="#ffffff", foreground="#202020", grid_alpha=0.25,
               font_pt=10, line_px=1)
PRESENTATION = Theme("presentation", background="#000000", foreground="#ffffff",
                     grid_alpha=0.4, font_pt=20, line_px=3, min_text_px=18)
STAGE_TEXT_PX = PRESENTATION.min_text_px  # readable from the back of a room


def px_to_pt(px: float) -> float:
    """Points that render ``px`` pixels tall (the em) on the primary screen."""
    from PySide6.QtGui import QGuiApplication

    screen = QGuiApplication.primaryScreen()
    dpi = screen.logicalDotsPerInchY() if screen is not None else 96.0
    return px * 72.0 / (dpi or 96.0)


def min_text_pt(theme: Theme, fallback: float = 0.0) -> float:
    """The theme's floor in points (``fallback`` where it has none)."""
    return px_to_pt(theme.min_text_px) if theme.min_text_px else fallback

@dataclass(frozen=True, slots=True)
class AnimationColors:
    background: str = "#1e1f24"
    panel: str = "#2a2c33"
    grid: str = "#4a4d57"
    text: str = "#e6e6e6"
    muted_text: str = "#9aa0aa"
    a_operand: str = "#3d8bfd"  # A tiles
    a_panel: str = "#26446e"  # the selected block's A row panel
    b_operand: str = "#f59f00"  # B tiles
    b_panel: str = "#6b4a12"
    c_block: str = "#20c997"  # the selected block of C
    c_done: str = "#1b5e4b"
    warp: str = "#845ef7"
    thread: str = "#ff6b9a"
    stage_empty: str = "#33363f"
    stage_filling: str = "#5c7cfa"
    stage_ready: str = "#2f9e44"
    stage_consuming: str = "#f08c00"
    # warp-specialized levels: the producer warpgroup and each consumer warpgroup's rows
    producer: str = "#cc5de8"
    consumer_0: str = "#22b8cf"
    consumer_1: str = "#d9e021"
    sm_tile: str = "#3b4a6b"  # tiles the selected SM computes later (persistent levels)
    conflict: str = "#fa5252"
    ok: str = "#40c057"
    unused: str = "#3a3d46"
    selection: str = "#ffffff"

    def color(self, name: str) -> QColor:
        return QColor(getattr(self, name))

    def consumer(self, index: int) -> QColor:
        """The colour of consumer warpgroup ``index`` (two colours, alternating)."""
        return self.color(f"consumer_{index % 2}")

    @staticmethod
    def lane(lane: int) -> QColor:
        """One colour per lane of a warp, spread round the hue circle."""
        return QColor.fromHsv((lane * 360 // 32 * 7) % 360, 150, 235)

    @staticmethod
    def bank(bank: int) -> QColor:
        """One colour per bank (0-31), distinct from neighbours."""
        return QColor.fromHsv((bank * 11 % 32) * 360 // 32, 110, 200)


ANIMATION = AnimationColors()

# the Code view: one colour per SASS instruction class (kernels.sass.CLASSES), the same in
# the SASS panel and the instruction-mix chart; shared loads in greens, global in blues
SASS_CLASS_COLORS = {
    "FFMA": "#d62728", "HMMA": "#e377c2", "HGMMA": "#9467bd",
    "LDS": "#2ca02c", "LDS.128": "#1b7a1b", "LDSM": "#8fbf3f", "STS": "#bcbd22",
    "STSM": "#8a8b10", "LDG": "#1f77b4", "LDGSTS": "#17becf", "UTMALDG": "#3d5a98",
    "UTMASTG": "#6f86c0",
    "BAR": "#ff7f0e", "LDL": "#8c564b", "STL": "#b07a5a", "other": "#9a9a9a",
}
# side-by-side diff backgrounds (light, under dark text)
DIFF_COLORS = {"insert": "#c8f0c8", "replace": "#fff0b0", "delete": "#f8c8c8"}
SASS_SELECTION = "#ffe08a"  # SASS lines of the clicked source line
SOURCE_HEAT = "#e8453c"  # per-line counters: the hottest line, lighter ones towards white
# CUDA C++ syntax highlighting
SYNTAX_COLORS = {"keyword": "#0b41a8", "comment": "#6a737d", "string": "#a31515",
                 "number": "#098658", "preprocessor": "#7a3e9d"}
