"""What a user's kernel source may be: bounded text that brings nothing else in.

"Only the named file is compiled" (docs/user-kernels.md): a CUDA source may include the
project's own headers (``common.cuh``, pasted in from kernels/cuda like a level's) and
the CUDA toolkit's headers by a plain name in angle brackets; no other file, no path, no
include through a macro. The check reads every preprocessing line the way the
preprocessor will (backslash-newlines joined, ``%:`` read as ``#``), so a directive
cannot be hidden from it. A Triton source is Python run by the runner's Python: it is
bounded and must be text; what it imports is its author's choice, as with any script.
No msgspec here: the runner checks a source it is sent with this module too.
"""

from __future__ import annotations

import re

MAX_SOURCE_BYTES = 40 << 10  # it travels in a run command (at most 64 KiB of JSON)
PROJECT_HEADERS = frozenset({"common.cuh"})
# a toolkit header by name: cuda_fp16.h, mma.h, cuda/pipeline, cuda/std/cstdint
_SYSTEM = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*(\.[A-Za-z]{1,3})?$")
_DIRECTIVE = re.compile(r"^\s*(?:#|%:)\s*(\w+)(.*)$")
_INCLUDE = re.compile(r'^\s*(?:<([^<>]*)>|"([^"]*)")\s*(//.*|/\*.*)?$')


def check_source(text: str, language: str) -> str | None:
    """Why this source cannot be compiled as a user kernel (None: it can)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        return f"{size:,} bytes; a kernel source is at most {MAX_SOURCE_BYTES:,}"
    if "\x00" in text:
        return "it holds a NUL character; a source is text"
    if language != "cuda":
        return None
    joined = re.sub(r"\\\r?\n", "", text)  # what the preprocessor sees: lines spliced
    for number, line in enumerate(joined.splitlines(), 1):
        m = _DIRECTIVE.match(line)
        if m is None:
            continue
        name, rest = m.groups()
        if name in ("include_next", "import", "embed"):
            return f"line {number}: #{name} is not allowed; #include a header by name"
        if name != "include":
            continue
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
