"""Several GPUs in one session (kernels/drive/devices.py, gpu_select.py; protocol version 4),
driven with two stand-in runners as two "GPUs": no GPU needed."""

from __future__ import annotations

import io
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import places
import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.device import gpu_select, telemetry
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol import records as rec
from gemmscope.kernels.protocol.decoding import decode

FAKE = places.FAKE_RUNNER
BUNDLED = places.SESSIONS / "h200-ladder.jsonl.gz"
LEVELS = "naive,coalesced,smem_tiled"
SHAPES = ["-s", "16", "-s", "32"]


def record(tmp_path: Path, *options: str, mode: str = "ok") -> tuple[int, recording.Session, str]:
    out = tmp_path / "multi.jsonl"
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "--runner", f"{sys.executable} {FAKE} --mode {mode}",
                     "-l", LEVELS, *SHAPES, "-r", "3", "--no-compare", *options],
                    stdout=io.StringIO(), stderr=err)
    return code, recording.read_session(out), err.getvalue()


def runs_of(results: list[rec.Result]) -> list[tuple[str, int]]:
    return sorted((r.level, r.M) for r in results)


def test_two_runners_make_one_session_with_the_device_of_every_event(tmp_path):
    code, session, _ = record(tmp_path, "--devices", "0,1")
    assert code == 0
    header = session.header
    assert header.protocol == protocol.PROTOCOL_VERSION
    # each runner was given its GPU: the stand-in names itself after CUDA_VISIBLE_DEVICES
    assert [(d.id, d.gpu, d.name, d.uuid) for d in header.devices] == [
        (0, "0", "Fake GPU 0", "GPU-fake-0"), (1, "1", "Fake GPU 1", "GPU-fake-1")]
    later = session.events[1:]
    assert [e.type for e in session.events].count("session") == 1
    assert later and all(e.device in (0, 1) for e in later)
    # without --split every GPU runs the whole list, for comparison
    expected = [(lv, n) for lv in LEVELS.split(",") for n in (16, 32)]
    for device in (0, 1):
        mine = [r for r in session.results if r.device == device]
        assert runs_of(mine) == sorted(expected)
        # from that GPU's own runner (the stand-in reads 10 + its GPU index TFLOPS)
        assert {r.tflops for r in mine} == {10.0 + device}
    # run ids are unique across GPUs, so a reader can tell two runs in flight apart
    starts = [e.id for e in session.events if isinstance(e, rec.RunStart)]
    assert len(set(starts)) == len(starts) == 2 * len(expected)


def test_split_sends_each_run_to_one_gpu_exactly_once(tmp_path):
    code, session, _ = record(tmp_path, "--devices", "0-1", "--split", mode="slow")
    assert code == 0
    expected = sorted((lv, n) for lv in LEVELS.split(",") for n in (16, 32))
    assert runs_of(session.results) == expected
    starts = Counter((e.level, e.M) for e in session.events if isinstance(e, rec.RunStart))
    assert sorted(starts) == expected and set(starts.values()) == {1}
    # both GPUs took work (runs of 0.6 s each: the second is free long before the end)
    assert {r.device for r in session.results} == {0, 1}


def test_device_n_picks_one_gpu_and_says_which(tmp_path):
    code, session, _ = record(tmp_path, "--device", "3")
    assert code == 0
    [entry] = session.header.devices
    assert (entry.gpu, entry.name) == ("3", "Fake GPU 3")
    assert {r.device for r in session.results} == {0}


def test_progress_says_which_device(tmp_path):
    _, _, err = record(tmp_path, "--devices", "0,1")
    assert "device 0: naive 16x16x16" in err and "device 1: naive 16x16x16" in err


@pytest.mark.parametrize("options, message", [
    (["--device", "0", "--devices", "0,1"], "give --device or --devices"),
    (["--split"], "--split spreads runs over --devices"),
    (["--devices", "0,0"], "GPU 0 is given twice"),
    (["--devices", "x"], "give GPU indices"),
])
def test_wrong_gpu_options_are_refused(tmp_path, options, message):
    err = io.StringIO()
    code = cli.main(["record", "-o", str(tmp_path / "r.jsonl"), "--runner",
                     f"{sys.executable} {FAKE}", "-l", "naive", "-s", "16", *options],
                    stdout=io.StringIO(), stderr=err)
    assert code == 2 and message in err.getvalue()
    assert not (tmp_path / "r.jsonl").exists()


