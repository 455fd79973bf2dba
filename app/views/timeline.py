"""Timeline view (issue 46): what each SM, block and warpgroup did, and when, measured by a
level's trace build, beside the modelled animation of the same level (the Tiling view's).

Overview: one lane per SM, each block's pieces of output tiles on it over time, coloured
by tile (shade: its wave); idle SMs hatched, the tail (after the first SM ran out of work)
shaded. Zoom to one SM: a row per block lane (producer, consumers; a SIMT block's thread
0), coloured by phase. Hover names block, tile, SM and times. The shape and level are the
view state's; without a measured trace of them it shows a synthetic one made from the
model, and says so. Exports: PNG, SVG, and the Chrome trace JSON that Perfetto opens.
The numbers come from app/core/trace_timeline.py, the drawing from
app/views/timeline_canvas.py; this module lays the two halves out and keeps them in step."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ...kernels.ladder import Shape
from ...kernels.protocol import SAMPLE_WINDOW, Trace, leaves_steps_out
from ...kernels.results import counted
from ...kernels.toolchain import traceable
from ..core import trace_timeline as tt
from ..core.store import Change, SessionStore
from ..core.view_state import DEFAULT_SHAPE
from ..theme import Theme
from ..widgets.fitting import ElidedLabel
from .animated_canvas import AnimatedCanvas
from .base import View
from .tiling import TilingView
from .timeline_canvas import EXPORT_SIZE, TimelineCanvas

CHANGES = frozenset({Change.TRACE, Change.LADDER, Change.HEADER})
MIN_TIMELINE_PX = 170  # the measured half's least height: its row of controls, lanes, notes
MIN_LANES_PX = 48  # the lanes' least height: a stage-type SM label and the rows by it
KEEP_TIMELINES = 8  # timelines kept for going back to a level (each the size of its trace)


class TimelineView(QWidget, View):
    """The Timeline tab: the modelled animation (left) and the measured timeline (right)."""

    def __init__(self, level_id: str = "wgmma_tma", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store: SessionStore | None = None
        self.level_id = level_id
        self.shape: Shape = DEFAULT_SHAPE
        self.trace: Trace | None = None
        self.timeline: tt.TraceTimeline | None = None
        self._synthetic: dict[tuple[str, Shape], Trace] = {}
        # the timelines made lately, by trace (a trace is never changed once decoded): going
        # back to a level shows its timeline again without building it again (0.1-0.4 s)
        self._built: dict[int, tuple[Trace, tt.TraceTimeline]] = {}
        self._behind = False  # hidden when the level, shape or store last changed
        self.model = TilingView(level_id)
        self.canvas = TimelineCanvas()
        self.title = ElidedLabel("")
        self.zoom_box = QComboBox()
        self.zoom_box.currentIndexChanged.connect(self._on_zoom)
        self.png_button, self.svg_button = QPushButton("PNG…"), QPushButton("SVG…")
        self.json_button = QPushButton("Perfetto JSON…")
        for button, suffix in ((self.png_button, "png"), (self.svg_button, "svg"),
                               (self.json_button, "json")):
            button.clicked.connect(lambda _=False, s=suffix: self._ask_export(s))
        # one line under the timeline: what the pointer is on, else the notes (whole in
        # the tooltip where cut)
        self.hover_line = ElidedLabel("")
        self.notes = ElidedLabel("")
        self.canvas.hovered.connect(self._on_hover)

        controls = QHBoxLayout()
        controls.addWidget(self.title, 1)
        controls.addWidget(QLabel("zoom"))
        controls.addWidget(self.zoom_box)
        for b in (self.png_button, self.svg_button, self.json_button):
            controls.addWidget(b)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addLayout(controls)
        rl.addWidget(self.canvas, 1)
        rl.addWidget(self.hover_line)
        rl.addWidget(self.notes)
        self.hover_line.hide()
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        self.model_title = ElidedLabel("the model says")
        ll.addWidget(self.model_title)
        ll.addWidget(self.model, 1)
        # the model above the measurement, each the window's whole width: the Tiling view's
        # picture needs it (beside each other, at 1280 pixels its captions were cut)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.split = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(split)

    def showEvent(self, event: object) -> None:
        super().showEvent(event)  # type: ignore[arg-type]
        if self._behind:
            self._show()
        self._fit_split()

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self._fit_split()

    def _fit_split(self) -> None:
        """The model's picture first (it has the most text to fit): the height its canvas
        asks for at this width, its title and playback bar, the rest to the timeline."""
        h = self.split.height()
        if h < 2:
            return
        canvas = self.model.canvas
        bar = self.model.bar.sizeHint().height() if self.model.bar.isVisibleTo(self) else 0
        title = (self.model_title.sizeHint().height()
                 if self.model_title.isVisibleTo(self) else 0)
        need = canvas.picture_height(max(1, self.split.width())) + bar + title + 24
        least = self.timeline_least()
        top = min(max(round(h * 0.5), min(need, h - least)), h - least)
        self.split.setSizes([top, h - top])

    def timeline_least(self) -> int:
        """The measured half's least height in this type: its row of controls, the axis,
        the notes line and MIN_LANES_PX of lanes (on stage the type is larger: a fixed
        least left the lanes a few pixels high at 1280 x 720)."""
        row = max(self.title.sizeHint().height(), self.zoom_box.sizeHint().height())
        return max(MIN_TIMELINE_PX, row + self.notes.sizeHint().height()
                   + round(self.canvas.TOP + self.canvas.BOTTOM) + MIN_LANES_PX + 16)

    def _on_hover(self, text: str) -> None:
        self.hover_line.setText(text)
        self.hover_line.setVisible(bool(text))
        self.notes.setVisible(not text)

    # ------------------------------------------------------------------ View
    def bind(self, store: SessionStore) -> None:
        self.store = store
        self.model.bind(store)
        self.refresh(set(Change))

    def refresh(self, changes: set[Change]) -> None:
        if self.store is None or not changes & CHANGES:
            return
        self.shape = self.store.view.state.shape or DEFAULT_SHAPE
        self._show()

    def set_level(self, level_id: str) -> bool:
        """Any level: its model animates above; a level without a trace build (and no
        trace in the recording) says so where the timeline would be."""
        if not self.model.set_level(level_id):
            return False
        self.level_id = level_id
        self._show()
        self._fit_split()
        return True

    def set_animated(self, on: bool) -> None:
        self.model.set_animated(on)

    def apply_theme(self, theme: Theme) -> None:
        self.model.apply_theme(theme)
        # on stage the model's playback bar goes (the talk's keys step the animation): its
        # stage type wraps it onto lines the two pictures need at 1280 x 720
        self.model.bar.setVisible(theme.name == "normal")
        self.model_title.setVisible(theme.name == "normal")
        # the export buttons are the desk's (File ▸ Export makes the talk's pictures): on
        # stage their width goes to the title, which says measured or synthetic
        for button in (self.png_button, self.svg_button, self.json_button):
            button.setVisible(theme.name == "normal")
        self.canvas.set_colours(theme.foreground, theme.background)
        sheet = "" if theme.name == "normal" else f"color: {theme.foreground}"
        for label in (self.title, self.hover_line, self.notes, self.model_title):
            label.setStyleSheet(sheet)

    def animation(self) -> AnimatedCanvas | None:
        return self.model.canvas

    # ------------------------------------------------------------------ content
    def chosen_trace(self) -> Trace | None:
        """The store's trace of the level at the view state's shape, else its trace at
        another shape, else a synthetic one of the model at the shape."""
        if self.store is not None:
            found = self.store.traces.get((self.level_id, self.shape))
            if found is None:
                others = [t for (lv, _), t in self.store.traces.items() if lv == self.level_id]
                found = others[-1] if others else None
            if found is not None:
                return found
        if not traceable_id(self.level_id):
            return None
        key = (self.level_id, self.shape)
        if key not in self._synthetic:
            try:
                self._synthetic[key] = tt.synthetic(self.level_id, self.shape)
            except ValueError:  # a shape the level refuses
                return None
        return self._synthetic[key]

    def _timeline_of(self, trace: Trace) -> tt.TraceTimeline:
        made = self._built.pop(id(trace), None)
        if made is None or made[0] is not trace:
            made = (trace, tt.build(trace))
        self._built[id(trace)] = made  # (last: the newest)
        while len(self._built) > KEEP_TIMELINES:
            del self._built[next(iter(self._built))]
        return made[1]

    def _show(self) -> None:
        """Bring the title, notes and timeline up to the level, shape and store; while the
        tab is hidden, only noted (a synthetic trace takes a fifth of a second to make, and
        every level change reaches every view): showEvent catches up."""
        self._behind = not self.isVisible()
        if self._behind:
            return
        trace = self.chosen_trace()
        if trace is not self.trace:
            self.trace = trace
            self.timeline = self._timeline_of(trace) if trace is not None else None
            self._fill_zoom()
        self.canvas.empty_text = self._title()
        self.canvas.set_timeline(self.timeline, self.zoom_box.currentData())
        # with no timeline the lanes say why, once; the line above names what is missing,
        # and the zoom and the exports wait for a timeline
        has = self.timeline is not None
        self.title.setText(self._title() if has else
                           f"{self.level_id} {self.shape}: no timeline to show (below: why)")
        if self.zoom_box.count() == 0:
            self._fill_zoom()
        for widget in (self.zoom_box, self.png_button, self.svg_button, self.json_button):
            widget.setEnabled(has)
        self.notes.setText(self._notes())
        summary = self._model_summary()
        self.model_title.setText(f"the model says ({self.level_id}, {self.shape})"
                                 + (f": {summary}" if summary else ""))

    def _fill_zoom(self) -> None:
        self.zoom_box.blockSignals(True)
        self.zoom_box.clear()
        self.zoom_box.addItem("all SMs", None)
        if self.timeline is not None:
            for sm in self.timeline.sms_with_phases():
                self.zoom_box.addItem(f"SM {sm}", sm)
        self.zoom_box.blockSignals(False)

    def zoom(self, sm: int | None) -> None:
        """Zoom to one SM (None: every SM)."""
        i = self.zoom_box.findData(sm)
        self.zoom_box.setCurrentIndex(max(0, i))

    def _on_zoom(self, _index: int) -> None:
        sm = self.zoom_box.currentData()
        self.canvas.set_timeline(self.timeline, sm)
        if sm is not None and self.timeline is not None:
            block = next((b for b, (s, _, _) in self.timeline.block_spans.items() if s == sm),
                         None)
            scene = getattr(self.model.canvas, "scene", None)
            if block is not None and scene is not None and self.timeline.trace.tiles:
                self.model.canvas.select_sm(block)  # type: ignore[attr-defined]

    def _title(self) -> str:
        t = self.trace
        if t is None:
            if not traceable_id(self.level_id):
                return f"{self.level_id} {self.shape}: no trace build of this level; {_with_one()}"
            return f"{self.level_id} {self.shape}: no trace (the level refuses the shape)"
        # whether it was measured first: where the line is cut (on stage), that stays
        what = ("SYNTHETIC, not measured (the model's schedule, invented times)"
                if t.synthetic else "Measured by the trace build")
        where = "" if t.shape == self.shape else f" (the shape chosen is {self.shape})"
        cost = (f"; trace build {t.overhead_pct:+.1f}% over plain" if t.overhead_pct is not None
                else "")
        return f"{what}: {t.level} {t.shape}{where}{cost}"

    def _notes(self) -> str:
        tl = self.timeline
        if tl is None:
            return ""
        t = tl.trace
        parts = [f"{len(tl.block_spans)} blocks on {tl.sm_count - len(tl.idle_sms)} of "
                 f"{tl.sm_count} SMs, {tl.waves()} waves; {len(tl.idle_sms)} idle SMs; "
                 f"tail {(tl.makespan_ns - tl.tail_start_ns) / 1000:.1f} of "
                 f"{tl.makespan_ns / 1000:.1f} µs"]
        mhz = tt.launch_clock_mhz(t.ns_per_cycle)
        if mhz is not None:  # what the SMs ran at, read in the kernel's own time frame
            parts.append(f"SM clock in the launch {mhz:.0f} MHz (clock64 over %globaltimer)")
        if not tl.records_k_steps():
            parts.append("no K steps recorded (the level stages no K tiles): each block "
                         "from its begin to its end")
        elif leaves_steps_out(t.stage_every):  # before the shares it qualifies
            parts.append(f"K steps sampled, {SAMPLE_WINDOW} in every {t.stage_every}: "
                         "their phases only")
        share = tl.phase_share()
        if share:
            parts.append("lane time: " + ", ".join(f"{p.value} {v:.0%}"
                                                    for p, v in share.items()))
        if t.stage_sms is not None:
            parts.append(f"K-stage events of SMs {', '.join(map(str, t.stage_sms[:12]))}"
                         f"{'…' if len(t.stage_sms) > 12 else ''} only (the event's bound)")
        if t.full_lanes or t.lost_blocks:
            parts.append(f"⚠ {counted(t.full_lanes, 'lane')} ran out of slots, "
                         f"{counted(t.lost_blocks, 'block')} found none: events missing")
        return "; ".join(parts)

    def _model_summary(self) -> str:
        t = self.trace
        if t is None or t.grid is None or not t.tiles:
            return ""
        if t.grid >= t.tiles:
            return f"{t.tiles} tiles, one per block, {t.grid} blocks"
        per, extra = divmod(t.tiles, t.grid)
        return (f"{t.tiles} tiles over {t.grid} persistent blocks: {per + 1} on {extra}, "
                f"{per} on {t.grid - extra}" if extra else f"{per} tiles on each of {t.grid}")

    # ------------------------------------------------------------------ exports
    def export(self, path: str | Path, size: QSize = EXPORT_SIZE) -> Path:
        """The timeline as a picture (.png, .svg) or as Chrome trace JSON (.json)."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".png":
            self.canvas.save_png(path, size)
        elif suffix == ".svg":
            self.canvas.save_svg(path, size)
        elif suffix == ".json":
            if self.timeline is None:
                raise ValueError("no trace to export")
            path.write_text(json.dumps(self.timeline.chrome_trace()), encoding="utf-8")
        else:
            raise ValueError(f"{path.name}: .png, .svg or .json")
        return path

    def _ask_export(self, suffix: str) -> None:
        from PySide6.QtWidgets import QFileDialog, QMessageBox

        name = f"timeline-{self.level_id}-{self.shape.M}x{self.shape.N}x{self.shape.K}.{suffix}"
        path, _ = QFileDialog.getSaveFileName(self, "Export the timeline", name)
        if not path:
            return
        try:
            self.export(path)
        except (OSError, ValueError) as exc:
            QMessageBox.warning(self, "Export", str(exc))


def TRACED_IDS() -> list[str]:  # the constant it is, made when first asked
    from ...kernels import ladder

    return [lv.id for lv in ladder.ladder() if traceable(lv)]


def _with_one() -> str:
    """Which levels have a trace build, in a few words where that is all of the ladder."""
    from ...kernels import ladder

    ids = TRACED_IDS()
    if len(ids) == len(ladder.ladder()):
        return "every ladder level has one (this is a library call or a user's kernel)"
    return f"the levels with one: {', '.join(ids)}"


def traceable_id(level_id: str) -> bool:
    from ...kernels.ladder import BY_ID

    level = BY_ID.get(level_id)
    return level is not None and traceable(level)
