"""Every place in app/ that hands Qt or pyqtgraph a text it may render as markup (a
tooltip, a rich or auto-format label, a pyqtgraph title or axis label, an HTML document)
is found by reading the source, and each either passes its text through the one escaping
helper (app/core/plain_text.py: ``plain_tooltip``, ``html_text``), is a constant, goes to
a widget that shows plain text, or is on the reviewed list below with the reason it is
safe (issue 45). A new sink of outside text fails here until it is escaped or reviewed."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from PySide6 import QtGui
from PySide6.QtGui import QTextDocument

APP = Path(__file__).resolve().parents[3] / "app"
EXAMPLES = APP.parent / "resources" / "kernels"
# the method, and which of its arguments is the text (-1: the last)
SINKS = {"setToolTip": 0, "setTabToolTip": -1, "setStatusTip": 0, "setWhatsThis": 0,
         "setHtml": 0, "setTitle": 0, "setLabel": 0, "setText": 0, "setWindowTitle": 0}
ESCAPERS = {"plain_tooltip", "html_text"}
# widgets whose setText never renders markup (buttons, line edits, items, TextItem)
PLAIN_WIDGETS = {"plain_label", "ElidedLabel", "QPushButton", "QCheckBox", "QRadioButton",
                 "QToolButton", "QLineEdit", "QTableWidgetItem", "TextItem", "QAction"}

# (file, the call as ast.unparse writes it) -> why the text in it is not outside markup
REVIEWED: dict[tuple[str, str], str] = {
    ("plots/chart_base.py", "axis.setLabel(axis.labelText, units=None, **{'color': "
     "theme.foreground, 'font-size': f'{theme.font_pt}pt'})"):
        "re-styles the label already set (escaped when it was set)",
    ("plots/plot_style.py", "axis.setLabel(axis.labelText, axis.labelUnits, "
     "axis.labelUnitPrefix, **style)"):
        "re-styles the label already set (escaped when it was set)",
    ("plots/instruction_mix.py", "item.setTitle(self.title_text)"):
        "title_text is the chart's own constant words (Main-loop MIX_UNIT)",
    ("plots/instruction_mix.py", "self.getPlotItem().setTitle(self.title_text, **style)"):
        "as above: the chart's own title",
    ("plots/ladder_bar_labels.py", "label.setText(t, color=self.theme.foreground)"):
        "a pg.TextItem (plain text): numbers formatted here",
    ("plots/telemetry_strips.py", "label.setText(text)"): "a pg.TextItem (plain text)",
    ("plots/instruction_mix.py", "label.setText(total_text(total))"):
        "a pg.TextItem (plain text): a number",
    ("views/code.py", "self.heat_bar.lead.setText(f'{self.sass_title.text()}:' if "
     "self._stage else PER_LINE)"): "an ElidedLabel (plain text)",
    ("views/counters_panel.py", "self.setText(table_html(self.comparison, earlier))"):
        "rich text built by table_html, every outside text through html.escape",
    ("views/counters_panel.py",
     "self.setText(f'<i>{(NOT_REPLAYED if coming else NO_MEASUREMENT)}</i>')"):
        "constants in markup of our own",
    ("views/telemetry.py", "self.plots[name].getPlotItem().getAxis('left').setLabel("
     "self.axis_title(name))"): "axis_title: the strip's own unit words",
    ("views/telemetry.py", "item.setLabel('left', title)"):
        "the strip titles are PLOTS, this module's constants",
    ("widgets/ladder_panel.py", "header.setToolTip(text)"):
        "_header_tip: every caller passes the column's own help, constants of this file",
    ("widgets/ladder_panel.py", "self.detail.setText(''.join(parts))"):
        "rich text built by _show_detail, every outside text through html.escape",
    ("widgets/ladder_panel.py", "item.setText(text)"): "a QTableWidgetItem (plain text)",
    ("widgets/messages_panel.py", "first.setText(text)"): "a QTableWidgetItem (plain text)",
    ("widgets/messages_panel.py", "item.setText(shown)"): "a QListWidgetItem (plain text)",
    ("window/exports.py", "generator.setTitle(title)"):
        "QSvgGenerator's title: an SVG attribute Qt writes escaped, never rendered",
    ("window/source_shown.py",
     "w.setWindowTitle(f'gemmscope — {Path(session.path).name}{synthetic}')"):
        "a window title is plain text",
    ("window/source_shown.py", "w.setWindowTitle(f'gemmscope — live on {device_name}')"):
        "a window title is plain text",
    ("window/source_shown.py", "w.mode_label.setText(f'replay — no recording ({reason})')"):
        "the window's mode_label is the panels' ElidedLabel (plain text)",
    ("window/source_shown.py", "w.mode_label.setText(replay.describe())"):
        "the window's mode_label is the panels' ElidedLabel (plain text)",
    ("window/source_shown.py",
     "w.mode_label.setText(f'live — {device_name} — {live.describe()}')"):
        "the window's mode_label is the panels' ElidedLabel (plain text)",
    ("window/offscreen.py", "tabs.setTabToolTip(self.index, self.tip)"):
        "puts back the tab's own tooltip, read before",
    ("window/talk_check.py", "bar.number.setText(f'{i + 1} / {count}')"):
        "the caption bar's scene number, a plain_label (plain text): two integers",
    ("window/view_tabs.py", "tabs.setTabToolTip(tabs.count() - 1, spec.tip)"):
        "the tab table's constant help",
    ("window/view_tabs.py", "tabs.setTabToolTip(index, spec.tip)"):
        "the tab table's constant help",
    ("widgets/run_controls.py", "self.fields[name].setText(str(value))"):
        "a QLineEdit (plain text)",
    ("widgets/run_controls.py", "self.fields['repeats'].setText(str(repeats))"):
        "a QLineEdit (plain text)",
    ("widgets/fitting.py", "super().setText(shown)"): "ElidedLabel itself: plain text",
    ("views/playback.py",
     "self.step_label.setText(f'step {self.canvas.step + 1} / {self.canvas.n_steps()}')"):
        "two numbers",
    ("widgets/replay_bar.py", "self.position.setText(f'{position_s:7.1f} / {duration_s:.1f} s')"):
        "two numbers",
    ("plots/hover_readout.py", "self.label.setText(text)"): "a pg.TextItem (plain text)",
    ("plots/chart_base.py", "self.empty_text.setText(text)"): "a pg.TextItem (plain text)",
}


def _name(call: ast.expr) -> str | None:
    f = call.func if isinstance(call, ast.Call) else call
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)


def _receivers(trees: list[ast.AST]) -> set[str]:
    """The attributes (``self.message``) known to show plain text in every file that
    makes one: made by a plain widget or told Qt.TextFormat.PlainText, and never made by
    another kind of widget (a subclass's ``self.message`` is its base's)."""
    plain: set[str] = set()
    other: set[str] = set()
    aliases: list[tuple[ast.expr, ast.expr]] = []  # a, b = x.a, x.b: the same widgets
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            if isinstance(node.value, ast.Call):
                named = {ast.unparse(t) for t in node.targets}
                (plain if _name(node.value) in PLAIN_WIDGETS else other).update(named)
            elif isinstance(node.value, ast.Tuple) and isinstance(node.targets[0], ast.Tuple):
                aliases += zip(node.targets[0].elts, node.value.elts, strict=False)
    plain_attrs = {p.rpartition(".")[2] for p in plain}
    plain |= {ast.unparse(t) for t, v in aliases
              if isinstance(v, ast.Attribute) and v.attr in plain_attrs}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _name(node) == "setTextFormat" \
                    and isinstance(node.func, ast.Attribute) \
                    and "PlainText" in ast.unparse(node.args[0]):
                plain.add(ast.unparse(node.func.value))
                other.discard(ast.unparse(node.func.value))
    return plain - other


def _plain_class(tree: ast.AST, call: ast.Call) -> bool:
    """``self.setText`` inside a class that tells itself Qt.TextFormat.PlainText."""
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        if call in set(ast.walk(cls)):
            return any(isinstance(n, ast.Call) and _name(n) == "setTextFormat"
                       and ast.unparse(n.func) == "self.setTextFormat"
                       and "PlainText" in ast.unparse(n.args[0]) for n in ast.walk(cls))
    return False


def _safe(node: ast.expr) -> bool:
    """A constant, a module constant (UPPER_CASE), or escaped by the one helper."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Call):
        return _name(node) in ESCAPERS
    if isinstance(node, ast.IfExp):
        return _safe(node.body) and _safe(node.orelse)
    if isinstance(node, ast.Name):
        return node.id.isupper()
    if isinstance(node, ast.Attribute):
        return node.attr.isupper()
    return False