def test_old_recordings_read_as_device_zero(tmp_path):
    """A protocol 3 file, as recorded before version 4: one "device" object in the
    header, no "devices" list, no device field on any event."""
    lines = [
        {"type": "session", "t": 0.0, "protocol": 3, "created": "2026-11-29T10:00:00+00:00",
         "device": {"name": "NVIDIA H200", "sm_count": 132}, "levels": {}},
        {"type": "run_start", "t": 1.0, "id": "run-1", "level": "naive", "M": 64, "N": 64,
         "K": 64, "mode": "burst"},
        {"type": "result", "t": 2.0, "id": "run-1", "level": "naive", "M": 64, "N": 64,
         "K": 64, "dtype": "fp32", "median_ms": 1.0, "tflops": 1.0, "verified": True,
         "rel_err": 0.0, "repeats": 5, "mode": "burst"},
    ]
    path = tmp_path / "v3.jsonl"
    path.write_text("".join(protocol.dumps(e) + "\n" for e in lines))
    session = recording.read_session(path)
    assert session.header.protocol == 3 and session.header.devices is None
    [entry] = session.header.gpus()
    assert entry.id == 0 and "H200" in entry.name
    assert session.results and all(e.device_index == 0 for e in session.events[1:])


def test_the_bundled_recording_names_its_one_device():
    session = recording.read_session(BUNDLED)
    [entry] = session.header.gpus()
    assert entry.id == 0 and "H200" in entry.name
    assert session.results and all(e.device_index == 0 for e in session.events[1:])


def test_version_4_fields_are_checked_at_the_edge():
    line = ('{"type":"repeat","t":1,"level":"a","M":1,"N":1,"K":1,"i":0,"ms":1,"tflops":1,'
            '"device":%s,"host":%s}')
    assert decode(line % ("1", '"gpu-box"')).device == 1
    bad = decode(line % ("-1", "7"))
    assert bad.device is None and bad.host is None and bad.device_index == 0
    with pytest.raises(protocol.ProtocolError, match="must be an index"):
        decode('{"type":"device","t":1,"device":-2}')
    header = decode(
        '{"type":"session","t":0,"protocol":4,"created":"x","levels":{},"devices":'
        '[{"id":0,"name":"H200","sm_count":"many"},{"id":"one"},{"id":1,"uuid":5}]}')
    assert header.devices == [rec.DeviceEntry(id=0, name="H200"), rec.DeviceEntry(id=1)]


def test_a_newer_protocol_than_4_is_still_refused(tmp_path):
    path = tmp_path / "new.jsonl"
    newer = protocol.PROTOCOL_VERSION + 1
    path.write_text(f'{{"type":"session","t":0,"protocol":{newer},"created":"x","levels":{{}}}}\n')
    with pytest.raises(protocol.NewerProtocol):
        recording.read_session(path)


@pytest.mark.parametrize("text, count, gpus", [
    ("0,1", None, [0, 1]), ("2-4", None, [2, 3, 4]), ("all", 2, [0, 1]), (" 1 ", 8, [1])])
def test_devices_lists(text, count, gpus):
    assert gpu_select.parse_devices(text, count) == gpus


@pytest.mark.parametrize("text, count", [("all", 0), ("all", None), ("0,2", 2), ("", None)])
def test_devices_lists_that_cannot_be(text, count):
    with pytest.raises(ValueError):
        gpu_select.parse_devices(text, count)


