"""What a user's kernel source may be: bounded text that brings nothing else in.

"Only the named file is compiled" (docs/user-kernels.md): a CUDA source may include the
project's own headers (``common.cuh``, pasted in from kernels/cuda like a level's) and
the CUDA toolkit's headers by a plain name in angle brackets; no other file, no path, no
include through a macro. The check reads the source as the compiler's first phases do
(:func:`compiler_view`): backslash-newlines spliced, then comments replaced by a space,
string and character literals honoured; so a comment before or inside a directive
(``/**/#include``, ``#/**/include``, an include after a comment of several lines)
cannot hide it. Where two compilers could read a text two ways (a backslash with blanks
after it at a line end, a lone carriage return, a trigraph, a raw string literal,
``__has_include``), the source is refused rather than guessed at. A Triton source is
Python run by the runner's Python: it is bounded and must be text; what it imports is
its author's choice, as with any script. No msgspec here: the runner checks a source it
is sent with this module too.
"""

from __future__ import annotations

import re

MAX_SOURCE_BYTES = 40 << 10  # it travels in a run command (at most 64 KiB of JSON)
PROJECT_HEADERS = frozenset({"common.cuh"})
# a toolkit header by name: cuda_fp16.h, mma.h, cuda/pipeline, cuda/std/cstdint
_SYSTEM = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*(\.[A-Za-z]{1,3})?$")
# \s is wider than the compiler's blanks: a line is taken as a directive more often, never less
_DIRECTIVE = re.compile(r"^\s*(?:#|%:)\s*(\w+)(.*)$", re.S)
_INCLUDE = re.compile(r'^\s*(?:<([^<>]*)>|"([^"]*)")\s*$')
# how nvrtc.assemble finds a project header to paste in (kernels/toolchain/nvrtc.py)
_PASTED = re.compile(r'^\s*#include\s+"([A-Za-z0-9_]+\.cuh)"\s*$')
_HEADER_DIRECTIVES = frozenset({"include", "include_next", "import"})
# control characters other than tab, newline, vertical tab, form feed
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_BLANK_SPLICE = re.compile(r"\\[ \t\f\v]+\n")
_TRIGRAPH = re.compile(r"\?\?[=/'()!<>\-]")
_RAW_PREFIXES = frozenset({"R", "LR", "uR", "UR", "u8R"})
_REFUSED_NAMES = frozenset({"__has_include", "__has_include_next"})
# marks the end of a comment that held a newline (the source has no control characters)
LINE_START = "\x01"


class _Refused(ValueError):
    pass


def _splice(text: str) -> tuple[str, list[int]]:
    """Translation phase 2: every backslash-newline removed; the source line of each
    character that is left."""
    out: list[str] = []
    lines: list[int] = []
    line, i, n = 1, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            line += 1
            continue
        out.append(c)
        lines.append(line)
        if c == "\n":
            line += 1
        i += 1
    return "".join(out), lines


def _is_ident(c: str) -> bool:
    return c.isalnum() or c in "_$" or ord(c) > 127


