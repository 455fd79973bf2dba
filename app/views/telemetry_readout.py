"""What the Telemetry tab says of a moment: the hover text of its plots (the run at that
session time and each shown curve's nearest sample), and what its strips show, read back
by tests."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from ..core.store import SessionStore
from ..core.telemetry import RunWindow
from ..plots.telemetry_strips import ReasonStrip, RunLabels, window_label
from .telemetry_spec import CURVES, UNITS


class TelemetryReadout:
    """Mixed into TelemetryView (which makes the curves, the strips and the windows)."""

    store: SessionStore | None
    windows: list[RunWindow]
    labels: RunLabels
    reasons: ReasonStrip
    curves: dict[str, pg.PlotDataItem]
    _power_label: str

    def _describe_at(self, plot_name: str, t: float, _y: float) -> str | None:
        """A hover readout's text (its height is not used)."""
        return self.describe(plot_name, t)

    def describe(self, plot_name: str, t: float) -> str | None:
        """Hover text: the run at session time ``t``, and the plot's sample nearest it."""
        if self.store is None:
            return None
        lines = [f"{t:.2f} s"]
        i = int(np.searchsorted(self.labels.x, t, side="right")) - 1
        if 0 <= i < len(self.windows) and self.windows[i].end_s >= t:
            w = self.windows[i]
            lines.append(window_label(w) + (f" ({', '.join(w.throttled)})" if w.throttled
                                            else ""))
        tele = self.store.telemetry
        times = tele.times()
        if len(times):
            k = min(int(np.searchsorted(times, t)), len(times) - 1)  # the nearest sample
            if k > 0 and abs(times[k - 1] - t) <= abs(times[k] - t):
                k -= 1
            for field, (name, legend, _color, _dashed) in CURVES.items():
                if name == plot_name and self.curves[field].isVisible():
                    value = tele.arrays(field)[1][k]
                    if field == "power_w" and self._power_label:
                        legend = self._power_label  # says which kind of reading
                    if np.isfinite(value):
                        lines.append(f"{legend}: {value:.4g} {UNITS[name]}")
            if plot_name == "reasons":
                active = self.reasons.active_at(t)
                lines.append("active: " + (", ".join(active) if active else "none"))
        return "\n".join(lines)

    # read back by tests: what the strips show
    @property
    def run_labels(self) -> list[pg.TextItem]:
        return self.labels.labels

    @property
    def reason_rows(self) -> list[str]:
        return self.reasons.rows

    @property
    def reason_bars(self) -> pg.BarGraphItem:
        return self.reasons.bars

    def reason_spans(self, reason: str) -> np.ndarray:
        return self.reasons.spans(reason)