def test_a_runner_gets_its_gpu_through_the_environment():
    env = gpu_select.gpu_env(1, {"PATH": "/bin"})
    assert env == {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    assert gpu_select.visible_index(env) == 1
    # in CUDA's own order (fastest first) index 1 need not be NVML's 1: not trusted
    assert gpu_select.visible_index({"CUDA_VISIBLE_DEVICES": "1"}) == 0
    assert gpu_select.visible_index({}) == 0


class FakeNvml:
    """pynvml with two GPUs, NVML's bus ids written with an 8-digit domain."""

    BUS = ("00000000:19:00.0", "00000000:3B:00.0")

    def __init__(self):
        self.shutdowns = 0

    class NVMLError(Exception):
        pass

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        self.shutdowns += 1

    def nvmlDeviceGetCount(self):
        return len(self.BUS)

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetPciInfo(self, h):
        return SimpleNamespace(busId=self.BUS[h].encode())

    def nvmlDeviceGetUUID(self, h):
        return f"GPU-{h}"

    def nvmlGpmQueryDeviceSupport(self, h):
        raise self.NVMLError("no GPM")


def test_nvml_samples_the_gpu_cuda_runs_on_by_its_bus_id(monkeypatch):
    fake = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    # CUDA (CUDA_VISIBLE_DEVICES=1: its device 0) writes the bus id with 4 domain digits
    nvml = telemetry.Nvml(0, pci_bus_id="0000:3b:00.0")
    assert nvml.available and nvml.index == 1 and nvml.uuid() == "GPU-1"
    nvml.close()
    missing = telemetry.Nvml(0, pci_bus_id="0000:99:00.0")
    assert not missing.available and "0000:99:00.0" in (missing.reason or "")


def test_a_gpu_whose_runner_does_not_start_is_named(tmp_path):
    # GPU 1's "runner" exits at once; GPU 0's is the stand-in
    runner = (f"sh -c '[ \"$CUDA_VISIBLE_DEVICES\" = 1 ] && {{ echo no device >&2; exit 3; }}; "
              f"exec {sys.executable} {FAKE}'")
    err = io.StringIO()
    out = tmp_path / "r.jsonl"
    code = cli.main(["record", "-o", str(out), "--runner", runner, "--devices", "0,1",
                     "-l", "naive", "-s", "16", "--no-compare"],
                    stdout=io.StringIO(), stderr=err)
    assert code == 2
    assert "GPU 1: the runner exited (code 3): no device" in err.getvalue()
    assert "GPU 0:" not in err.getvalue() and not out.exists()


def test_a_crash_on_one_gpu_costs_its_run_only_and_says_which_gpu(tmp_path):
    # the first runner process to start crashes in its first run; its restart serves
    state = tmp_path / "crash.state"
    out = tmp_path / "crash.jsonl"
    code = cli.main(["record", "-o", str(out), "--runner",
                     f"{sys.executable} {FAKE} --mode crash --state {state}",
                     "--devices", "0,1", "--split", "-l", LEVELS, *SHAPES, "-r", "3",
                     "--no-compare"], stdout=io.StringIO(), stderr=io.StringIO())
    session = recording.read_session(out)
    assert code == 0  # as with one GPU: every result that was made is verified
    [lost] = session.errors
    assert lost.kind == "runner_crash" and lost.device in (0, 1)
    restarts = [e for e in session.events if isinstance(e, rec.Restart)]
    assert [r.device for r in restarts] == [lost.device]
    done = [*runs_of(session.results), (lost.level, lost.M)]
    assert sorted(done) == sorted((lv, n) for lv in LEVELS.split(",") for n in (16, 32))


def test_report_of_two_gpus_names_both_and_says_each_rows_device(tmp_path):
    _, session, _ = record(tmp_path, "--devices", "0,1")
    out = io.StringIO()
    assert cli.main(["report", session.path], stdout=out, stderr=io.StringIO()) == 0
    first, _, head, _rule, *rows = out.getvalue().splitlines()
    assert "Fake GPU 0 + Fake GPU 1" in first
    assert head.split()[:2] == ["device", "level"]
    assert sorted(row.split()[0] for row in rows) == ["0"] * 6 + ["1"] * 6


def test_append_is_refused_for_several_gpus(tmp_path):
    _, session, _ = record(tmp_path, "--devices", "0,1")
    before = Path(session.path).read_bytes()
    err = io.StringIO()
    code = cli.main(["record", "-o", session.path, "--append", "--runner",
                     f"{sys.executable} {FAKE}", "--devices", "0,1", "-l", "naive", "-s", "16"],
                    stdout=io.StringIO(), stderr=err)
    assert code == 2 and "--append continues a session of one runner" in err.getvalue()
    assert Path(session.path).read_bytes() == before


def test_the_bus_id_of_cudas_device_comes_from_its_properties_where_the_call_fails():
    from gemmscope.kernels.device.gpu import _bus_id

    def no_call(device_id):
        raise AttributeError("deviceGetPCIBusId")

    cp = SimpleNamespace(cuda=SimpleNamespace(runtime=SimpleNamespace(
        deviceGetPCIBusId=no_call)))
    props = {"pciDomainID": 0, "pciBusID": 0x3B, "pciDeviceID": 0}
    assert _bus_id(cp, 0, props) == "0000:3b:00.0"
    assert gpu_select.same_bus_id(_bus_id(cp, 0, props), FakeNvml.BUS[1])
    assert _bus_id(cp, 0, {}) is None
    cp.cuda.runtime.deviceGetPCIBusId = lambda device_id: "0000:19:00.0"
    assert _bus_id(cp, 0, props) == "0000:19:00.0"
