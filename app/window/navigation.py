"""Links between views, kept at the window: a view asks to show something in another view
through a callable the window gives it (``View.bind_navigation``), never by importing
that view, so the views stay side by side in their layer.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QTabWidget

from ..widgets.ladder_panel import LadderPanel
from .view_tabs import ViewTabs


class CodeLineHost(Protocol):
    """What the links need of the window (MainWindow is one): its views, their tabs and
    the ladder that selects a level."""

    views: ViewTabs
    tabs: QTabWidget
    ladder: LadderPanel


def show_code_line(window: CodeLineHost, level_id: str, path: str, line_no: int) -> bool:
    """Select the level (every view follows), then show its source at ``path``:``line_no``
    in the Code view with the SASS compiled from it selected. False where the Code view
    cannot show that file (no build event of the level has it)."""
    from ..views.code import CodeView  # (with the view: made when first needed)

    code = window.views.get("code")
    if not isinstance(code, CodeView):
        return False
    if level_id in window.ladder.level_ids:
        window.ladder.select_level(level_id)  # the views follow through level_selected
    if code.level_id != level_id:  # not in the ladder table, or already selected there
        window.views.tell("level", lambda view: view.set_level(level_id))
    window.tabs.setCurrentWidget(code)
    return code.show_source_line(path, line_no)
