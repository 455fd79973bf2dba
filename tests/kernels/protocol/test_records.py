"""The typed event records and the one decoder into them (issue 29 item 2): every event
type round-trips, a wrong type is refused with the line named, a bool never passes as a
number, old protocol versions decode, and what the runner writes keeps every field."""

from __future__ import annotations

import gzip
import io
import json
import math
from typing import Any

import msgspec
import msgspec.inspect as mi
import places
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemmscope.app.core.replay import ReplayClock, Speed
from gemmscope.app.core.store import SessionStore
from gemmscope.app.core.telemetry import TelemetryBuffer
from gemmscope.kernels.ladder.level import current_params
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol import records as rec
from gemmscope.kernels.protocol.decoding import decode, encode, from_builtins
from gemmscope.kernels.protocol.events import ProtocolError, dumps
from gemmscope.kernels.results.session_report import report_lines

SESSIONS = places.SESSIONS
BIG = 2.0**40


# ------------------------------------------------------------------ values of a type

def values(info: mi.Type) -> st.SearchStrategy[Any]:
    """JSON values that are of the type (as the record's field declares it)."""
    if isinstance(info, mi.UnionType):
        return st.one_of([values(t) for t in info.types])
    if isinstance(info, mi.NoneType):
        return st.none()
    if isinstance(info, mi.BoolType):
        return st.booleans()
    if isinstance(info, mi.IntType):
        return st.integers(int(info.ge) if info.ge is not None else -2**40,
                           int(info.lt) - 1 if info.lt is not None else 2**40)
    if isinstance(info, mi.FloatType):  # within the type's bounds (a ceiling's: from 0)
        lo = max(-BIG, info.ge) if info.ge is not None else -BIG
        return st.floats(lo, BIG, allow_nan=False) | st.integers(int(lo), 2**40)
    if isinstance(info, mi.StrType):
        return st.text(max_size=info.max_length if info.max_length is not None else 12)
    if isinstance(info, mi.EnumType):
        return st.sampled_from([m.value for m in info.cls])
    if isinstance(info, mi.LiteralType):
        return st.sampled_from(info.values)
    if isinstance(info, mi.ListType | mi.VarTupleType):
        return st.lists(values(info.item_type), max_size=3)
    if isinstance(info, mi.TupleType):
        return st.tuples(*(values(t) for t in info.item_types)).map(list)
    if isinstance(info, mi.DictType):
        keys = (values(info.key_type) if isinstance(info.key_type, mi.LiteralType)
                else st.text(max_size=6))
        return st.dictionaries(keys, values(info.value_type),
                               max_size=info.max_length if info.max_length is not None else 3)
    if isinstance(info, mi.StructType):
        return fields_of(info)
    return st.one_of(st.none(), st.integers(-99, 99), st.text(max_size=5))  # any JSON


def fields_of(info: mi.StructType) -> st.SearchStrategy[Any]:
    required = {f.encode_name: values(f.type) for f in info.fields if f.required}
    optional = {f.encode_name: values(f.type) for f in info.fields if not f.required}
    if info.array_like:
        return st.tuples(*(values(f.type) for f in info.fields)).map(list)
    return st.fixed_dictionaries(required, optional=optional)


def event_dicts(cls: type[rec.Event]) -> st.SearchStrategy[dict[str, Any]]:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    fields = [f for f in info.fields if f.encode_name != "t"]
    shaped = mi.StructType(info.cls, tuple(fields), info.tag_field, info.tag,
                           info.array_like, info.forbid_unknown_fields)
    return st.builds(lambda body, t: {"type": info.tag, "t": t, **body},
                     fields_of(shaped), st.floats(0, 1e6, allow_nan=False))


EVENT_TYPES = sorted(rec.BY_TYPE.values(), key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda c: c.__name__)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_event_type_round_trips_through_a_line(cls, data):
    obj = data.draw(event_dicts(cls))
    if cls is rec.Session:
        obj["protocol"] = min(obj["protocol"], 4)  # a newer one is refused (rule 2)
    line = json.dumps(obj)
    record = decode(line)
    assert type(record) is cls and record.t == pytest.approx(obj["t"])
    # the record is what the line says (its owner's bounds applied once) and writes back
    # as a line that reads as the same record
    assert decode(encode(record)) == record
    assert encode(decode(encode(record))) == encode(record)


