"""Text reports of build events: ``gemmscope diff A B`` and ``gemmscope sass LEVEL``.

Build events come from a recording (``--file``) or are made here without a GPU
(``build_event.offline_event``: NVRTC and nvdisasm from PyPI). What cannot be had is said
by :class:`Unavailable`, which the CLI turns into exit status 2 with the reason, after
printing whatever could be shown.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any

from ..ladder import registry
from ..protocol import recording
from ..protocol.decoding import to_builtins
from ..protocol.records import Build
from ..results.session_report import printable
from . import build_event, nvrtc, sass
from .nvrtc import CompileError


class Unavailable(Exception):
    """A piece of a report cannot be had here; the message says what and why."""


# ------------------------------------------------------------------ getting build events

def recorded_builds(path: str) -> list[dict[str, Any]]:
    """A recording's build events, as JSON values (the form this module reads a build
    event in, whether it was recorded or made here)."""
    session = recording.read_session(path, only=(Build,))
    return [to_builtins(e) for e in session.events if isinstance(e, Build)]


def pick(builds: Iterable[dict[str, Any]], level_id: str,
         variant: str | None = None) -> dict[str, Any]:
    """The build event of a level in a recording: the variant asked for, else the one an
    aligned shape runs, else the first recorded."""
    mine = [e for e in builds if e["level"] == level_id]
    if variant is not None:
        mine = [e for e in mine if e["variant"] == variant]
    if not mine:
        what = f"{level_id} ({variant})" if variant else level_id
        raise Unavailable(f"the recording has no build event for {what} (recorded before "
                          "build events existed, or the level did not run)")
    level = registry.BY_ID.get(level_id)
    aligned = build_event.aligned_variant(level) if level and level.source else None
    return next((e for e in mine if e["variant"] == aligned), mine[0])


def offline(level_id: str, variant: str | None = None) -> dict[str, Any]:
    """A build event made here, without a GPU."""
    level = _level(level_id)
    try:
        return build_event.offline_event(level, variant)
    except CompileError as exc:
        raise Unavailable(f"{level_id} does not compile: {exc}") from None
    except ValueError as exc:
        raise Unavailable(str(exc)) from None
    except RuntimeError as exc:  # NVRTC missing
        raise Unavailable(f"cannot compile {level_id} here: {exc}; or read a recording's "
                          "build events with --file") from None


def _level(level_id: str) -> registry.Level:
    """A registry level by id, or a user's CUDA kernel by its spec file (``my.toml``: its
    default parameters, compiled from a folder holding its source alone)."""
    if level_id.endswith(".toml"):
        return _user_level(level_id)
    level = registry.BY_ID.get(level_id)
    if level is None or level.source is None:
        known = ", ".join(lv.id for lv in registry.ladder())
        raise Unavailable(f"unknown level {level_id!r}; levels with a source: {known}")
    return level


def _user_level(path: str) -> registry.Level:
    from ..ladder.kernel_spec import Language, SpecError
    from ..ladder.spec_file import load_spec, read_source
    from .user_sources import folder_for

    try:
        spec = load_spec(path)
        source = read_source(spec)
    except SpecError as exc:
        raise Unavailable(str(exc)) from None
    if spec.language is not Language.CUDA:
        raise Unavailable(f"{spec.id} is a Triton kernel: Triton compiles it on the GPU; "
                          "read a recording's build events with --file")
    launch = spec.launch(source, 4096, 4096, 4096, spec.defaults)
    return launch.level(folder_for(launch))


def main_source(event: dict[str, Any]) -> str | None:
    """The level's own source among the event's sources: its .cu (a user's Triton
    kernel: its .py)."""
    return _main(event.get("sources") or {})


def _main(sources: dict[str, str]) -> str | None:
    return next((k for k in sources if k.endswith(".cu")),
                next((k for k in sources if k.endswith(".py")), None))


# ------------------------------------------------------------------ diff

def source_diff(a_id: str, a_sources: dict[str, str], b_id: str,
                b_sources: dict[str, str]) -> str:
    """Unified diff of the two levels' .cu files, then of any shared header whose text
    differs (recordings of different commits), and the headers only one includes."""
    out: list[str] = []
    a_cu = _main(a_sources) or next(iter(a_sources))
    b_cu = _main(b_sources) or next(iter(b_sources))
    out += _unified(a_sources[a_cu], b_sources[b_cu], f"{a_cu} ({a_id})", f"{b_cu} ({b_id})")
    for name in dict.fromkeys([*a_sources, *b_sources]):
        if name in (a_cu, b_cu):
            continue
        if name not in a_sources or name not in b_sources:
            who = b_id if name not in a_sources else a_id
            out.append(f"only {who} includes {name}\n")
        elif a_sources[name] != b_sources[name]:
            out += _unified(a_sources[name], b_sources[name], f"{name} ({a_id})",
                            f"{name} ({b_id})")
    return "".join(out)


def _unified(a: str, b: str, a_name: str, b_name: str) -> list[str]:
    lines = list(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                      a_name, b_name))
    return [ln if ln.endswith("\n") else ln + "\n" for ln in lines]


RESOURCE_ROWS = (
    ("registers per thread", lambda e: e.get("regs")),
    ("shared memory, static (B)", lambda e: e.get("smem_static_bytes")),
    ("shared memory, dynamic (B)", lambda e: e.get("smem_dynamic_bytes")),
    ("local memory, spills (B/thread)", lambda e: e.get("local_bytes")),
    ("threads per block", lambda e: e.get("threads_per_block")),
    ("blocks per SM", lambda e: (e.get("occupancy") or {}).get("blocks_per_sm")),
    ("warps per SM", lambda e: (e.get("occupancy") or {}).get("warps_per_sm")),
    ("occupancy (%)", lambda e: (e.get("occupancy") or {}).get("occupancy_pct")),
)


def resources_table(a: dict[str, Any], b: dict[str, Any]) -> str:
    rows = [(name, get(a), get(b)) for name, get in RESOURCE_ROWS]
    limited = [", ".join((e.get("occupancy") or {}).get("limited_by") or []) or "?"
               for e in (a, b)]
    head = (f"Resources and occupancy ({_what(a)} -> {_what(b)})\n"
            f"  {_occupancy_source(a)}\n")
    body = _table(("", a["level"], b["level"], "change"),
                  [(n, _num(x), _num(y), _change(x, y)) for n, x, y in rows]
                  + [("limited by", limited[0], limited[1], "")])
    return head + body


def mix_table(a: dict[str, Any], b: dict[str, Any], part: str = "main_loop") -> str:
    """The instruction mix of the main loop (one iteration) of both, classes present in
    either; raises Unavailable where a side has none."""
    mixes = []
    for e in (a, b):
        mix = (e.get("instruction_mix") or {}).get(part)
        if mix is None:
            why = e.get("instruction_mix_reason") or e.get("sass_reason") or "no main loop"
            raise Unavailable(f"no instruction mix for {e['level']}: {why}")
        mixes.append(mix)
    classes = [c for c in sass.CLASSES if mixes[0].get(c) or mixes[1].get(c)]
    rows = [(c, str(mixes[0].get(c, 0)), str(mixes[1].get(c, 0)),
             _change(mixes[0].get(c, 0), mixes[1].get(c, 0))) for c in classes]
    rows.append(("total", str(sum(mixes[0].values())), str(sum(mixes[1].values())),
                 _change(sum(mixes[0].values()), sum(mixes[1].values()))))
    title = "main loop, one iteration" if part == "main_loop" else "whole kernel"
    return (f"Instruction mix ({title})\n"
            + _table(("class", a["level"], b["level"], "change"), rows))


def _what(e: dict[str, Any]) -> str:
    return f"{e['level']} {e['variant']}, {e.get('arch', '?')}"


def _occupancy_source(e: dict[str, Any]) -> str:
    occ = e.get("occupancy") or {}
    src = occ.get("source")
    return ("occupancy from the driver" if src == "driver"
            else "occupancy from the CUDA occupancy calculator, sm_90 limits")


def _num(x: Any) -> str:
    if x is None:
        return "?"
    return f"{x:g}" if isinstance(x, float) else str(x)


def _change(x: Any, y: Any) -> str:
    if not isinstance(x, int | float) or not isinstance(y, int | float):
        return ""
    d = y - x
    if d == 0:
        return "="
    return f"{d:+g}" if isinstance(d, float) else f"{d:+d}"


def _table(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = []
    for r in [head, *rows]:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:],
                                                                       strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ annotated SASS

def annotated_sass(event: dict[str, Any], whole: bool = False) -> str:
    """The main loop (or the whole kernel) with each instruction's class, and the source
    line of each run of instructions where line info is present; raises Unavailable when
    the event has no SASS."""
    text = event.get("sass")
    if text is None:
        raise Unavailable(f"no SASS for {event['level']}: "
                          f"{event.get('sass_reason') or 'not in the event'}")
    span = None if whole else event.get("main_loop")
    sources = {k: v.splitlines() for k, v in (event.get("sources") or {}).items()}
    occ = event.get("occupancy") or {}
    out = [f"{event['level']} ({event['variant']}): {event.get('kernel', '')}",
           f"  {event.get('arch', '?')}, {event.get('regs')} registers, "
           f"{event.get('smem_static_bytes')} B static + {event.get('smem_dynamic_bytes')} B "
           f"dynamic shared memory, {event.get('local_bytes')} B local (spills), "
           f"{event.get('threads_per_block')} threads; {occ.get('blocks_per_sm')} block(s) "
           f"and {occ.get('warps_per_sm')} warps per SM, limited by "
           f"{', '.join(occ.get('limited_by') or []) or '?'}"]
    if span is None and not whole:
        out.append("  no loop found: the whole kernel")
    elif span is not None:
        out.append(f"  main loop: /*{span[0]:04x}*/ to /*{span[1]:04x}*/")
    out.append("")
    where_line, labels = "", []
    for raw in text.splitlines():
        if raw.startswith("//## File "):
            where_line = raw
            continue
        parsed = sass.parse(raw)
        if not parsed:  # a label: shown with the next instruction, if that is shown
            labels.append(raw)
            continue
        ln = parsed[0]
        if span is not None and not span[0] <= ln.offset <= span[1]:
            labels = []
            continue
        out += labels
        labels = []
        if where_line:
            out.append(_source_comment(sass.location(where_line), sources))
            where_line = ""
        out.append(f"  /*{ln.offset:04x}*/  {ln.op_class:8s} {ln.text}")
    mix = (event.get("instruction_mix") or {}).get("kernel" if whole or span is None
                                                    else "main_loop") or {}
    shown = ", ".join(f"{c} {n}" for c, n in mix.items() if n)
    out += ["", f"instruction mix: {shown}"]
    return "\n".join(out) + "\n"


def _source_comment(where: tuple[tuple[str, int], ...], sources: dict[str, list[str]]) -> str:
    if not where:
        return "        // (no line info)"
    (file, line), *outer = where
    text = ""
    if file in sources and 0 < line <= len(sources[file]):
        text = "  " + sources[file][line - 1].strip()
    chain = "".join(f"  [inlined at {f}:{n}]" for f, n in outer)
    return f"        // {file}:{line}{text}{chain}"


# ------------------------------------------------------------------ the commands

def param_changes(a: Any, b: Any) -> str:
    """A line naming the template parameters that differ ("GM 16 -> 8, SK 0 -> 2"), or ""
    (also where either side has none, as a library reference)."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return ""
    changed = [f"{k} {a.get(k, '-')} -> {b.get(k, '-')}"
               for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]
    return printable(f"template parameters: {', '.join(changed)}")[:500] + "\n" if changed else ""