def sinks() -> list[tuple[str, int, str, bool]]:
    """(file, line, call, safe) for each call of a sink in app/."""
    found = []
    files = {path: ast.parse(path.read_text(encoding="utf-8"))
             for path in sorted(APP.rglob("*.py"))}
    plain = _receivers(list(files.values()))
    for path, tree in files.items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in SINKS and node.args):
                continue
            text = node.args[SINKS[node.func.attr]]
            if node.func.attr == "setLabel" and len(node.args) > 1 \
                    and isinstance(node.args[0], ast.Constant):
                text = node.args[1]  # setLabel("left", TEXT)
            receiver = ast.unparse(node.func.value)
            safe = _safe(text) or (node.func.attr == "setText" and receiver in plain) \
                or (receiver == "self" and _plain_class(tree, node))
            found.append((path.relative_to(APP).as_posix(), node.lineno,
                          ast.unparse(node), safe))
    return found


def test_every_markup_sink_escapes_or_is_reviewed():
    unreviewed = [f"app/{f}:{line}: {call}" for f, line, call, safe in sinks()
                  if not safe and (f, call) not in REVIEWED]
    assert not unreviewed, ("text that Qt may render as markup, neither escaped "
                            "(plain_tooltip, html_text) nor reviewed:\n" + "\n".join(unreviewed))


