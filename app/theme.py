"""Colours and fonts: one place, a normal and a high-contrast presentation theme."""

from __future__ import annotations

from dataclasses import dataclass

# one colour per precision class, used by bars, curves and the ladder table
PRECISION_COLORS = {
    "fp32": "#1f77b4",  # blue
    "tf32": "#17becf",  # cyan
    "fp16": "#ff7f0e",  # orange
    "bf16": "#9467bd",  # purple
    "fp8": "#d62728",  # red
}
UNKNOWN_COLOR = "#7f7f7f"


def precision_color(precision: str) -> str:
    return PRECISION_COLORS.get(precision, UNKNOWN_COLOR)


@dataclass(frozen=True, slots=True)
class Theme:
    name: str
    background: str
    foreground: str
    grid_alpha: float
    font_pt: int
    line_px: int

    def stylesheet(self) -> str:
        if self.name == "normal":
            return ""
        return (f"QWidget {{ background: {self.background}; color: {self.foreground}; "
                f"font-size: {self.font_pt}pt; }} "
                f"QHeaderView::section {{ background: #202020; color: {self.foreground}; }} "
                "QTableWidget { gridline-color: #606060; } "
                "QPushButton:disabled, QLineEdit:disabled { color: #707070; } "
                "QTabBar::tab:selected { background: #303030; }")


NORMAL = Theme("normal", background="#ffffff", foreground="#202020", grid_alpha=0.25,
               font_pt=10, line_px=1)
PRESENTATION = Theme("presentation", background="#000000", foreground="#ffffff",
                     grid_alpha=0.4, font_pt=20, line_px=3)
