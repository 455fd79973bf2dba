"""The rows the Charts tab's charts draw, read from the store: the charts are handed them
(``set_rows``) and never read the store themselves (issue 44 item 2), so each can be drawn
from rows alone (tests/app/plots/test_charts_take_rows.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...kernels.results import Result, sustained_ratio
from ..core.baseline_run import baseline_result
from ..core.store import SessionStore
from ..core.view_state import shape_text
from ..plots.charts import EMPTY_SWEEP, NO_LEVEL, StreamRows, SweepRows
from ..plots.device_bars import DeviceResult, DeviceRows
from ..plots.ladder_bar_rows import EMPTY_LADDER, BarRow, LadderRows, ReferenceBar
from ..theme import level_colors, level_symbol, precision_color


def _colors(store: SessionStore) -> dict[str, str]:
    return level_colors([(lv.id, lv.precision, lv.is_reference, lv.is_user)
                         for lv in store.levels])


# ------------------------------------------------------------------ the ladder bars
def ladder_empty_text(store: SessionStore) -> str:
    """Why the bars are empty, for the shape and mode the view state shows."""
    shape = store.ladder_shape()
    if shape is None:
        return EMPTY_LADDER
    where = f"at {shape_text(shape)} ({store.mode})"
    coming = store.coming()
    if coming is not None and coming.has_results_at(shape, store.mode, store.device):
        return f"No results {where} replayed yet: the bars fill as the replay reaches them"
    return f"No ladder results {where}: choose another shape or mode, or run the ladder (L)"


def reference_bar(store: SessionStore, r: Result, clock_mhz: float | None = None
                  ) -> ReferenceBar | None:
    """The cuBLAS result at ``r``'s precision and shape, as its bar's line shows it;
    ``clock_mhz``: the reference's clock its per-GHz figure divides by (Row's, inside its
    launches where the session read them), else the one it held."""
    ref = store.reference_result(r)
    if ref is None:
        return None
    clock = clock_mhz or ref.sm_clock_mhz_avg
    per_ghz = ref.tflops / (clock / 1000.0) if clock and clock > 0 else None
    return ReferenceBar(ref.level, ref.tflops, ref.gflop_per_j, per_ghz)


def bar_rows(store: SessionStore) -> list[BarRow]:
    """One row per ladder level with a result at the shape and mode the store shows."""
    rows = []
    colors = _colors(store)
    for lv in store.ladder_levels():
        r = store.ladder_result(lv.id)
        if r is None:
            continue
        row = store.row(r)
        burst = store.burst_result(lv.id, r.shape)
        sustained = store.sustained_result(lv.id, r.shape)
        per_j = sustained if sustained is not None and \
            sustained.gflop_per_j is not None else r
        rows.append(BarRow(
            level=lv.id, precision=r.precision, tflops=r.tflops,
            pct_ref=row.pct_of_reference, pct_peak=row.pct_of_peak, shape=str(r.shape),
            verified=r.verified, gflop_per_j=per_j.gflop_per_j,
            gflop_per_j_mode=str(per_j.mode) if per_j.gflop_per_j is not None else None,
            sustained_tflops=sustained.tflops if sustained else None,
            burst_tflops=burst.tflops if burst else None,
            ratio=sustained_ratio(burst, sustained), throttled=r.throttled,
            color=colors.get(lv.id, precision_color(r.precision)),
            reference=reference_bar(store, r, row.ref_clock_used_mhz),
            baseline_tflops=getattr(baseline_result(store, lv.id), "tflops", None),
            step=row.step_note(), pct_ci=row.pct_interval,
            pairs=r.pairs if row.pct_interval is not None else None,
            pairs_note=row.pairs_note(), tflops_per_ghz=row.tflops_per_ghz,
            pct_clock=row.pct_equal_clocks, pct_clock_ci=row.pct_equal_clocks_interval,
            sm_clock_mhz=row.clock_mhz, ref_clock_mhz=row.ref_clock_used_mhz,
            in_launch=row.in_launch, is_user=lv.is_user))
    return rows


def ladder_rows(store: SessionStore) -> LadderRows:
    """What the ladder bars draw for the shape and mode the view state shows."""
    base = store.baseline
    return LadderRows(tuple(bar_rows(store)), store.ladder_shape(), str(store.mode),
                      store.per_clock, ladder_empty_text(store),
                      Path(base.path).name if base is not None else None,
                      store.replay_pending)


# ------------------------------------------------------------------ the repeats
def stream_empty_text(store: SessionStore) -> str:
    """Why the per-repeat chart is empty, for the view state it shows."""
    state = store.view.state
    if state.level is None:
        return NO_LEVEL
    shape, mode = store.ladder_shape(), store.mode
    coming = store.coming()
    where = f"{state.level} at {shape_text(shape)} ({mode})"
    if coming is not None and coming.has_result(state.level, shape, mode, store.device):
        return f"{where}: not replayed yet; its repeats show when the replay reaches its run"
    return f"No run of {where} yet: its repeats show here when it runs"


def stream_rows(store: SessionStore) -> StreamRows:
    """The repeats of the run the view state points at (its level's latest run at the
    shape and in the mode shown; a run in progress as its repeats arrive)."""
    stream = store.shown_stream()
    if stream is None:
        return StreamRows(mode=str(store.mode), empty_text=stream_empty_text(store),
                          generation=store.generation)
    x, y = stream.arrays()
    level = store.level(stream.level) if stream.level else None
    color = _colors(store).get(level.id, precision_color(level.precision)) if level \
        else "#1f77b4"
    return StreamRows(x, y, stream.expected, stream.level, stream.shape,
                      level.name if level is not None else None,
                      level.precision if level is not None else "", color, str(store.mode),
                      stream_empty_text(store) if not len(x) else "", store.generation)


# ------------------------------------------------------------------ the size sweep
def sweep_style(store: SessionStore, level_id: str,
                colors: dict[str, str]) -> tuple[str, str, bool, int]:
    """Colour, marker, dashed (a reference) and stacking order of a level's curve."""
    level = store.level(level_id)
    color = colors.get(level_id, precision_color(""))
    if level is None:
        return color, "o", False, 0
    if level.is_reference:
        return color, "o", True, 1
    same = [lv.id for lv in store.levels
            if lv.precision == level.precision and not lv.is_reference]
    return color, level_symbol(same.index(level_id)), False, 0