def test_the_reviewed_list_names_only_calls_that_are_there():
    there = {(f, call) for f, _line, call, _safe in sinks()}
    stale = [key for key in REVIEWED if key not in there]
    assert not stale, stale


def test_the_scan_sees_a_raw_tooltip_and_an_escaped_one(tmp_path, monkeypatch):
    (tmp_path / "w.py").write_text(
        "def f(w, event):\n    w.setToolTip(event.reason)\n"
        "    w.setToolTip(plain_tooltip(event.reason))\n    w.setToolTip('constant')\n")
    monkeypatch.setattr(sys.modules[__name__], "APP", tmp_path)
    assert [s[3] for s in sinks()] == [False, True, True]


# ------------------------------------------------------- the two tooltips of issue 45
MARKUP = '<b>x</b><img src="/etc/hosts">'


def shown(tip: str) -> str:
    """What a reader sees of a tooltip (Qt renders one as rich text when it may be)."""
    if not QtGui.Qt.mightBeRichText(tip):
        return tip
    doc = QTextDocument()
    doc.setHtml(tip)
    return doc.toPlainText()


def test_a_spec_parameters_doc_is_shown_literally(qtbot, tmp_path):
    from gemmscope.app.core.user_kernels import OpenKernel
    from gemmscope.app.widgets.kernel_panel import KernelPanel

    for name in ("regblock_float4.toml", "regblock_float4.cu"):
        text = (EXAMPLES / name).read_text(encoding="utf-8")
        (tmp_path / name).write_text(text.replace('doc = "rows of C per block"',
                                                  f"doc = '{MARKUP}'"), encoding="utf-8")
    panel = KernelPanel(OpenKernel.load(tmp_path / "regblock_float4.toml"))
    qtbot.addWidget(panel)
    assert shown(panel.editors["BM"].toolTip()) == MARKUP


def test_the_heat_bars_switch_shows_a_recordings_text_literally(qtbot):
    from gemmscope.app.views.code_heat import HeatBar

    bar = HeatBar()
    qtbot.addWidget(bar)
    text = f"Show the profiled build ({MARKUP})"  # an instantiation named by a recording
    bar.offer_switch(text)
    assert shown(bar.switch.toolTip()) == text
