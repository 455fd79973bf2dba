"""The wire and the files: the wire's limits and writer (``events``), every event type as
one typed record (``records``) and the one decoder into them (``decoding``), the time
axis (``timeline``), the runner's commands, the run spec (``plan.RunRequest``), reading
recordings (``recording``, NVML samples in ``telemetry_columns``), writing them
(``session_file``, ``atomic_file``, ``output_file``), the throttle rule and the
source-counters event.

Above ``ladder`` only (a run's shape is ladder data); the runner needs ``events`` and
``commands``, which import no msgspec.

The face (``__all__``) is what the app may use, loaded name by name at first use
(``kernels/faces.py``); the rest of the GPU side imports the modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

__all__ = [
    "DEFAULT_DISTRIBUTION",
    "DEFAULT_REPEATS",
    "FIELD_INDEX",
    "GPM_FIELDS",
    "MAX_DIM",
    "MAX_REPEATS",
    "MAX_TEXT_CHARS",
    "NOT_COUNTED",
    "SAMPLE_WINDOW",
    "STAGE_KINDS",
    "SUSTAINED_FIELDS",
    "TELEMETRY_FIELDS",
    "THROTTLE_MARK",
    "Build",
    "CatalogEntry",
    "Ceilings",
    "CommandRefused",
    "Counters",
    "DeviceEntry",
    "DeviceInfo",
    "Distribution",
    "Done",
    "Error",
    "Event",
    "EventRecord",
    "Info",
    "Joined",
    "Kernel",
    "LaunchClocks",
    "LibraryKernel",
    "Mode",
    "OneLineParser",
    "Phase",
    "Placed",
    "ProtocolError",
    "Recording",
    "RecordingFailed",
    "Repeat",
    "Restart",
    "Result",
    "Run",
    "RunMode",
    "RunRequest",
    "RunStart",
    "SassLine",
    "Session",
    "SessionWriter",
    "SourceCounters",
    "Status",
    "SustainedConfig",
    "Telemetry",
    "TelemetryBlock",
    "Trace",
    "TraceKind",
    "Where",
    "bounded",
    "by_ctrl_c",
    "check_writable",
    "clean_text",
    "command_line",
    "ctrl_c_seen",
    "decode",
    "default_session_path",
    "from_builtins",
    "is_slowdown",
    "ladder_requests",
    "leaves_steps_out",
    "markdown_text",
    "of",
    "parse_shape",
    "read_session",
    "replacing",
    "sample_window",
    "seconds",
    "shown",
    "split_command",
    "sweep_requests",
    "target_of",
    "terminal_text",
    "to_builtins",
    "watch_ctrl_c",
    "whole_number",
    "write_bytes",
    "write_text",
]

if TYPE_CHECKING:  # the same names, for the type checker and the import contracts
    from .atomic_file import check_writable, replacing, target_of, write_bytes, write_text
    from .commands import (
        DEFAULT_REPEATS,
        MAX_DIM,
        MAX_REPEATS,
        SUSTAINED_FIELDS,
        RunMode,
        SustainedConfig,
    )
    from .decoding import EventRecord, decode, from_builtins, of, to_builtins
    from .events import (
        DEFAULT_DISTRIBUTION,
        GPM_FIELDS,
        TELEMETRY_FIELDS,
        Distribution,
        Mode,
        ProtocolError,
    )
    from .header_records import CatalogEntry, DeviceEntry, DeviceInfo, Joined, Session
    from .interrupt import by_ctrl_c, ctrl_c_seen, watch_ctrl_c
    from .option_bounds import (
        CommandRefused,
        OneLineParser,
        bounded,
        command_line,
        seconds,
        split_command,
        whole_number,
    )
    from .plan import RunRequest, ladder_requests, parse_shape, sweep_requests
    from .record_base import Event, Placed
    from .recording import Session as Recording
    from .recording import read_session
    from .records import (
        Build,
        Ceilings,
        Counters,
        Done,
        Info,
        Kernel,
        LaunchClocks,
        LibraryKernel,
        Restart,
        SourceCounters,
        Telemetry,
    )
    from .run_records import Error, Phase, Repeat, Result, Run, RunStart, Where
    from .session_file import RecordingFailed, SessionWriter, default_session_path
    from .source_counters import MAX_TEXT_CHARS, SassLine, Status
    from .telemetry_columns import FIELD_INDEX, TelemetryBlock
    from .text_safety import clean_text, markdown_text, shown, terminal_text
    from .throttle import NOT_COUNTED, THROTTLE_MARK, is_slowdown
    from .trace_kinds import SAMPLE_WINDOW, STAGE_KINDS, leaves_steps_out, sample_window
    from .trace_records import Trace, TraceKind
else:
    __getattr__, __dir__ = lazy(__name__, {
        "atomic_file": ("check_writable", "replacing", "target_of", "write_bytes", "write_text"),
        "commands": ("DEFAULT_REPEATS", "MAX_DIM", "MAX_REPEATS", "RunMode",
                     "SUSTAINED_FIELDS", "SustainedConfig"),
        "decoding": ("EventRecord", "decode", "from_builtins", "of", "to_builtins"),
        "events": ("DEFAULT_DISTRIBUTION", "Distribution", "GPM_FIELDS", "Mode",
                   "ProtocolError", "TELEMETRY_FIELDS"),
        "header_records": ("CatalogEntry", "DeviceEntry", "DeviceInfo", "Joined", "Session"),
        "interrupt": ("by_ctrl_c", "ctrl_c_seen", "watch_ctrl_c"),
        "option_bounds": ("CommandRefused", "OneLineParser", "bounded", "command_line",
                          "seconds", "split_command", "whole_number"),
        "plan": ("RunRequest", "ladder_requests", "parse_shape", "sweep_requests"),
        "record_base": ("Event", "Placed"),
        "recording": ("Recording=Session", "read_session"),
        "records": ("Build", "Ceilings", "Counters", "Done", "Info", "Kernel", "LaunchClocks",
                    "LibraryKernel",
                    "Restart", "SourceCounters", "Telemetry"),
        "run_records": ("Error", "Phase", "Repeat", "Result", "Run", "RunStart", "Where"),
        "session_file": ("RecordingFailed", "SessionWriter", "default_session_path"),
        "source_counters": ("MAX_TEXT_CHARS", "SassLine", "Status"),
        "telemetry_columns": ("FIELD_INDEX", "TelemetryBlock"),
        "text_safety": ("clean_text", "markdown_text", "shown", "terminal_text"),
        "throttle": ("NOT_COUNTED", "THROTTLE_MARK", "is_slowdown"),
        "trace_kinds": ("SAMPLE_WINDOW", "STAGE_KINDS", "leaves_steps_out", "sample_window"),
        "trace_records": ("Trace", "TraceKind"),
    })
