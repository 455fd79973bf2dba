"""SASS as fields, from nvdisasm's JSON (``-json``, nvdisasm 12.8 and later): each
instruction's predicate, opcode and operands as nvdisasm separates them, so that no
regular expression has to find the mnemonic in a line of text.

The text path (kernels/toolchain/sass.py, ``-c -gi``) stays: it is what build events carry,
because the JSON gives each instruction's innermost source line only, where the text's
location lines also say where an inlined helper was called from (the Code view's
"inlined at"). :func:`instructions` takes the JSON where this nvdisasm offers it and the
text otherwise, and both give the same :class:`sass.SassLine` records (tests pin it).

Layout of the JSON (schema 13.x): a list of [header, functions, file table]; a function
is ``{"function-name", "start", "length", "sass-instructions": [{"predicate"?, "opcode",
"operands"?, "source-file-id"?, "source-line"?}]}``; instructions are 16 bytes each
(sm_70 and later), so an instruction's offset is 16 times its index; the file table is
``{"directories": [...], "files": [{"dir-idx", "file"}]}``."""

from __future__ import annotations

import functools
import json
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import sass, sass_check

INSTRUCTION_BYTES = 16
MAX_JSON_BYTES = 256 << 20  # nvdisasm's answer for one cubin; the largest level's is ~3 MB


@functools.cache
def json_supported(tool: str) -> bool:
    """Whether this nvdisasm has ``-json`` (``--emit-json``)."""
    try:
        out = subprocess.run([tool, "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--emit-json" in out.stdout + out.stderr


def from_json(text: str, files: Iterable[str] = ()) -> dict[str, list[sass.SassLine]]:
    """The instructions of every kernel in nvdisasm's JSON, by mangled name. ``files``:
    repository paths of the sources, as for :func:`sass.disassemble`."""
    if len(text) > MAX_JSON_BYTES:
        raise ValueError(f"nvdisasm's JSON is {len(text):,} bytes, over {MAX_JSON_BYTES:,}")
    doc = json.loads(text)
    if not (isinstance(doc, list) and len(doc) >= 2 and isinstance(doc[1], list)):
        raise ValueError("not nvdisasm JSON: expected [header, functions, files]")
    table = doc[2] if len(doc) > 2 and isinstance(doc[2], dict) else {}
    keys = list(files)
    names = _file_names(table, keys)
    out: dict[str, list[sass.SassLine]] = {}
    for fn in doc[1]:
        if not isinstance(fn, dict) or not isinstance(fn.get("function-name"), str):
            continue
        lines = []
        for i, ins in enumerate(fn.get("sass-instructions") or []):
            lines.append(_line(i, ins, names))
        out[fn["function-name"]] = lines
    return out


def _file_names(table: dict[str, Any], keys: list[str]) -> dict[int, str]:
    raw_dirs = table.get("directories")
    dirs: list[Any] = raw_dirs if isinstance(raw_dirs, list) else []
    names = {}
    for i, f in enumerate(table.get("files") or []):
        if not isinstance(f, dict) or not isinstance(f.get("file"), str):
            continue
        d = f.get("dir-idx")
        folder = dirs[d] if isinstance(d, int) and 0 <= d < len(dirs) else ""
        path = f"{folder}/{f['file']}" if folder else f["file"]
        names[i] = sass.repo_path(path, keys)
    return names


def _line(index: int, ins: dict[str, Any], names: dict[int, str]) -> sass.SassLine:
    opcode = str(ins.get("opcode") or "")
    predicate = str(ins.get("predicate") or "")
    operands = [o for o in str(ins.get("operands") or "").split(",") if o]
    if predicate and not predicate.startswith("@"):
        # nvdisasm puts the predicate file of P2R and R2P (``PR``) in this field: it is an
        # operand, the source of P2R (after its destination), the destination of R2P
        operands.insert(1 if opcode.startswith("P2R") and operands else 0, predicate)
        predicate = ""
    text = " ".join(p for p in (predicate, opcode, ", ".join(operands)) if p) + " ;"
    file_id, line = ins.get("source-file-id"), ins.get("source-line")
    where = ((names[file_id], int(line)),) if isinstance(file_id, int) and \
        file_id in names and isinstance(line, int) else ()
    counted = predicate != "@!PT" and opcode != "NOP"
    return sass.SassLine(index * INSTRUCTION_BYTES, text, opcode, sass.op_class(opcode),
                         where, counted)


def run_json(tool: str, cubin: bytes) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "level.cubin"
        path.write_bytes(cubin)
        return subprocess.run([tool, "-json", "-gi", str(path)], capture_output=True,
                              text=True, check=True, timeout=120).stdout


def instructions(cubin: bytes, files: Iterable[str] = ()
                 ) -> tuple[dict[str, list[sass.SassLine]], str]:
    """Every kernel's instructions and how they were read: ``"json"`` where this nvdisasm
    has ``-json``, else ``"text"`` (``sass.parse`` of ``-c -gi``). RuntimeError without
    nvdisasm."""
    tool = sass_check.nvdisasm_path()
    if tool is None:
        raise RuntimeError(sass.nvdisasm_missing())
    files = list(files)
    if json_supported(str(tool)):
        return from_json(run_json(str(tool), cubin), files), "json"
    return {name: sass.parse(text) for name, text in sass.disassemble(cubin, files).items()
            }, "text"
