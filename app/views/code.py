"""The Code tab: inside the selected level, from its ``build`` event.

Its source (highlighted), a side-by-side diff against the previous level of the ladder, the
main loop's SASS coloured by instruction class (clicking a source line selects the
instructions compiled from it), the occupancy and what would change it, and the main-loop
instruction mix of every level. A recording made before build events existed says so.

Where the recording has per-line counters (``source_counters``, ``record --ncu-source``),
the chosen one is a heat map on the SASS lines, with its value, and summed per source line
on the source; where it has none, the bar above the SASS says why.

A new build redraws the mix chart, the source, the diff and the SASS in parts, one a frame
(:meth:`CodeView.step`): all four at once cost more than a 60 Hz frame has during a 16x
replay. A build event that shows what is shown already (a restart's copy) redraws nothing.
"""

from __future__ import annotations

import math
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QLabel,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...kernels.protocol import Build
from ...kernels.toolchain import SassLine, param_changes, parse
from ..core import builds, code_build, library_build, source_heat
from ..core.store import Change, SessionStore
from ..plots.instruction_mix import InstructionMixChart
from ..theme import Theme, min_text_pt
from ..widgets.fitting import scrolling
from .base import DrawnInParts
from .code_heat import PER_LINE, HeatBar, heat_colors
from .code_panels import DiffPanel, SassPanel, SourcePanel, TextPanel, stage_mono_family

SASS_TITLE = "SASS of the main loop"