def sweep_coming(store: SessionStore) -> bool:
    """The replay has yet to reach a size sweep in the mode and on the GPU shown."""
    coming = store.coming()
    return coming is not None and coming.has_sweep(store.mode, store.device)


def sweep_rows(store: SessionStore) -> SweepRows:
    """TFLOPS against N of every level measured at two sizes or more, in the session's
    order of levels, each with its style."""
    shown = store.sweeps()
    order = {lv.id: i for i, lv in enumerate(store.levels)}
    colors = _colors(store)
    curves: dict[str, tuple[np.ndarray, np.ndarray]] = {
        level_id: shown[level_id]
        for level_id in sorted(shown, key=lambda k: order.get(k, len(order)))}
    empty = EMPTY_SWEEP
    if sweep_coming(store):
        empty = "Size sweep: not replayed yet; it draws as the replay reaches it"
    return SweepRows(curves, {k: sweep_style(store, k, colors) for k in curves}, empty)


# ------------------------------------------------------------------ GPUs side by side
def device_rows(store: SessionStore) -> DeviceRows:
    """Each ladder level's result on each of the session's GPUs, at the shape and mode
    shown; a level no GPU has a result for is left out."""
    devices = store.device_ids()
    levels: list[str] = []
    results: list[DeviceResult] = []
    for lv in store.ladder_levels():
        found = {d: store.ladder_result(lv.id, d) for d in devices}
        if all(r is None for r in found.values()):
            continue
        levels.append(lv.id)
        for device, r in found.items():
            if r is not None:
                results.append(DeviceResult(lv.id, device, r.tflops, str(r.shape),
                                            r.precision, store.row(r).pct_of_reference,
                                            r.verified))
    return DeviceRows(tuple((d, store.device_text(d)) for d in devices), tuple(levels),
                      tuple(results))
