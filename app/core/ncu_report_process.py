"""A user's ``.ncu-rep`` read in a child process: NVIDIA's ncu_report module is native code
reading an untrusted file, so it runs where a crash or a hang ends only the child. The app
(and whatever it holds unsaved) is never at stake: a child that dies is a
:class:`ReportError` naming the signal, one that takes longer than ``timeout_s`` is killed
and said so, and what it sends back is bounded and decoded like any recording's events
(kernels/protocol/decoding.py) before the app takes it. No Qt.

    python -m gemmscope.app.core.ncu_report_process REPORT --out FILE [--module NAME]

is the child: it reads REPORT with app/core/ncu_report.py and writes one JSON line per
kernel (its ``library_kernel`` and ``source_counters`` records), then an end line, or one
error line in words.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from ...kernels import protocol as rec
from ...kernels.protocol import from_builtins, to_builtins
from . import ncu_report
from .ncu_report import MAX_KERNELS, Report, ReportError, ReportKernel

TIMEOUT_S = 300.0  # reading a large report takes the module tens of seconds
MAX_OUTPUT_BYTES = 512 << 20  # of what the child sends back (64 kernels of 20000 lines)
MAX_STDERR_CHARS = 600


class KernelLine(msgspec.Struct, tag="kernel"):
    key: str
    kernel: dict[str, Any]
    lines: dict[str, Any] | None = None
    precision: str | None = None


class EndLine(msgspec.Struct, tag="end"):
    left_out: int = 0


class ErrorLine(msgspec.Struct, tag="error"):
    message: str


Line = KernelLine | EndLine | ErrorLine
_decoder = msgspec.json.Decoder(Line)
_encoder = msgspec.json.Encoder()


def read_report(path: str | Path, *, timeout_s: float = TIMEOUT_S,
                module: str = ncu_report.MODULE) -> Report:
    """Every kernel of the report, read by a child process; ReportError in words."""
    p = ncu_report.checked_path(path, module)  # refused before anything starts
    with tempfile.TemporaryDirectory(prefix="gemmscope-ncu-") as tmp:
        out, err = Path(tmp) / "kernels.jsonl", Path(tmp) / "stderr.txt"
        command = [sys.executable, "-m", __name__, str(p), "--out", str(out),
                   "--module", module]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(e for e in sys.path if e))
        with err.open("wb") as stderr:
            try:
                proc = subprocess.run(command, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=stderr, env=env,
                                      timeout=timeout_s, check=False)
            except subprocess.TimeoutExpired:
                raise ReportError(f"ncu_report was still reading {p.name} after "
                                  f"{timeout_s:g} s; it was stopped") from None
            except OSError as exc:
                raise ReportError(f"could not start the report reader: "
                                  f"{exc.strerror or exc}") from None
        if proc.returncode < 0:
            raise ReportError(f"ncu_report crashed reading {p.name} ({_signal(proc.returncode)}); "
                              "the report is not shown, nothing else is affected")
        return _collect(p, out, proc.returncode, _tail(err))


def _signal(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, path.stat().st_size - MAX_STDERR_CHARS * 4))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][-MAX_STDERR_CHARS:] if lines else ""


def _collect(p: Path, out: Path, code: int, stderr: str) -> Report:
    try:
        size = out.stat().st_size
    except OSError:
        raise ReportError(f"the report reader ended (exit code {code}) without reading "
                          f"{p.name}" + (f": {stderr}" if stderr else "")) from None
    if size > MAX_OUTPUT_BYTES:
        raise ReportError(f"{p.name}: the report reader sent {size / 2**20:,.0f} MiB, over "
                          f"the {MAX_OUTPUT_BYTES / 2**20:,.0f} MiB this app takes")
    kernels: list[ReportKernel] = []
    left_out, ended = 0, False
    with out.open("rb") as fh:
        for raw in fh:
            try:
                line = _decoder.decode(raw)
                kernel = (_kernel(line) if isinstance(line, KernelLine)
                          and len(kernels) < MAX_KERNELS else None)
            except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
                raise ReportError(f"the report reader's answer about {p.name} is not "
                                  f"readable: {str(exc)[:200]}") from None
            if isinstance(line, ErrorLine):
                raise ReportError(line.message[:MAX_STDERR_CHARS])
            if isinstance(line, EndLine):
                left_out, ended = max(0, line.left_out), True
                break
            if kernel is not None:
                kernels.append(kernel)
    if not ended or not kernels:
        raise ReportError(f"the report reader ended (exit code {code}) before it had read "
                          f"{p.name}" + (f": {stderr}" if stderr else ""))
    return Report(str(p), tuple(kernels), left_out)


def _kernel(line: KernelLine) -> ReportKernel:
    kernel = from_builtins(line.kernel)
    lines = from_builtins(line.lines) if line.lines is not None else None
    if not isinstance(kernel, rec.LibraryKernel) or not (
            lines is None or isinstance(lines, rec.SourceCounters)):
        raise ValueError("a kernel's records are not a library_kernel and source_counters")
    return ReportKernel(line.key[:300], kernel, lines, line.precision)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="read an .ncu-rep for gemmscope (the child)")
    ap.add_argument("report")
    ap.add_argument("--out", required=True)
    ap.add_argument("--module", default=ncu_report.MODULE)
    args = ap.parse_args(argv)
    with open(args.out, "wb") as fh:
        try:
            report = ncu_report.read_in_process(args.report, args.module)
        except ReportError as exc:
            fh.write(_encoder.encode(ErrorLine(str(exc))) + b"\n")
            return 0
        for k in report.kernels:
            fh.write(_encoder.encode(KernelLine(
                k.key, to_builtins(k.kernel),
                to_builtins(k.lines) if k.lines is not None else None, k.precision)) + b"\n")
        fh.write(_encoder.encode(EndLine(report.left_out)) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