def diff(a_id: str, b_id: str, file: str | None = None) -> tuple[str, str | None]:
    """The report of ``gemmscope diff``, and what is missing from it (None if nothing)."""
    if file is not None:
        builds = recorded_builds(file)
        a, b = pick(builds, a_id), pick(builds, b_id)
        if a.get("sources") is None or b.get("sources") is None:
            e = a if a.get("sources") is None else b
            raise Unavailable(f"no sources for {e['level']}: {e.get('sources_reason')}")
        text = source_diff(a_id, a["sources"], b_id, b["sources"])
        params = param_changes(a.get("params"), b.get("params"))
    else:
        text = source_diff(a_id, nvrtc.source_files(_level(a_id)), b_id,
                           nvrtc.source_files(_level(b_id)))
        params = param_changes(_level(a_id).params, _level(b_id).params)
        try:
            a, b = offline(a_id), offline(b_id)
        except Unavailable as exc:
            return text + params, f"resources and instruction mix: {exc}"
    text = (text or f"{a_id} and {b_id} have the same source\n") + params + "\n"
    text += resources_table(a, b)
    try:
        text += "\n" + mix_table(a, b)
    except Unavailable as exc:
        return text, str(exc)
    return text, None


def sass_listing(level_id: str, variant: str | None = None, file: str | None = None,
                 whole: bool = False) -> str:
    """The report of ``gemmscope sass``."""
    event = (pick(recorded_builds(file), level_id, variant) if file is not None
             else offline(level_id, variant))
    return annotated_sass(event, whole)