def field_types(cls: type[msgspec.Struct], leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    return {f.name: f.type for f in msgspec.structs.fields(cls) if f.name not in leave_out}


def test_a_joined_gpu_event_keeps_every_field_a_devices_entry_has():
    """A cluster's later GPU arrives as a ``device`` event (its index in ``device``, the
    run id in ``id``); what its runner said of the GPU is kept as for the header's GPUs."""
    entry = field_types(rec.DeviceEntry, ("id",))
    joined = field_types(rec.Joined, ("t", "device", "id"))
    assert joined == entry
    line = dumps({"type": "device", "t": 2.0, "device": 1, "name": "H200",
                  "mem_bandwidth_gbs": 4800, "peak_source": "datasheet", "host": "b"})
    got = decode(line).entry()
    assert (got.id, got.name, got.mem_bandwidth_gbs, got.peak_source, got.host) == \
        (1, "H200", 4800.0, "datasheet", "b")


def test_a_sustained_repeat_has_every_field_of_a_trial_window():
    window = field_types(rec.TrialWindow)
    repeat = field_types(rec.Repeat)
    optional = {name: kind for name, kind in window.items() if name not in ("i", "ms", "tflops")}
    assert {name: repeat[name] for name in optional} == optional


def numeric_fields() -> list[tuple[type[rec.Event], mi.Field]]:
    out = []
    for cls in EVENT_TYPES:
        info = mi.type_info(cls)
        for f in info.fields:
            kinds = f.type.types if isinstance(f.type, mi.UnionType) else (f.type,)
            if any(isinstance(k, mi.IntType | mi.FloatType) for k in kinds) and f.name != "t":
                out.append((cls, f))
    return out


MINIMAL = {  # the required fields of each type, as a well-formed event has them
    rec.Session: {"protocol": 4, "created": "x", "levels": {}},
    rec.Restart: {"restarts": 1},
    rec.Joined: {"device": 1},
    rec.Levels: {"levels": []},
    rec.RunStart: {"level": "naive", "M": 8, "N": 8, "K": 8, "repeats": 3},
    rec.Repeat: {"level": "naive", "M": 8, "N": 8, "K": 8, "i": 0, "ms": 1.0, "tflops": 1.0},
    rec.Phase: {"phase": "window", "trial": 0},
    rec.Result: {"level": "naive", "M": 8, "N": 8, "K": 8, "dtype": "fp32",
                 "median_ms": 1.0, "tflops": 1.0, "verified": True, "rel_err": 0.0,
                 "repeats": 3},
    rec.Error: {"kind": "launch", "message": "x"},
    rec.Info: {"message": "x"},
    rec.Counters: {"level": "naive", "M": 8, "N": 8, "K": 8, "tool": "ncu", "metrics": {}},
    rec.Build: {"level": "naive", "variant": "scalar"},
    rec.SourceCounters: {"level": "naive", "M": 8, "N": 8, "K": 8, "tool": "ncu",
                         "status": "missing"},
    rec.Kernel: {"level": "mine"},
    rec.Ceilings: {"peak_tflops": {}},
    rec.LibraryKernel: {"level": "cublas_fp32", "M": 8, "N": 8, "K": 8, "tool": "ncu"},
    rec.Trace: {"level": "wgmma_tma", "M": 8, "N": 8, "K": 8, "events": {}},
    rec.LaunchClocks: {"level": "wmma", "M": 8, "N": 8, "K": 8, "tool": "ncu"},
}


@pytest.mark.parametrize(("cls", "field"), numeric_fields(),
                         ids=lambda x: x.__name__ if isinstance(x, type) else x.name)
def test_a_bool_never_passes_as_a_number(cls, field):
    name = field.encode_name
    line = dumps({"type": cls.__struct_config__.tag, "t": 1.0,
                  **MINIMAL.get(cls, {}), name: True})
    if field.required:
        with pytest.raises(ProtocolError, match=f'"{name}" must not be a boolean'):
            decode(line, 7, "f.jsonl")
        return
    if name in cls.STRICT:  # a field its record holds strictly (a ceiling) refuses the line
        with pytest.raises(ProtocolError, match=f'"{name}"'):
            decode(line, 7, "f.jsonl")
        return
    got = getattr(decode(line), field.name)
    assert got is None or got == field.default, (name, got)
    assert got is not True


def test_the_number_rule_is_one_finite_double(tmp_path):
    header = dumps({"type": "session", "t": 0, **MINIMAL[rec.Session]})
    lines = [header] + [
        f'{{"type":"telemetry","t":{i},"power_w":{v}}}'
        for i, v in enumerate(["1e400", "NaN", "-Infinity", "true", '"7"', "7", "7.5"], 1)]
    path = tmp_path / "n.jsonl"
    path.write_text("\n".join(lines) + "\n")
    s = recording.read_session(path)
    [samples] = s.telemetry.values()
    power = samples.column("power_w")
    assert s.problem is None
    assert [None if math.isnan(v) else v for v in power] == [None] * 5 + [7.0, 7.5]


def test_a_wrong_type_refuses_the_line_and_names_it(tmp_path):
    good = {"type": "result", "t": 1.0, **MINIMAL[rec.Result]}
    path = tmp_path / "w.jsonl"
    path.write_text("\n".join([
        dumps({"type": "session", "t": 0, **MINIMAL[rec.Session]}), dumps(good),
        dumps({**good, "tflops": "fast"}), dumps({**good, "verified": 1}),
        dumps({"type": "counters", "t": 2, **MINIMAL[rec.Counters], "metrics": {"m": "1"}}),
        dumps({**good, "mode": "marathon"})]) + "\n")
    s = recording.read_session(path)
    assert len(s.results) == 1 and s.skipped_count == 4
    assert [(e.line, e.source) for e in s.skipped] == [(n, str(path)) for n in (3, 4, 5, 6)]
    assert [e.reason for e in s.skipped] == [
        "result event: \"tflops\" must be a number, not 'fast'",
        'result event: "verified" must be bool, not 1',
        "counters event: metric 'm' must be a number or null, not '1'",
        "result event: \"mode\" must be one of burst, sustained, not 'marathon'"]
    assert str(s.skipped[0]).startswith(f"{path}:3: ")


def test_events_made_in_process_take_the_same_rules():
    made = from_builtins({"type": "info", "t": 1, "message": "m", "level": 5,
                          "M": float("nan")})
    assert isinstance(made, rec.Info) and made.level is None and made.M is None
    with pytest.raises(ProtocolError, match='info event needs a number "t"'):
        from_builtins({"type": "info", "t": float("inf"), "message": "m"})


# ------------------------------------------------------------------ old versions

def version_lines(version: int) -> list[dict[str, Any]]:
    """A recording as protocol ``version`` wrote it: version 1 wrote a restarted runner's
    header as a second session header; before 3 results had no mode; before 4 the header
    had one device and events named none."""
    device = {"name": "NVIDIA H200", "sm_count": 132, "sm_clock_max_mhz": 1980,
              "peak_tflops": {"fp32": 67.0}}
    header = {"type": "session", "t": 0.0, "protocol": version, "created": "2026-01-01",
              "levels": {}, "device": device}
    result = {"type": "result", "t": 2.0, "level": "naive", "M": 64, "N": 64, "K": 64,
              "dtype": "fp32", "median_ms": 0.5, "tflops": 0.001, "verified": True,
              "rel_err": 1e-7, "repeats": 5}
    ref = {**result, "t": 3.0, "level": "cublas_fp32", "tflops": 0.002}
    if version >= 3:
        result, ref = {**result, "mode": "burst"}, {**ref, "mode": "burst"}
    if version >= 4:
        header = {**header, "devices": [{"id": 0, **device}]}
        result, ref = {**result, "device": 0}, {**ref, "device": 0}
    lines = [header, {"type": "telemetry", "t": 1.0, "power_w": 100.0}, ref]
    if version == 1:
        lines += [{**header, "t": 0.0}, {**result, "t": 0.5}]  # the runner, restarted
    else:
        lines += [{"type": "restart", "t": 3.5, "restarts": 1}, {**result, "t": 4.0}]
    return lines


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_every_earlier_protocol_version_decodes_and_renders(tmp_path, version):
    path = tmp_path / f"v{version}.jsonl"
    path.write_text("".join(dumps(e) + "\n" for e in version_lines(version)))
    s = recording.read_session(path)
    assert s.problem is None and s.header.protocol == version
    assert [e.type for e in s.events] == ["session", "telemetry", "result", "restart",
                                          "result"]
    naive = s.results[-1]
    assert naive.mode == "burst" and naive.device_index == 0 and naive.t >= 3.0
    store = SessionStore()
    clock = ReplayClock(s.events, store.handle)
    clock.set_speed(Speed.INSTANT)
    clock.play()
    assert store.restarts == 1 and store.telemetry.count == 1
    assert store.device_text() == "GPU 0 (NVIDIA H200)"
    row = store.row(store.ladder_result("naive"))
    assert row.pct_of_reference == pytest.approx(50.0)  # of cuBLAS, recomputed once
    assert row.pct_of_peak == pytest.approx(100 * 0.001 / 67.0)
    lines, problem = report_lines(str(path))
    assert problem is None and any(line.startswith("naive ") and "50.0%" in line
                                   for line in lines)


# ------------------------------------------------------------------ nothing lost

def unnulled(value: Any) -> Any:
    """A JSON value without its null fields (at any depth), as a record writes it."""
    if isinstance(value, dict):
        return {k: unnulled(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [unnulled(v) for v in value]
    return value


@pytest.mark.parametrize("name", ["h200-ladder.jsonl.gz", "h200x2-ladder.jsonl.gz"])
def test_every_field_a_recorded_runner_wrote_is_kept(name):
    """What the H200's runner wrote, decoded and written again (as a live session's
    recording writes it): every field with a value is still there, with that value."""
    seen: set[str] = set()
    loads = msgspec.json.decode  # as json.loads, for lines json.loads reads: 5 times faster
    for raw in gzip.decompress((SESSIONS / name).read_bytes()).splitlines():
        line = loads(raw)
        back = loads(encode(decode(raw)))
        kept = unnulled(line)
        back = unnulled(back)
        if line["type"] == "result" and "throttled" in line:  # the one rule, applied once
            kept["throttled"] = [r for r in line["throttled"] if r != "GpuIdle"]
        for key in ("mode",):  # the default is left out, and reads back as it
            if kept.get(key) == "burst":
                del kept[key]
        # a parameter renamed since (SWZ, now GM) reads under its new name
        catalog = kept.get("catalog", [])  # a header's list, a user kernel's one entry
        for holder in [kept, *(catalog if isinstance(catalog, list) else [catalog])]:
            if "params" in holder:
                holder["params"] = current_params(holder["params"])
        assert {k: v for k, v in back.items() if k in kept} == kept, line["type"]
        seen.add(line["type"])
    assert {"session", "result", "telemetry", "build", "repeat"} <= seen


def test_the_runners_sustained_events_keep_every_field():
    from fake_benches import SustainedBench as FakeBench
    from fake_benches import serve

    shape = {"level": "cp_async", "M": 64, "N": 64, "K": 64}
    lines = serve(FakeBench(), {"cmd": "run", "id": "s", **shape, "mode": "sustained",
                                "window_s": 1, "trials": 2, "cooldown_s": 0})
    kinds = set()
    for line in lines:
        back = unnulled(json.loads(encode(from_builtins(line))))
        kept = {k: v for k, v in unnulled(line).items() if v != "burst"}
        if "throttled" in kept:
            kept["throttled"] = [r for r in kept["throttled"] if r != "GpuIdle"]
        assert {k: back.get(k) for k in kept} == kept, line["type"]
        kinds.add(line["type"])
    assert {"run_start", "phase", "repeat", "result"} <= kinds


# ------------------------------------------------------------------ telemetry columns

def test_a_recording_naming_a_thousand_gpus_allocates_little(tmp_path):
    """Columns grow with the samples: a small file naming many GPUs costs kilobytes."""
    devices = [{"id": i, "name": f"GPU {i}"} for i in range(1000)]
    lines = [{"type": "session", "t": 0.0, "protocol": 4, "created": "x", "levels": {},
              "devices": devices}]
    lines += [{"type": "telemetry", "t": 1.0 + i, "device": i, "power_w": 1.0}
              for i in range(0, 1000, 7)]
    path = tmp_path / "many.jsonl"
    path.write_text("".join(dumps(e) + "\n" for e in lines))
    assert path.stat().st_size < 120_000
    s = recording.read_session(path)
    store = SessionStore()
    for e in s.events:
        store.handle(e)
    assert len(store.device_ids()) == 1000
    held = sum(st.telemetry._t.nbytes + st.telemetry._fields.nbytes
               for st in store._per.values())
    held += sum(c.t.nbytes + c.values.nbytes for c in s.telemetry.values())
    assert held < 20_000_000, held  # a preallocated buffer per GPU would be gigabytes


def test_samples_in_blocks_are_the_samples_one_by_one(tmp_path):
    lines = [{"type": "session", "t": 0.0, **MINIMAL[rec.Session]}]
    for i in range(600):  # more than a buffer's first size: the columns grow
        lines.append({"type": "telemetry", "t": i / 10, "power_w": float(i),
                      "reasons": ["SwPowerCap"] if i % 3 else ["GpuIdle"],
                      "power_kind": "instant"})
        if i % 97 == 0:
            lines.append({"type": "info", "t": i / 10, "message": str(i)})
    path = tmp_path / "t.jsonl"
    path.write_text("".join(dumps(e) + "\n" for e in lines))
    blocks, single = SessionStore(), SessionStore()
    for e in recording.read_session(path).events:
        blocks.handle(e)
    with path.open("rb") as fh:
        for e in recording.iter_events(fh):
            single.handle(e)
    for name in ("power_w", "sm_clock_mhz"):
        a, b = blocks.telemetry.arrays(name), single.telemetry.arrays(name)
        assert a[0].tolist() == b[0].tolist()
        assert [x if x == x else None for x in a[1]] == [x if x == x else None for x in b[1]]
    assert blocks.telemetry.reasons_seen == single.telemetry.reasons_seen == {"SwPowerCap": 400}
    assert blocks.telemetry.other_reasons_seen == {"GpuIdle": 200}
    assert blocks.telemetry.power_kind == "instant" and blocks.event_count == single.event_count
    np_intervals = blocks.telemetry.reason_intervals("SwPowerCap")
    assert np_intervals.tolist() == single.telemetry.reason_intervals("SwPowerCap").tolist()


def test_a_replay_delivers_a_block_of_samples_by_time(tmp_path):
    lines = [{"type": "session", "t": 0.0, **MINIMAL[rec.Session]}]
    lines += [{"type": "telemetry", "t": float(i), "power_w": 1.0} for i in range(10)]
    lines.append({"type": "info", "t": 20.0, "message": "end"})
    path = tmp_path / "r.jsonl"
    path.write_text("".join(dumps(e) + "\n" for e in lines))
    s = recording.read_session(path)
    store = SessionStore()
    clock = ReplayClock(s.events, store.handle)
    clock.seek(4.5, reset_sink=store.reset)
    assert store.telemetry.times().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert not clock.behind  # nothing more is due: the replay waits
    clock.seek(7.0)
    assert store.telemetry.times().tolist() == [float(i) for i in range(8)]
    clock.seek(2.0, reset_sink=store.reset)  # back: from the start again
    assert store.telemetry.times().tolist() == [0.0, 1.0, 2.0]
    assert clock.duration_s == 20.0


def test_a_ring_keeps_the_newest_samples_when_full():
    buf = TelemetryBuffer(max_samples=300)
    for i in range(1000):
        buf.append(rec.Telemetry(t=float(i), power_w=float(i)))
    t, power = buf.arrays("power_w")
    assert t.tolist() == power.tolist() == [float(i) for i in range(700, 1000)]
    assert buf.count == 1000


def test_the_report_reads_only_what_it_shows_and_still_names_a_damaged_line(tmp_path):
    header = {"type": "session", "t": 0.0, **MINIMAL[rec.Session]}
    result = {"type": "result", "t": 1.0, **MINIMAL[rec.Result]}
    lines = [dumps(header), dumps({"type": "telemetry", "t": 0.5, "power_w": "x"}),
             dumps(result), '{"type":"result","t":2,"oops"}',
             dumps({"type": "telemetry", "t": 3.0})[:20]]  # a cut last line
    path = tmp_path / "d.jsonl"
    path.write_bytes(("\n".join(lines)).encode())
    out, err = io.StringIO(), io.StringIO()
    from gemmscope.kernels.cli import report

    code = report.main([str(path)], out, err)
    assert code == 1 and "naive" in out.getvalue()
    assert f"{path}:4: not JSON" in err.getvalue() and "1 more unreadable line" in err.getvalue()
    s = recording.read_session(path, only=(rec.Result, rec.Error))
    assert [e.line for e in s.skipped] == [4, 5]  # the cut line is said too


def test_decoding_is_one_pass_for_a_good_line(monkeypatch):
    """A well-formed line never reaches the careful way (json plus field by field)."""
    from gemmscope.kernels.protocol import decoding

    def careful(*_args: Any) -> Any:
        raise AssertionError("the careful way was taken")

    monkeypatch.setattr(decoding, "loads", careful)
    with gzip.open(SESSIONS / "h200-ladder.jsonl.gz") as fh:
        lines = [fh.readline() for _ in range(300)]
    for raw in lines:
        decode(raw)
    assert msgspec.json.decode(b"1") == 1


def test_a_type_that_is_not_utf8_is_a_named_line_not_a_crash(tmp_path):
    header = dumps({"type": "session", "t": 0.0, **MINIMAL[rec.Session]}).encode()
    path = tmp_path / "u.jsonl"
    path.write_bytes(header + b'\n{"type":"\xffresult","t":1}\n')
    s = recording.read_session(path)
    assert s.skipped[0].line == 2 and "not UTF-8" in s.problem
    path.write_bytes(b'{"type":"\xffsession"\n' + header + b"\n")
    with pytest.raises(ProtocolError, match=":1: not UTF-8"):
        recording.read_session(path)
