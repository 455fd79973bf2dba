"""Level names under the bars (app/plots/level_ticks.py): laid out again only when the
names, the axis's width or the type changed."""

from __future__ import annotations

import pyqtgraph as pg

from gemmscope.app.plots import level_ticks
from gemmscope.app.plots.level_ticks import NameAxis

NAMES = ["naive", "coalesced", "smem_tiled", "register_2d", "warp_tiling", "wgmma_tma"]


def test_the_same_names_at_the_same_width_are_not_fitted_again(qtbot, monkeypatch):
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(600, 300)
    plot.show()
    qtbot.waitExposed(plot)
    names = NameAxis(plot.getPlotItem(), 10)
    fits: list[int] = []
    real_fit = level_ticks.fit_names
    monkeypatch.setattr(level_ticks, "fit_names",
                        lambda *a, **k: fits.append(1) or real_fit(*a, **k))
    first = names.place(NAMES)
    assert fits and first is not None
    ticks = list(names.ticks)
    fits.clear()
    assert names.place(NAMES) == first and not fits  # a value changed, not the names
    assert names.ticks == ticks
    names.place(NAMES[:-1])  # a level less: fitted again
    assert fits
    fits.clear()
    names.forget()  # the axis was cleared (an empty chart)
    names.place(NAMES[:-1])
    assert fits and [t for _, t in names.ticks if t.strip()]
    fits.clear()
    plot.resize(900, 300)  # wider: fitted again
    qtbot.waitUntil(lambda: plot.getPlotItem().vb.width() > 700)
    names.place(NAMES[:-1])
    assert fits
