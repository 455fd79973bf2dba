"""The CLI's one status line for runs in progress (bench, record). No Qt."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from ..protocol.text_safety import terminal_text
from .rows import ms_text, tflops_text, verdict_text


class Progress:
    """One status line on stderr, rewritten in place on a terminal."""

    def __init__(self, stream: TextIO, total: int):
        self.stream = stream
        self.total = total
        self.tty = stream.isatty()
        self.index = 0

    def show(self, text: str, final: bool = False) -> None:
        # a runner's, a host's or a worker's text: never a control or bidi character
        line = terminal_text(f"[{self.index}/{self.total}] {text}")
        if self.tty:
            self.stream.write("\r\x1b[2K" + line + ("\n" if final else ""))
        elif final:
            self.stream.write(line + "\n")
        self.stream.flush()

    def sink(self, results: list[dict[str, Any]]) -> Callable[[dict[str, Any]], None]:
        """An event sink that shows progress and collects the results."""
        def on_event(ev: dict[str, Any]) -> None:
            if ev["type"] == "result":
                results.append(ev)
            if ev["type"] == "run_start":
                self.index += 1
            if ev["type"] != "telemetry":
                self.event(ev)

        return on_event

    def event(self, ev: dict[str, Any]) -> None:
        prefix = ""
        if isinstance(ev.get("device"), int):  # several GPUs: say which
            on = f" on {ev['host']}" if isinstance(ev.get("host"), str) else ""
            prefix = f"device {ev['device']}{on}: "

        def show(text: str, final: bool = False) -> None:
            self.show(prefix + text, final)

        kind = ev["type"]
        if kind == "run_start":
            show(f"{ev['level']} {ev['M']}x{ev['N']}x{ev['K']} ...")
        elif kind == "repeat":
            what = "trial" if ev.get("mode") == "sustained" else "repeat"
            show(f"{ev['level']} {ev['M']}x{ev['N']}x{ev['K']}  {what} {ev['i'] + 1}  "
                 f"{tflops_text(ev['tflops'])} TFLOPS")
        elif kind == "phase":
            doing = "cooling down" if ev["phase"] == "cooldown" else "window"
            show(f"{ev['level']} {ev['M']}x{ev['N']}x{ev['K']}  trial {ev['trial'] + 1}: "
                 f"{doing} ({ev.get('seconds', 0):.0f} s)")
        elif kind == "result":
            ok = verdict_text(ev["verified"])
            show(f"{ev['level']} {ev['M']}x{ev['N']}x{ev['K']}  {tflops_text(ev['tflops'])} "
                 f"TFLOPS ({ms_text(ev['median_ms'])} ms), {ok}", final=True)
        elif kind == "error":
            where = f"{ev.get('level', '')} {ev.get('M', '')}x{ev.get('N', '')}x{ev.get('K', '')}"
            show(f"error [{ev['kind']}] {where.strip(' x')}: {ev['message']}", final=True)
        elif kind == "info":
            show(ev["message"], final=True)