def plain_label(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)  # recording text is data, never markup
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class CodeView(QWidget, DrawnInParts):
    """Registered as the view ``code``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store: SessionStore | None = None
        self.level_id: str | None = None
        # (not "event": that name would shadow QWidget.event(), which Qt calls)
        self.build: Build | None = None
        self._shown: tuple[Any, ...] | None = None  # (level, its build, the previous one's)
        self._parts: list[str] = []  # what the last change left for the next frames
        self.source_path: str | None = None
        self._mix_drawn: tuple[list[Any], str | None] | None = None
        self.notice = plain_label()
        # the kernels of an opened Nsight Compute report (File ▸ Open Nsight Compute
        # report…): shown only while one is open; a choice shows that kernel here
        self.report_box = QComboBox()
        self.report_box.setToolTip("a kernel of the opened Nsight Compute report")
        self.report_box.setVisible(False)
        self.report_box.activated.connect(self._report_chosen)
        self.file_box = QComboBox()
        self.file_box.currentTextChanged.connect(self._show_file)
        self.source = SourcePanel()
        self.source.line_clicked.connect(self.select_source_line)
        self.diff = DiffPanel()
        self.tabs = QTabWidget()
        self.tabs.addTab(_column(self.file_box, self.source), "Source")
        self.tabs.addTab(self.diff, "Diff")
        self.sass_title = plain_label(SASS_TITLE)
        self.sass = SassPanel()
        self.heat_bar = HeatBar()
        self.heat_bar.metric_changed.connect(lambda _: self._show_heat())
        self.heat_bar.switch.clicked.connect(self._toggle_profiled)
        # levels whose view shows the build ncu profiled rather than the latest run's
        # (the user's choice; the latest run's where the session lacks that build)
        self._profiled: set[str] = set()
        self.heat: source_heat.Heat | None = None
        self._kernel_lines: tuple[Build | None, list[SassLine]] = (None, [])
        sass_box = _column(self.sass_title, self.heat_bar, self.sass)
        top = self.top_split = QSplitter(Qt.Orientation.Horizontal)
        self._desk_sizes: list[list[int]] | None = None  # the splits before the stage
        self._stage = False
        top.splitterMoved.connect(self._keep_desk_split)
        top.addWidget(self.tabs)
        top.addWidget(sass_box)
        self.occupancy = plain_label()
        self.mix = InstructionMixChart()
        bottom = self.bottom = QSplitter(Qt.Orientation.Horizontal)
        occupancy = scrolling(self.occupancy)  # long on a short screen: it scrolls
        # wide enough for its lines not to break after every word (a scroll area's own
        # size hint is small, and the splitter gave it that)
        occupancy.setMinimumWidth(24 * self.fontMetrics().averageCharWidth())
        bottom.addWidget(occupancy)
        bottom.addWidget(self.mix)
        bottom.setStretchFactor(0, 1)
        bottom.setStretchFactor(1, 2)
        bottom.splitterMoved.connect(self._keep_desk_split)
        split = self.split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.splitterMoved.connect(self._keep_desk_split)
        layout = QGridLayout(self)
        layout.addWidget(self.notice, 0, 0)
        layout.addWidget(self.report_box, 0, 1)
        layout.addWidget(split, 1, 0, 1, 2)
        layout.setColumnStretch(0, 1)
        layout.setRowStretch(1, 1)
        self._show()

    # ------------------------------------------------------------------ View
    def bind(self, store: SessionStore) -> None:
        self.store = store
        self._show()

    def refresh(self, changes: set[Change]) -> None:
        """What changed, in parts for the next frames (:meth:`step`)."""
        if Change.BUILD in changes:
            self._fill_report_box()
        if changes & {Change.BUILD, Change.HEADER, Change.LADDER} or (
                Change.COUNTERS in changes and self.level_id in self._profiled):
            self._plan()
        if Change.COUNTERS in changes and "heat" not in self._parts:
            self._parts.append("heat")

    def _fill_report_box(self) -> None:
        report = self.store.report if self.store is not None else None
        keys = [k.key for k in report.kernels] if report is not None else []
        names = [f"{k.key}: {k.kernel.kernel or '?'}"[:120] for k in report.kernels] \
            if report is not None else []
        if [self.report_box.itemData(i) for i in range(self.report_box.count())] != keys:
            self.report_box.clear()
            for key, name in zip(keys, names, strict=True):
                self.report_box.addItem(name, key)
        self.report_box.setVisible(bool(keys))
        if self.level_id in keys:
            self.report_box.setCurrentIndex(keys.index(self.level_id))

    def _report_chosen(self, index: int) -> None:
        key = self.report_box.itemData(index)
        if isinstance(key, str):
            self.set_level(key)

    def set_level(self, level_id: str) -> bool:
        if level_id != self.level_id:
            self.level_id = level_id
            self._show()
        return True

    def charts(self) -> dict[str, pg.PlotWidget]:
        return {"instruction_mix": self.mix}

    def apply_theme(self, theme: Theme) -> None:
        """On stage the code is what the room reads: the source (or diff) and the SASS
        side by side get the whole tab, in type at the theme's floor (20+ lines at
        1280x720), dark on light as in an editor, so the heat and diff colours keep their
        contrast; the occupancy and the instruction mix (File ▸ Export has the mix) hide.
        The normal theme gives every panel its own style back."""
        self.mix.apply_theme(theme)
        stage = theme.name != "normal"
        self.bottom.setVisible(not stage)
        pt = math.ceil(min_text_pt(theme))
        # the controls too, at the floor: their rows are the code's lines
        self.setStyleSheet(f"QWidget {{ font-size: {pt}pt; }}" if stage else "")
        sheet = ""
        if stage:
            sheet = (f"QPlainTextEdit {{ background: #ffffff; color: #202020; "
                     f"font-family: \"{stage_mono_family(pt)}\"; font-size: {pt}pt; }}")
        for panel in self.findChildren(TextPanel):
            panel.setStyleSheet(sheet)
        self._stage = stage
        self._place_sass_title()
        if stage:
            half = max(1, self.top_split.width() // 2)
            self.top_split.setSizes([half, half])
        else:  # the splits the person had before the stage
            for splitter, sizes in zip(self._splitters(), self._desk_sizes or [],
                                       strict=False):
                splitter.setSizes(sizes)

    def _place_sass_title(self) -> None:
        """On stage the SASS's title leads the counter's row ("SASS of the main loop:
        warp-stall samples"): one more line of SASS."""
        self.sass_title.setVisible(not self._stage)
        self.heat_bar.lead.setText(f"{self.sass_title.text()}:" if self._stage else PER_LINE)

    def _splitters(self) -> list[QSplitter]:
        return [self.top_split, self.bottom, self.split]

    def _keep_desk_split(self, *_: object) -> None:
        """The splits of the tab at the desk (shown, or moved by the person), to come back
        to after the stage (whose type reshuffles them before the view hears of it)."""
        if not self._stage and self.top_split.isVisible():
            self._desk_sizes = [s.sizes() for s in self._splitters()]

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._keep_desk_split()

    # ------------------------------------------------------------------ drawing
    def _show(self) -> None:
        """Everything the level shows, now (bound, a level chosen: the user waits)."""
        self._plan()
        self.settle()

    def _plan(self) -> None:
        """The parts a change asks for: the mix chart always (it redraws only what
        changed), the text panels when the level's build or the previous one's shows
        something else than what is shown."""
        store, level_id = self.store, self.level_id
        event = self.shown_build(level_id) if level_id else None
        prev = self.previous_level()
        before = store.build_for(prev) if store and prev else None
        # a replay brings a build event per level, and a restart's copy of each, most of
        # them about other levels
        shown = (level_id, code_build.content(event), code_build.content(before))
        parts = ["mix"]
        if self._shown is None or event is None or shown != self._shown:
            self._shown = shown
            self.build = event
            self.heat = None  # of the previous build until the heat is drawn
            parts += ["source", "diff", "sass"]
        elif event is not self.build:
            self.build = event  # the same content: the newest copy, nothing redrawn
        self._parts += [p for p in parts if p not in self._parts]

    def shown_build(self, level_id: str) -> Build | None:
        """The build shown for a level (code_build.build_shown)."""
        if self.store is None:
            return None
        return code_build.build_shown(self.store, level_id, level_id in self._profiled,
                                      self.library_kernel())

    def library_kernel(self) -> Any:
        """The shown level's library kernel, where it has no build of its own."""
        return None if self.store is None else \
            code_build.library_kernel(self.store, self.level_id)

    def showing_profiled(self) -> bool:
        """Whether the shown build is the one ncu profiled, not the latest run's."""
        return self.store is not None and \
            code_build.showing_profiled(self.store, self.level_id, self.build)

    def _toggle_profiled(self) -> None:
        if self.level_id is None:
            return
        if self.showing_profiled():
            self._profiled.discard(self.level_id)
        else:
            self._profiled.add(self.level_id)
        self._show()

    def _draw_part(self, name: str) -> None:
        if name == "mix":
            self._show_mix()
        elif name == "mix axes":
            self.mix.draw_axes()
        elif name == "source":
            self._draw_source()
        elif name == "diff":
            self._draw_diff()
        elif name == "sass":
            self._draw_sass()
        elif name == "heat":
            self._show_heat()

    def _draw_source(self) -> None:
        event, level_id = self.build, self.level_id
        if event is None:
            text = self._no_build_text()
            self.notice.setText(text)
            self.source_path = None
            self._set_files([])
            self.source.show_text(text)
            return
        code = event.cubin_sha256 or event.code_key  # which code (issue 31 item 2)
        library = self.library_kernel()
        if library is not None:
            self.notice.setText(library_build.notice(library))
        else:
            self.notice.setText(f"{level_id}: {event.kernel or ''} ({event.variant}, "
                                f"{event.arch or '?'}, {event.compiler or '?'}"
                                + (f", cubin {code[:12]}" if code else "") + ")"
                                + ("; the build ncu profiled, not the latest run's"
                                   if self.showing_profiled() else ""))
        self._set_files(list(event.sources or {}))
        main = builds.main_source(event)
        if main is None:
            self.source_path = None
            self.source.show_text(event.sources_reason or "no sources recorded")
        else:
            self.file_box.blockSignals(True)
            self.file_box.setCurrentText(main)
            self.file_box.blockSignals(False)
            self._show_file(main)

    def _set_files(self, paths: list[str]) -> None:
        if [self.file_box.itemText(i) for i in range(self.file_box.count())] != paths:
            self.file_box.blockSignals(True)
            self.file_box.clear()
            self.file_box.addItems(paths)
            self.file_box.blockSignals(False)

    def _no_build_text(self) -> str:
        if not self.level_id:
            return "select a level to see its code"
        coming = self.store is not None and self.store.not_replayed_yet("build",
                                                                        self.level_id)
        level = self.store.level(self.level_id) if self.store is not None else None
        if level is not None and level.is_reference and not coming:
            return library_build.no_profile_text(self.level_id)
        return builds.no_build_text(self.level_id, coming)

    def _draw_diff(self) -> None:
        if self.build is None:
            self.diff.show_message(self._no_build_text())
            self.tabs.setTabText(1, "Diff")
        else:
            self._show_diff(self.build)

    def _draw_sass(self) -> None:
        """The SASS (with the chosen counter's heat), its title, the occupancy."""
        event = self.build
        if event is None:
            text = self._no_build_text()
            self.sass.show_message(text)
            self.occupancy.setText(text)
            self._show_heat()
            return
        lines = builds.main_loop_lines(event, self.kernel_lines())  # parsed once
        if not lines:
            self.sass.show_message(event.sass_reason or "no SASS recorded")
        self.sass_title.setText(SASS_TITLE if event.main_loop
                                else "SASS (no main loop found: the whole kernel)")
        self._place_sass_title()
        library = self.library_kernel()
        self.occupancy.setText("\n".join(library_build.launch_lines(library)
                                         if library is not None
                                         else builds.occupancy_lines(event)))
        self._show_heat(lines)

    def _show_file(self, path: str) -> None:
        sources = (self.build.sources if self.build is not None else None) or {}
        if path in sources:
            self.source_path = path
            self.source.show_text(sources[path])
            self._show_source_heat()

    # ------------------------------------------------------------------ per-line counters
    def _show_heat(self, lines: list[SassLine] | None = None) -> None:
        """The chosen counter on the SASS lines and, summed, on the source lines; with
        ``lines``, those lines shown first (drawn once, with their heat)."""
        event = (self.store.line_counters(self.level_id)
                 if self.store is not None and self.level_id else None)
        coming = self.store is not None and self.store.not_replayed_yet("source_counters",
                                                                        self.level_id)
        earlier = (self.store.earlier_code("source_counters", self.level_id, self.build)
                   if self.store is not None and self.level_id else None)
        h = source_heat.heat(event, self.build, self.heat_bar.chosen(), self.level_id or "",
                             self.kernel_lines() if self.build is not None else None,
                             coming, earlier)
        self.heat = h
        self.heat_bar.show_text(h.reason or h.summary)
        self.heat_bar.offer_switch(None if self.store is None else code_build.switch_text(
            self.store, self.level_id, self.build, event))
        values = h.for_lines(lines or self.sass.lines) if h.reason is None else None
        colors = heat_colors(values) if values is not None else {}
        if lines:
            self.sass.show_lines(lines, values, colors)
        else:
            self.sass.set_heat(values, colors)
        self._show_source_heat()

    def kernel_lines(self) -> list[SassLine]:
        """Every instruction of the shown build's kernel (parsed once per build)."""
        if self._kernel_lines[0] is not self.build:
            text = self.build.sass if self.build is not None else None
            self._kernel_lines = (self.build, parse(text) if text is not None else [])
        return self._kernel_lines[1]

    def _show_source_heat(self) -> None:
        h = self.heat
        if h is None or h.reason is not None or self.source_path is None:
            self.source.set_heat({})
            return
        sums = source_heat.source_sums(h, self.kernel_lines(), self.source_path)
        rows = sorted(sums)
        colors = heat_colors([sums[n] for n in rows])
        self.source.set_heat({rows[i] - 1: c for i, c in colors.items()})

    def show_source_line(self, path: str, line_no: int) -> bool:
        """Show ``path`` at ``line_no`` and select its SASS lines (from another view: a
        conflicting access in the banks view); False where the build has no such file."""
        if path not in ((self.build.sources if self.build is not None else None) or {}):
            return False
        self.tabs.setCurrentIndex(0)
        if path != self.source_path:
            self.file_box.setCurrentText(path)  # shows it (currentTextChanged)
        self.source.go_to_line(line_no)
        self.select_source_line(line_no)  # also where the cursor was on that line already
        return True

    def _show_diff(self, event: Build) -> None:
        prev = self.previous_level()
        this = builds.source_text(event) or ""
        if prev is None:
            self.tabs.setTabText(1, "Diff")
            self.diff.show_message("the first level of the ladder: nothing before it")
            return
        self.tabs.setTabText(1, f"Diff against {prev}")
        prev_event = self.store.build_for(prev) if self.store else None
        before = builds.source_text(prev_event)
        if before is None:
            self.diff.show_message(builds.no_build_text(prev))
        elif before == this:  # the same kernel, other template parameters (stream-K)
            params = param_changes(prev_event.params if prev_event else None, event.params)
            self.diff.show_message(f"the same source as {prev}"
                                   + (f"; {params.strip()}" if params else ""))
        else:
            self.diff.show_rows(builds.diff_rows(before, this))

    def previous_level(self) -> str | None:
        """The level before this one in the catalog's ladder order."""
        return None if self.store is None else \
            code_build.previous_level(self.store, self.level_id)

    def _show_mix(self) -> None:
        if self.store is None:
            return
        pairs = [(lv.id, ev) for lv in self.store.ladder_levels()
                 if (ev := self.store.build_for(lv.id)) is not None]
        rows = builds.mix_rows(pairs)
        if (rows, self.level_id) != self._mix_drawn:
            self._mix_drawn = (rows, self.level_id)
            self.mix.set_rows(rows, selected=self.level_id, axes_later=True)
            self._parts.insert(0, "mix axes")  # the next part

    def select_source_line(self, line_no: int) -> list[int]:
        """Select the SASS lines compiled from the shown file's line; their indexes."""
        found = (builds.lines_at(self.sass.lines, self.source_path, line_no)
                 if self.source_path else [])
        self.sass.select(found)
        return found


def _column(*widgets: QWidget) -> QWidget:
    """The widgets one above the other, without margins."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    return box
