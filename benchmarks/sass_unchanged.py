"""Is the machine code of every level unchanged by a source edit? (issue 29, item 5)

    python benchmarks/sass_unchanged.py save DIR [--levels a,b] [--jobs 2]
    python benchmarks/sass_unchanged.py compare DIR [--levels a,b] [--jobs 2] [--diff 40]
    python benchmarks/sass_unchanged.py --smoke  # CI: naive saved, then compared with itself

``save`` compiles every level offline (NVRTC from cuda-bindings, no GPU) for sm_90a with
the registry's parameters and a few more parameter sets that reach code the registry's
own do not (block-row grouping of 8 where a level's is 1, the FP8 levels' 192-wide tile
that their shape rule picks), disassembles each cubin with nvdisasm and writes, per
(level, parameter set, variant), the SASS text and a line of ``index.json`` with its
registers, stack, static and dynamic shared memory and instruction count. ``compare``
compiles the same again and diffs against a saved snapshot.

Two things are compared per kernel: the whole SASS text, and its instruction stream (the
instructions without the encoding comments, with the kernel's mangled name replaced by
its variant), which is what the GPU runs. A template parameter's *name* is not part of a
mangled name (only its value is), so a renamed parameter leaves both the same; a renamed
kernel would change only the text. Parameter sets are named by role, not by parameter
name, so a snapshot taken before a parameter was renamed compares with one after. The
exit status is 1 when some kernel's instruction stream or resources differ.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import _smoke
from _args import amount, count, level_ids

ARCH = "sm_90a"
# the template parameter of block-row grouping; "SWZ" is its name before issue 29
# (kept so that a snapshot of that code can still be taken)
GROUPING = ("GM", "SWZ")


def param_sets(level: Any) -> dict[str, dict[str, int]]:
    """The parameter sets compiled for a level, by role."""
    sets = {"registry": dict(level.params)}
    name = next((g for g in GROUPING if g in level.params), None)
    if name is not None and level.params[name] <= 1:
        sets["grouped8"] = {**level.params, name: 8}
    if level.shape_params is not None:
        for shape in ((4096, 2112, 4096), (4096, 4096, 4096)):
            changes = level.shape_params(*shape, 132)
            if changes:
                label = "shape_" + "_".join(f"{k.lower()}{v}" for k, v in changes.items())
                sets.setdefault(label, {**level.params, **changes})
    return sets


def build_one(job: tuple[str, str, dict[str, int]]) -> dict[str, Any]:
    """Compile one (level, set) and disassemble it: its kernels' SASS and resources."""
    from gemmscope.kernels.ladder import registry
    from gemmscope.kernels.toolchain import cubin as elf
    from gemmscope.kernels.toolchain import nvrtc

    level_id, label, params = job
    level = registry.get(level_id)
    built = nvrtc.compile_offline(level, arch=level.arch or ARCH, params=params)
    variant_of = {mangled: ("vector" if name.endswith("true>") else "scalar")
                  for name, mangled in built.lowered.items()}
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(built.cubin)
        f.flush()
        sass = subprocess.run([nvdisasm(), "-c", f.name], capture_output=True, text=True,
                              check=True).stdout
    per_kernel = split_kernels(sass)
    res = elf.kernels(built.cubin)
    out = []
    for mangled, variant in variant_of.items():
        text = per_kernel[mangled]
        r = res[mangled]
        stream = instruction_stream(text, mangled, variant)
        out.append({"level": level_id, "set": label, "variant": variant, "params": params,
                    "mangled": mangled, "regs": r.regs, "stack": r.local_bytes,
                    "smem_static": r.smem_static_bytes,
                    "smem_dynamic": level.dyn_smem_bytes(params),
                    "instructions": instruction_count(stream),
                    "text_sha": sha(text), "stream_sha": sha(stream), "sass": text,
                    "stream": stream})
    return {"rows": out}


def nvdisasm() -> str:
    from gemmscope.kernels.toolchain import sass_check

    found = sass_check.nvdisasm_path()
    if not found:
        raise SystemExit("nvdisasm not found (pip install nvidia-cuda-nvdisasm)")
    return found


_FUNC = re.compile(r"^\s*\.text\.(\S+?):?\s*$", re.M)
_INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;?\s*(?:/\*.*\*/)?\s*$")
_LABEL = re.compile(r"^\s*(\.L_x_\d+):\s*$")


def split_kernels(sass: str) -> dict[str, str]:
    """nvdisasm's text cut at each kernel's .text section: mangled name -> its text."""
    marks = list(_FUNC.finditer(sass))
    return {m.group(1): sass[m.start():marks[i + 1].start() if i + 1 < len(marks) else None]
            for i, m in enumerate(marks)}


def instruction_stream(text: str, mangled: str, variant: str) -> str:
    """The kernel's instructions and branch labels, one a line, without the encoding
    comments, its own name replaced by its variant."""
    lines = []
    for line in text.splitlines():
        m = _INSTR.match(line) or _LABEL.match(line)
        if m:
            lines.append(m.group(1).replace(mangled, f"<{variant}>"))
    return "\n".join(lines) + "\n"


