"""Text from outside (a recording, a runner, a worker, a command-line value) made safe to
write on a terminal: one line, no control, format or bidi characters, no lone surrogates.
No Qt.

A terminal obeys what it is sent: ESC starts a sequence that can set the window title,
clear the screen or recolour what follows, a carriage return overwrites the line, and the
bidi overrides (U+202A..U+202E, U+2066..U+2069) reorder what is shown so that it reads
otherwise than it is. Every such character is written as a visible escape instead.
"""

from __future__ import annotations

import re


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _unsafe(ch: str) -> bool:
    # what Python calls unprintable: controls, format characters (bidi marks and
    # overrides, zero-width joiners, the BOM), separators other than the space (line,
    # paragraph, no-break and odd-width spaces), surrogates, private use, unassigned
    return not ch.isprintable()


def terminal_text(text: str, keep_newlines: bool = False) -> str:
    """``text`` with every unsafe character written as an escape (``\\x1b``, ``\\u202e``);
    ``keep_newlines`` keeps ``\\n`` (a block of lines), else it is escaped too."""
    if not isinstance(text, str):
        text = str(text)
    if text.isprintable():
        return text  # the common case (no character is unsafe), at once
    return "".join(_escape(ch) if _unsafe(ch) and not (keep_newlines and ch == "\n") else ch
                   for ch in text)


def shown(text: object, limit: int = 80) -> str:
    """A value quoted in a one-line message: escaped as :func:`terminal_text`, cut to
    ``limit`` characters (an ellipsis and the full length said)."""
    value = terminal_text(str(text))
    if len(value) > limit:
        value = f"{value[:limit]}… ({len(str(text))} characters)"
    return f"'{value}'"


def shown_path(path: object, limit: int = 80) -> str:
    """A file's path quoted as :func:`shown` does, but cut in the middle: its name (the end)
    says which file, however deep the folder it is in."""
    value = terminal_text(str(path))
    if len(value) > limit:
        tail = max(limit * 2 // 3, 1)
        value = f"{value[:limit - tail]}…{value[-tail:]} ({len(str(path))} characters)"
    return f"'{value}'"


def clean_text(text: object) -> str:
    """Text from outside for a file (CSV, Markdown): one line, control, format and bidi
    characters removed, any other space a space, a lone surrogate (valid in JSON, not
    in UTF-8) U+FFFD."""
    text = str(text)
    if text.isprintable():
        return text  # nothing to remove or replace
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif ch.isspace():
            out.append(" ")
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            out.append("\ufffd")
    return "".join(out)


# CommonMark lets a backslash escape any ASCII punctuation. Escaped everywhere: what makes
# emphasis, code, links and images, HTML and entities, table cells, headings, strike,
# math, and a bare URL's or address's autolink (``:`` and ``@``); with ``[`` and ``<``
# escaped, a ``(`` opens nothing. At the start, any punctuation (a list, a quote).
_MARKDOWN_ESCAPED = frozenset("\\`*_{}[]<>|!#&~:@$")
_WWW = re.compile(r"(?i)\b(www)\.")
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def markdown_text(text: object) -> str:
    """Text from outside as Markdown text that renders as itself (one line)."""
    line = " ".join(clean_text(text).split())
    lead = len(line) - len(line.lstrip("0123456789"))  # "1." at the start: a list
    out = "".join("\\" + ch if ch in _MARKDOWN_ESCAPED or (i == lead and ch in _ASCII_PUNCTUATION)
                  else ch for i, ch in enumerate(line))
    return _WWW.sub(r"\1\\.", out)  # "www." autolinks without a scheme
