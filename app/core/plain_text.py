"""Text from outside (a recording, a runner) made literal for the Qt widgets that take
HTML. No Qt.

Qt renders a tooltip or an auto-format label as rich text whenever the string looks
like HTML, and pyqtgraph's LabelItem (legend entries, plot titles, axis labels) always
does. Through these a recording's ``<b style=...>`` grew big and red, and an ``<img>``
could load a local file. Every such sink gets the text escaped here: rich text whose
every character is literal.
"""

from __future__ import annotations

import html

MAX_TOOLTIP_CHARS = 2000


def html_text(text: str) -> str:
    """``text`` as HTML that shows it literally (line breaks kept)."""
    return html.escape(str(text)).replace("\n", "<br>")


def plain_tooltip(text: str) -> str:
    """A tooltip that shows ``text`` literally (cut at MAX_TOOLTIP_CHARS)."""
    if len(text) > MAX_TOOLTIP_CHARS:
        text = text[: MAX_TOOLTIP_CHARS - 1] + "…"
    return f"<p>{html_text(text)}</p>" if text else ""
