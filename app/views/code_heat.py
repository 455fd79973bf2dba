"""The Code view's per-line counters: a metric selector with what it shows (or why
nothing is shown), and the heat colours of SASS and source lines.

The values come from :mod:`gemmscope.app.core.source_heat` (Qt-free); this module turns
them into colours and the widget the view places above its SASS panel.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QPushButton,
    QSizePolicy,
    QWidget,
)

from ..core.source_heat import METRIC_TEXT, Metric, intensity
from ..theme import SOURCE_HEAT
from ..widgets.fitting import ElidedLabel
from ..widgets.plain import plain_tooltip

MIN_SHARE = 0.12  # the faintest heat, so that a line with any count shows one


def heat_color(share: float) -> str:
    """The heat colour of a value at ``share`` (0..1) of the largest: from near white to
    SOURCE_HEAT."""
    hot, t = QColor(SOURCE_HEAT), MIN_SHARE + (1 - MIN_SHARE) * max(0.0, min(1.0, share))
    mix = [round(255 + (c - 255) * t) for c in (hot.red(), hot.green(), hot.blue())]
    return QColor(*mix).name()


def heat_colors(values: list[float | None]) -> dict[int, str]:
    """Index -> colour for each value above zero; zeros and unknowns get none."""
    return {i: heat_color(share) for i, (v, share) in enumerate(zip(values, intensity(values),
                                                                     strict=True))
            if v and share is not None}


PER_LINE = "per line:"


class HeatBar(QWidget):
    """Which counter the heat map shows, and what it is (or why there is none)."""

    metric_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.box = QComboBox()
        for metric in Metric:
            self.box.addItem(METRIC_TEXT[metric], metric.value)
        self.box.currentIndexChanged.connect(
            lambda _: self.metric_changed.emit(self.chosen().value))
        # its width from a fixed number of characters, not from its longest item at
        # whatever font it first met (a stage's 20 pt made the Code view 1100 px wide)
        self.box.setMinimumContentsLength(18)
        self.box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        # one line, cut with "…" where the column is narrow (a projector's): the tooltip
        # holds the whole text, which can be long (a reason from the recording); plain
        # text, never markup (recording text is data)
        self.text = ElidedLabel()
        # where ncu profiled another build of the level than the one shown (a level that
        # picks its parameters per shape), a switch to it and back; hidden otherwise. On
        # a row of its own, and free to shrink (its text cut, whole in its tooltip):
        # parameters from a recording must not widen the window past a projector's
        self.switch = QPushButton()
        self.switch.setAutoDefault(False)
        self.switch.setMinimumWidth(1)
        self.switch.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.switch.hide()
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.lead = ElidedLabel(PER_LINE)  # on stage the SASS's title too: may be cut
        layout.addWidget(self.lead, 0, 0)
        layout.addWidget(self.box, 0, 1)
        layout.setColumnStretch(2, 1)
        layout.addWidget(self.text, 1, 0, 1, 3)
        layout.addWidget(self.switch, 2, 0, 1, 3, Qt.AlignmentFlag.AlignLeft)

    def chosen(self) -> Metric:  # (not "metric": that would shadow QWidget.metric())
        return Metric(self.box.currentData())

    def set_metric(self, metric: Metric) -> None:
        self.box.setCurrentIndex(self.box.findData(metric.value))

    def show_text(self, text: str) -> None:
        self.text.setText(text)

    def offer_switch(self, text: str | None) -> None:
        """Show the switch with this text (plain: it names parameters from the
        recording), or hide it (None)."""
        if text is None:
            self.switch.hide()
            return
        self.switch.setText(text.replace("&", "&&"))  # an "&" in data is no shortcut
        self.switch.setToolTip(plain_tooltip(text))
        self.switch.show()
