"""The CLI's one status line for runs in progress (bench, record). No Qt."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from ..protocol import records as rec
from ..protocol.decoding import EventRecord
from ..protocol.text_safety import terminal_text
from .rows import ms_text, tflops_text, verdict_text


class Progress:
    """One status line on stderr, rewritten in place on a terminal."""

    def __init__(self, stream: TextIO, total: int):
        self.stream = stream
        self.total = total
        self.tty = stream.isatty()
        self.index = 0
        self._started: set[str] = set()  # the runs asked for that have started (by id)

    def show(self, text: str, final: bool = False) -> None:
        # a runner's, a host's or a worker's text: never a control or bidi character
        line = terminal_text(f"[{self.index}/{self.total}] {text}")
        if self.tty:
            self.stream.write("\r\x1b[2K" + line + ("\n" if final else ""))
        elif final:
            self.stream.write(line + "\n")
        self.stream.flush()

    def sink(self, results: list[rec.Result]) -> Callable[[EventRecord], None]:
        """An event sink that shows progress and collects the results."""
        def on_event(ev: EventRecord) -> None:
            if isinstance(ev, rec.Result):
                results.append(ev)
            if isinstance(ev, rec.RunStart):
                self.started(ev)
            if not isinstance(ev, rec.Telemetry):
                self.event(ev)

        return on_event

    def started(self, ev: rec.RunStart) -> None:
        """Count a run asked for once: a level's reference runs under the level's command
        ``id`` (in its pair loop, or before it), so a run start with an id seen before is
        the same asked-for run, and ``[i/n]`` never passes n."""
        key = repr(ev.id) if ev.id is not None else f"#{len(self._started)}"
        if key not in self._started:
            self._started.add(key)
            self.index = min(self.index + 1, self.total)

    def event(self, ev: EventRecord) -> None:
        prefix = ""
        if isinstance(ev, rec.Placed) and ev.device is not None:  # several GPUs: say which
            on = f" on {ev.host}" if ev.host is not None else ""
            prefix = f"device {ev.device}{on}: "

        def show(text: str, final: bool = False) -> None:
            self.show(prefix + text, final)

        if isinstance(ev, rec.RunStart):
            show(f"{ev.level} {ev.M}x{ev.N}x{ev.K} ...")
        elif isinstance(ev, rec.Repeat):
            what = "trial" if ev.mode == rec.Mode.SUSTAINED else "repeat"
            show(f"{ev.level} {ev.M}x{ev.N}x{ev.K}  {what} {ev.i + 1}  "
                 f"{tflops_text(ev.tflops)} TFLOPS")
        elif isinstance(ev, rec.Phase) and ev.phase == "compile":  # its first run here
            show(f"{ev.level} {ev.M}x{ev.N}x{ev.K}  compiling ...")
        elif isinstance(ev, rec.Phase) and ev.phase == "settle":  # a burst's idle
            show(f"{ev.level} {ev.M}x{ev.N}x{ev.K}  settling ({ev.seconds or 0:.0f} s)")
        elif isinstance(ev, rec.Phase):
            doing = "cooling down" if ev.phase == "cooldown" else "window"
            show(f"{ev.level} {ev.M}x{ev.N}x{ev.K}  trial {ev.trial + 1}: "
                 f"{doing} ({ev.seconds or 0:.0f} s)")
        elif isinstance(ev, rec.Result):
            ok = verdict_text(ev.verified)
            show(f"{ev.level} {ev.M}x{ev.N}x{ev.K}  {tflops_text(ev.tflops)} "
                 f"TFLOPS ({ms_text(ev.median_ms)} ms), {ok}{build_text(ev)}", final=True)
        elif isinstance(ev, rec.Error):
            where = f"{ev.level or ''} {ev.M or ''}x{ev.N or ''}x{ev.K or ''}"
            show(f"error [{ev.kind}] {where.strip(' x')}: {ev.message}", final=True)
        elif isinstance(ev, rec.Info):
            show(ev.message, final=True)


def build_text(ev: rec.Result) -> str:
    """How the run got its level, where it built it: "; built in 41.2 s" (NVRTC), or
    "; from the build cache (0.03 s)"."""
    if ev.compile_s is None:
        return ""
    if ev.compile_cached:
        return f"; from the build cache ({ev.compile_s:.2f} s)"
    return f"; built in {ev.compile_s:.1f} s"
