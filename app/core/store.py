"""The session store: everything the views show, built from events, free of Qt.

Live runs and replays feed the same store through :meth:`SessionStore.handle` (the one
event-sink interface); views read it. The store records which parts changed since the
views last looked (:meth:`take_changes`), so a view refresh can be coalesced into one
redraw however many events arrived in between.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ...kernels import protocol as rec
from ...kernels.ladder import Shape
from ...kernels.protocol import TELEMETRY_FIELDS, EventRecord, Mode, TelemetryBlock
from ...kernels.results import Result, resolved, result_key
from .counters import Counters
from .levels import catalog_from_header, join_catalog, join_user_kernel
from .repeat_stream import RepeatStream
from .store_queries import (
    TELEMETRY_UNAVAILABLE,
    VIEW_CHANGES,
    Change,
    Message,
    StoreQueries,
    params_key,
)
from .telemetry import RunEnd, RunWindow, TelemetryBuffer

# what the store takes: an event record, or a block of a recording's NVML samples
Item = EventRecord | TelemetryBlock
# runs whose streams the store keeps at hand between other events (a paired burst has two)
REPEAT_RUNS_KEPT = 8

__all__ = ["TELEMETRY_FIELDS", "TELEMETRY_UNAVAILABLE", "VIEW_CHANGES", "Change", "Item",
           "Message", "RepeatStream", "Result", "RunWindow", "SessionStore", "Shape",
           "TelemetryBuffer"]


class SessionStore(StoreQueries):
    """The state of one session (live or replayed), built from events: feed it events
    (:meth:`handle`); views read it (:class:`StoreQueries`)."""

    # ------------------------------------------------------------------ input
    def handle(self, event: Item) -> None:
        """Take one event record (or a block of samples); its ``t`` is on the session's
        time axis already (``kernels.protocol.timeline``). Types this store does not show
        are counted only."""
        if isinstance(event, TelemetryBlock):
            self.event_count += event.stop - event.start
            self._state(event.device).telemetry.extend(event)
            self.last_t_s = max(self.last_t_s, float(event.columns.t[event.stop - 1]))
            self._changes.add(Change.TELEMETRY)
            return
        self.event_count += 1
        if event.t > self.last_t_s:
            self.last_t_s = event.t
        if type(event) is not rec.Repeat and self._repeat_runs:
            self._repeat_runs.clear()  # the next repeat finds its run the whole way
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(self, event)

    def _on_session(self, ev: rec.Session) -> None:
        if self.header is not None:  # a second header handed on unplaced: a restart
            self._on_restart(rec.Restart(t=ev.t, restarts=self.restarts + 1, runner=ev))
            return
        self.header = ev
        self.levels = catalog_from_header(ev)
        self.devices = ev.gpus()
        for state in self._per.values():
            state.running = state.doing = None
        self._changes.update((Change.HEADER, Change.LADDER, Change.RUN))

    def _on_kernel(self, ev: rec.Kernel) -> None:
        """A user's kernel joined the session: it joins the ladder (levels.py)."""
        self.levels = join_user_kernel(self.levels, ev)
        self._changes.update((Change.HEADER, Change.LADDER))

    def _on_device(self, ev: rec.Joined) -> None:
        """A GPU that joined the session (a cluster worker seen after the header)."""
        self.devices.append(ev.entry())
        self._changes.update((Change.HEADER, Change.LADDER))

    def _on_restart(self, ev: rec.Restart) -> None:
        self.restarts += 1
        joined = join_catalog(self.levels, ev.runner)
        if joined is not self.levels:  # the later runner knows levels, or describes them anew
            self.levels = joined
            self._changes.update((Change.HEADER, Change.LADDER))
        state = self._state(ev)
        state.runs.abandon(ev.t)
        state.running = state.doing = None
        # a runner that crashed or hung and was started again, or, in a file made with
        # `record --append`, the runner of its next part: the header cannot tell which.
        # Starts in a row, with no other message between them (a recording appended to
        # many times), are one line that counts them, not a line each.
        last = self.messages[-1] if self.messages else None
        run = self._restarts_in_row + 1 if last is not None and last is self._restart_line \
            else 1
        if run == 1:
            self._restart_first_t = ev.t
            text = (f"a runner started again ({self.restarts} so far): restarted, or the "
                    "next part of an appended recording")
        else:
            text = (f"a runner started again {run} times in a row, the first at "
                    f"{self._restart_first_t:.0f} s ({self.restarts} so far): restarted, or "
                    "the next parts of an appended recording")
        line = Message("info", text, None, None, ev.t, False)
        if run > 1:
            self.messages[-1] = line
        else:
            self.messages.append(line)
        self._restart_line, self._restarts_in_row = line, run
        self._changes.update((Change.RUN, Change.MESSAGES, Change.TELEMETRY))

    def _on_run_start(self, ev: rec.RunStart) -> None:
        state = self._state(ev)
        state.running = ev
        state.doing = None
        state.runs.start(ev, ev.t)
        self._changes.add(Change.TELEMETRY)
        state.stream.reset(ev.level, ev.shape, ev.repeats)
        key = (ev.level, ev.shape, ev.mode)
        state.run_keys[ev.run_key] = key  # (id, level): a reference echoes the id
        state.streams[key] = RepeatStream.sized(ev.level, ev.shape, ev.repeats)
        self._changes.update((Change.STREAM, Change.RUN))

    def _on_phase(self, ev: rec.Phase) -> None:
        state = self._state(ev)
        if state.running is not None and ev.id == state.running.id:
            state.doing = ev.phase  # the status bar says it ("compiling naive")
            self._changes.add(Change.RUN)
        if ev.phase != "window":
            return
        t, seconds = ev.t, ev.seconds or 0.0
        state.open_trial = (ev.id, len(state.trial_spans))
        state.trial_spans.append((t, t + max(seconds, 0.0)))
        self._changes.add(Change.TELEMETRY)

    def _on_repeat(self, ev: rec.Repeat) -> None:
        # a recording's repeats come in runs of hundreds (56,724 of the H200's 66,837
        # events), a paired burst's two runs in turn: where this one is of a run a repeat
        # since the last other event was of (handle() forgets them at any other: only those
        # change a run's state), its run's stream is that one's, and unless the shown
        # stream was replaced, the rest is the shown stream's level and shape
        runs, which = self._repeat_runs, (ev.device, ev.run_key, ev.M, ev.N, ev.K, ev.mode)
        found = runs.get(which)
        if found is not None and found[0].stream is found[1]:
            _state, stream, run, shape = found
            if stream.level != ev.level or stream.shape != shape:
                stream.reset(ev.level, shape)
            stream.append(ev.i, ev.tflops)
            run.append(ev.i, ev.tflops)
            self._changes.add(Change.STREAM)
            return
        state = self._state(ev)
        if state.doing is not None:  # measuring again (a sustained run's next phase says)
            state.doing = None
            self._changes.add(Change.RUN)
        if state.open_trial is not None and state.open_trial[0] == ev.id:
            i = state.open_trial[1]
            state.trial_spans[i] = (state.trial_spans[i][0], ev.t)
            state.open_trial = None
            self._changes.add(Change.TELEMETRY)
        shape = ev.shape
        if state.stream.level != ev.level or state.stream.shape != shape:
            state.stream.reset(ev.level, shape)
        state.stream.append(ev.i, ev.tflops)
        key = state.run_keys.get(ev.run_key) or (ev.level, shape, ev.mode)
        if key[:2] != (ev.level, shape):  # an id reused: this repeat's own run
            key = (ev.level, shape, ev.mode)
        run = state.streams.get(key)
        if run is None:
            run = state.streams[key] = RepeatStream.sized(ev.level, shape, 0)
        run.append(ev.i, ev.tflops)
        self._changes.add(Change.STREAM)
        if len(runs) >= REPEAT_RUNS_KEPT:  # a file of runs of one repeat each: bounded
            runs.clear()
        runs[which] = (state, state.stream, run, shape)

    def _on_result(self, ev: rec.Result) -> None:
        level = self.level(ev.level)
        r = resolved(ev, level.precision if level is not None else None)
        self.results.append(r)
        if r.variant is not None:
            self._variant_of[r.level] = r.variant
            ran = r.params if r.params else (level.params if level is not None else None)
            self._params_of[r.level] = params_key(ran)
        state = self._state(ev)
        if state.runs.finish(r, r.t, RunEnd.RESULT):
            self._changes.add(Change.TELEMETRY)
        ended = state.streams.get((r.level, r.shape, r.mode))
        if ended is not None and ended.count and ended.expected > ended.count:
            # a paired run announces its most repeats and its precision rule may stop it
            # sooner: once ended, its repeats are all there are (the chart fits them)
            ended.expected = ended.count
            if state.stream.level == r.level and state.stream.shape == r.shape:
                state.stream.expected = state.stream.count
            self._changes.add(Change.STREAM)
        # indexes, so views read the latest numbers without scanning every result; the
        # ladder, its charts and the sweep show burst results (sustained ones beside them)
        self._by_key[result_key(r)] = r
        state.latest_at[(r.level, r.shape, r.mode)] = r
        if level is not None and not level.is_reference:
            state.shape_levels.setdefault(r.shape, set()).add(r.level)
        if r.mode == Mode.BURST:
            state.latest[r.level] = r
        self._changes.update((Change.LADDER, Change.SWEEP))

    def _on_error(self, ev: rec.Error) -> None:
        self.messages.append(Message(ev.kind, ev.message, ev.level, ev.shape, ev.t, True,
                                     self._device_of(ev)))
        self._changes.add(Change.MESSAGES)
        self._end_running(ev)
        if self._state(ev).runs.finish(ev, ev.t, RunEnd.ERROR):
            self._changes.add(Change.TELEMETRY)

    def _on_info(self, ev: rec.Info) -> None:
        self.messages.append(Message("info", ev.message, ev.level, ev.shape, ev.t, False,
                                     self._device_of(ev)))
        self._changes.add(Change.MESSAGES)
        if ev.message.startswith(TELEMETRY_UNAVAILABLE):
            self.telemetry_note = ev.message
            self._changes.add(Change.TELEMETRY)
        if ev.id is not None:
            if self._state(ev).runs.finish(ev, ev.t, RunEnd.STOPPED):
                self._changes.add(Change.TELEMETRY)  # a run stopped by the user
            self._end_running(ev)

    def _on_telemetry(self, ev: rec.Telemetry) -> None:
        self._state(ev).telemetry.append(ev)
        self._changes.add(Change.TELEMETRY)

    def _on_counters(self, ev: rec.Counters) -> None:
        self.counters.append(Counters.from_event(ev))
        self.note_codes("counters", ev.level)
        self._changes.add(Change.COUNTERS)

    def _on_ceilings(self, ev: rec.Ceilings) -> None:
        self.ceilings[ev.device_index] = ev
        self._changes.add(Change.COUNTERS)

    def _on_source_counters(self, ev: rec.SourceCounters) -> None:
        self.source_counters[ev.level] = ev
        self.note_codes("source_counters", ev.level)
        self._changes.add(Change.COUNTERS)

    def _on_build(self, ev: rec.Build) -> None:
        params = params_key(ev.params)
        self.builds[(ev.level, ev.variant, params)] = ev  # a restart's copy replaces
        self._changes.add(Change.BUILD)

    def _on_done(self, ev: rec.Done) -> None:
        self._end_running(ev)

    def _end_running(self, ev: rec.Placed) -> None:
        """A run's done, or the error or stop that ended it, ends "running"."""
        state = self._state(ev)
        if state.running is not None and ev.id == state.running.id:
            state.running = None
            state.doing = None
            self._changes.add(Change.RUN)

    def _on_library_kernel(self, ev: rec.LibraryKernel) -> None:
        self.library_kernels[ev.level] = ev
        self._changes.add(Change.BUILD)

    def _on_trace(self, ev: rec.Trace) -> None:
        self.traces[(ev.level, ev.shape)] = ev
        self._changes.add(Change.TRACE)

    def _on_launch_clocks(self, ev: rec.LaunchClocks) -> None:
        if ev.complete:  # one that says why it has no numbers keeps the last one read
            self.launch_clocks[(ev.level, ev.shape)] = ev
            self._changes.add(Change.LADDER)  # the ratio at equal clocks of its result

    # the record type -> its handler: every type the store shows, in one table
    _handlers: ClassVar[dict[type, Callable[[SessionStore, Any], None]]] = {
        rec.Session: _on_session, rec.Restart: _on_restart, rec.RunStart: _on_run_start,
        rec.Repeat: _on_repeat, rec.Phase: _on_phase, rec.Result: _on_result,
        rec.Error: _on_error, rec.Info: _on_info, rec.Telemetry: _on_telemetry,
        rec.Counters: _on_counters, rec.Build: _on_build, rec.Done: _on_done,
        rec.Joined: _on_device, rec.SourceCounters: _on_source_counters,
        rec.Kernel: _on_kernel, rec.Ceilings: _on_ceilings,
        rec.LibraryKernel: _on_library_kernel, rec.Trace: _on_trace,
        rec.LaunchClocks: _on_launch_clocks,
    }