def instruction_count(stream: str) -> int:
    """Instructions of a stream (its lines that are not branch labels)."""
    return sum(1 for line in stream.splitlines() if not line.startswith(".L_x_"))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def key(row: dict[str, Any]) -> str:
    return f"{row['level']}/{row['set']}/{row['variant']}"


def build_all(level_ids: list[str], jobs: int) -> list[dict[str, Any]]:
    from gemmscope.kernels.ladder import registry

    work = []
    for level_id in level_ids:
        level = registry.get(level_id)
        for label, params in param_sets(level).items():
            work.append((level_id, label, params))
    with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
        return [row for got in pool.map(build_one, work) for row in got["rows"]]


def save(rows: list[dict[str, Any]], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    index = []
    for row in rows:
        name = key(row).replace("/", "__")
        (folder / f"{name}.sass").write_text(row["sass"])
        (folder / f"{name}.stream").write_text(row["stream"])
        index.append({k: v for k, v in row.items() if k not in ("sass", "stream")})
    (folder / "index.json").write_text(json.dumps(index, indent=1))


RESOURCES = ("regs", "stack", "smem_static", "smem_dynamic", "instructions")


def compare(rows: list[dict[str, Any]], folder: Path, diff_lines: int) -> tuple[str, bool]:
    """A table of every kernel against the snapshot; True when all are the same."""
    levels = {r["level"] for r in rows}  # the snapshot's kernels of the levels compiled
    before = {key(r): r for r in json.loads((folder / "index.json").read_text())
              if r["level"] in levels}
    head = (f"{'level':<18} {'set':<16} {'variant':<7} {'regs':>4} {'smem':>6} {'dyn':>6} "
            f"{'instr':>5}  {'stream':<6} {'text':<6} note")
    lines, ok, same = [head], True, 0
    for row in rows:
        old = before.pop(key(row), None)
        if old is None:
            lines.append(f"{row['level']:<18} {row['set']:<16} {row['variant']:<7} new")
            ok = False
            continue
        name = key(row).replace("/", "__")
        old_stream = (folder / f"{name}.stream").read_text()
        old = {**old, "instructions": instruction_count(old_stream)}
        moved = [f"{k} {old[k]}->{row[k]}" for k in RESOURCES if old[k] != row[k]]
        stream = "same" if old["stream_sha"] == row["stream_sha"] else "DIFF"
        text = "same" if old["text_sha"] == row["text_sha"] else "diff"
        same += text == "same"
        note = ", ".join(moved)
        if old["mangled"] != row["mangled"]:
            note = (note + ", " if note else "") + "mangled name changed"
        ok &= stream == "same" and not moved
        smem = row["smem_static"]
        lines.append(f"{row['level']:<18} {row['set']:<16} {row['variant']:<7} "
                     f"{row['regs']:>4} {smem:>6} {row['smem_dynamic']:>6} "
                     f"{row['instructions']:>5}  {stream:<6} {text:<6} {note}")
        if stream == "DIFF" and diff_lines:
            d = difflib.unified_diff(old_stream.splitlines(), row["stream"].splitlines(), "before",
                                     "after", n=1, lineterm="")
            lines += ["    " + x for x in list(d)[:diff_lines]]
    for gone in before:
        lines.append(f"{gone}: in the snapshot, not compiled now")
        ok = False
    lines.append(f"{len(rows)} kernels; instruction streams and resources "
                 f"{'all the same' if ok else 'DIFFER'} ({same} with the whole text the same)")
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("action", choices=("save", "compare"), nargs="?")
    p.add_argument("folder", type=Path, nargs="?")
    p.add_argument("--levels", type=level_ids(), default="",
                   help="comma-separated ids (default: every level)")
    p.add_argument("--jobs", "-j", type=count, default=min(2, os.cpu_count() or 1))
    p.add_argument("--diff", type=amount, default=40, help="stream diff lines per kernel")
    _smoke.add_flag(p)
    args = p.parse_args(argv)
    if args.smoke:  # one level built once: saved, then compared with what was saved
        rows = build_all((args.levels or ["naive"])[:1], 1)
        folder = Path(tempfile.mkdtemp())
        save(rows, folder)
        text, ok = compare(rows, folder, args.diff)
        print(text)
        return 0 if ok else 1
    if args.action is None or args.folder is None:
        p.error("save or compare, and the snapshot's folder, are needed")
    from gemmscope.kernels.ladder import registry

    ids = args.levels or [lv.id for lv in registry.ladder() if lv.source is not None]
    rows = build_all(ids, args.jobs)
    if args.action == "save":
        save(rows, args.folder)
        print(f"saved {len(rows)} kernels of {len(ids)} levels in {args.folder}")
        return 0
    text, ok = compare(rows, args.folder, args.diff)
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