def compiler_view(text: str) -> list[tuple[int, str]]:
    """The source's logical lines as the preprocessor reads them, each with the number of
    the source line it starts on: lines spliced, each comment one space, literals kept
    whole; after each line, its parts that follow a comment which held a newline (where
    a compiler may see the start of a line). ValueError (the reason) for a text that
    compilers could read two ways."""
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        raise _Refused("a carriage return that ends no line")
    if (m := _CONTROL.search(text)) is not None:
        raise _Refused(f"a control character ({ord(m.group()):#04x}); a source is text")
    if _BLANK_SPLICE.search(text):
        raise _Refused("a backslash with blanks after it at a line end (compilers "
                       "differ on whether it joins the lines)")
    if _TRIGRAPH.search(text):
        raise _Refused("a trigraph (??= ??/ ...); write the character itself")
    s, origin = _splice(text)
    n = len(s)
    out: list[str] = []
    starts = [1]  # the source line each logical line starts on
    marks: list[int] = []  # the source line of each LINE_START
    since_newline: list[str] = []  # the tokens of this line so far
    since_comment: list[str] = []  # ... and since a comment that held a newline
    i = 0

    def token(t: str) -> None:
        since_newline.append(t)
        since_comment.append(t)

    def header_name_next() -> bool:
        return any(len(t) == 2 and t[0] in ("#", "%:") and t[1] in _HEADER_DIRECTIVES
                   for t in (since_newline, since_comment))

    def literal(end: str, escapes: bool, at: int) -> int:
        """Copy a literal from ``at`` (its opening character) to its end, or to the end
        of its line where it is not closed (the compiler's lexer stops there too)."""
        j = at + 1
        while j < n and s[j] != "\n":
            if escapes and s[j] == "\\" and j + 1 < n and s[j + 1] != "\n":
                j += 2
                continue
            if s[j] == end:
                j += 1
                break
            j += 1
        out.append(s[at:j])
        return j

    while i < n:
        c = s[i]
        nxt = s[i + 1] if i + 1 < n else ""
        if c == "\n":
            out.append("\n")
            starts.append(origin[i] + 1)
            since_newline.clear()
            since_comment.clear()
            i += 1
        elif c == "/" and nxt == "/":
            while i < n and s[i] != "\n":
                i += 1
            out.append(" ")
        elif c == "/" and nxt == "*":
            end = s.find("*/", i + 2)
            if end < 0:
                raise _Refused(f"line {origin[i]}: a comment that is never closed")
            held_newline = "\n" in s[i:end]
            out.append(" " + (LINE_START if held_newline else ""))
            if held_newline:
                since_comment.clear()
                marks.append(origin[end])
            i = end + 2
        elif c in " \t\f\v":
            out.append(c)
            i += 1
        elif c == "<" and header_name_next():
            i = literal(">", False, i)
            token("<>")
        elif c == '"':
            i = literal('"', not header_name_next(), i)
            token('""')
        elif c == "'":
            i = literal("'", True, i)
            token("''")
        elif c.isdigit() or (c == "." and nxt.isdigit()):  # a pp-number, digit separators too
            j = i + 1
            while j < n:
                if s[j] in "eEpP" and j + 1 < n and s[j + 1] in "+-":
                    j += 2
                elif s[j] == "'" and j + 1 < n and _is_ident(s[j + 1]):
                    j += 2
                elif _is_ident(s[j]) or s[j] == ".":
                    j += 1
                else:
                    break
            out.append(s[i:j])
            token("0")
            i = j
        elif _is_ident(c):
            j = i + 1
            while j < n and _is_ident(s[j]):
                j += 1
            word = s[i:j]
            if word in _RAW_PREFIXES and j < n and s[j] == '"':
                raise _Refused(f"line {origin[i]}: a raw string literal; write an "
                               "ordinary one")
            if word in _REFUSED_NAMES:
                raise _Refused(f"line {origin[i]}: {word} is not allowed")
            out.append(word)
            token(word)
            i = j
        elif (c == "%" and nxt == ":") or (c == "#" and nxt == "#"):
            pair = s[i:i + 2] if s[i:i + 4] != "%:%:" else s[i:i + 4]
            out.append(pair)
            token("#" if pair == "%:" else "##")
            i += len(pair)
        else:
            out.append(c)
            token(c)
            i += 1
    lines: list[tuple[int, str]] = []
    mark_lines = iter(marks)
    for start, line in zip(starts, "".join(out).split("\n"), strict=True):
        # the whole line, and each part after a comment that held a newline (a compiler
        # may start a directive there)
        lines.append((start, line.replace(LINE_START, " ")))
        lines += [(next(mark_lines), part) for part in line.split(LINE_START)[1:]]
    return lines


def _include_refusal(number: int, name: str, rest: str) -> str | None:
    if name in ("include_next", "import", "embed"):
        return f"line {number}: #{name} is not allowed; #include a header by name"
    if name != "include":
        return None
    inc = _INCLUDE.match(rest)
    if inc is None:
        return (f"line {number}: #include{rest.rstrip()[:60]} names no header; write "
                '#include <name.h> or #include "common.cuh"')
    system, local = inc.group(1), inc.group(2)
    if local is not None:
        if local not in PROJECT_HEADERS:
            return (f'line {number}: #include "{local[:60]}": only the kernel file is '
                    f"compiled; it may include {', '.join(sorted(PROJECT_HEADERS))} "
                    "and the CUDA toolkit's headers, not files of its own")
    elif not _SYSTEM.match(system) or ".." in system:
        return (f"line {number}: #include <{system[:60]}>: a toolkit header by its "
                "plain name, without a path")
    return None


def check_source(text: str, language: str) -> str | None:
    """Why this source cannot be compiled as a user kernel (None: it can)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        return f"{size:,} bytes; a kernel source is at most {MAX_SOURCE_BYTES:,}"
    if "\x00" in text:
        return "it holds a NUL character; a source is text"
    if language != "cuda":
        return None
    try:
        lines = compiler_view(text)
    except _Refused as exc:
        return str(exc)
    seen = 0  # includes of a project header, as the compiler reads them
    for number, line in lines:
        m = _DIRECTIVE.match(line)
        if m is None:
            continue
        if why := _include_refusal(number, *m.groups()):
            return why
        if m.group(1) == "include" and (inc := _INCLUDE.match(m.group(2))) is not None:
            seen += inc.group(2) is not None
    # a project header is pasted in where a line reads as nvrtc.assemble reads it; one
    # written otherwise would be looked for by NVRTC on its own search path instead
    pasted = sum(bool(_PASTED.match(raw)) for raw in text.replace("\r\n", "\n").split("\n"))
    if pasted != seen:
        return ('write each #include "common.cuh" alone on its line, outside comments '
                "and without a splice: it is pasted in from the project as written")
    return None
