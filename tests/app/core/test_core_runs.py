from __future__ import annotations

from pathlib import Path

from gemmscope.app.core import export
from gemmscope.app.core.gpu_probe import probe
from gemmscope.app.core.runs import parse_dim, parse_repeats
from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.commands import parse_command
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.plan import RunQueue, RunRequest, sweep_requests
from gemmscope.kernels.protocol.recording import read_session
from gemmscope.kernels.protocol.session_file import SessionWriter, default_session_path


def test_dimension_fields_refuse_bad_input_with_a_reason():
    assert parse_dim("M", "4096") == (4096, "")
    assert parse_dim("M", " 1_024 ") == (1024, "")
    assert parse_dim("M", "") == (None, "M is empty")
    assert parse_dim("N", "abc")[1] == "N must be a whole number, not 'abc'"
    assert parse_dim("K", "0")[1] == "K must be at least 1"
    assert parse_dim("K", "2.5")[0] is None
    assert "at most 1,048,576" in parse_dim("K", str(2**20 + 1))[1]
    assert parse_repeats("0")[1] == "repeats must be at least 1"
    assert parse_repeats("10001")[0] is None


def test_queue_sends_one_run_at_a_time_and_commands_validate():
    q = RunQueue()
    q.extend(sweep_requests("naive", 5, sizes=(64, 128)))
    run_id, req = q.start_next()
    assert q.start_next() is None  # one in flight
    parse_command(__import__("json").dumps(req.command(run_id)))
    assert q.finish("other-id") is None
    assert q.finish(run_id) == RunRequest("naive", Shape(64, 64, 64), 5)
    run_id2, req2 = q.start_next()
    assert run_id2 != run_id and req2.shape.N == 128
    q.finish()
    assert q.start_next() is None and not q.busy


def test_session_writer_flushes_each_line(tmp_path: Path, synthetic_file):
    path = tmp_path / "live.jsonl"
    writer = SessionWriter(path)
    lines = synthetic_file.read_text().splitlines()
    for line in lines[:5]:
        writer.write_line(line)
        assert path.read_text().count("\n") == writer.lines  # on disk already
    writer.close()
    assert len(read_session(path).events) == 5


def test_session_files_started_in_the_same_second_differ(tmp_path: Path):
    import datetime as dt

    now = dt.datetime(2026, 12, 1, 9, 30, 5)
    folder = tmp_path / "sessions" / "new"  # made when missing
    paths = [default_session_path(folder, now) for _ in range(3)]
    assert [p.name for p in paths] == ["live-20261201-093005.jsonl",
                                       "live-20261201-093005-2.jsonl",
                                       "live-20261201-093005-3.jsonl"]
    assert all(p.exists() and p.stat().st_size == 0 for p in paths)  # taken, exclusively
    writer = SessionWriter(paths[1])
    writer.write_line('{"type": "ready", "t": 0}')
    writer.close()
    assert paths[1].read_text() == '{"type": "ready", "t": 0}\n'


def test_appending_to_a_cut_file_starts_on_a_new_line(tmp_path: Path):
    for before, after in [(b'{"a": 1}\n{"type": "res', b'{"a": 1}\n{"type": "res\nNEW\n'),
                          (b'{"a": 1}\n', b'{"a": 1}\nNEW\n'), (b"", b"NEW\n")]:
        path = tmp_path / "s.jsonl"
        path.write_bytes(before)
        writer = SessionWriter(path)
        writer.write_line("NEW")
        writer.close()
        assert path.read_bytes() == after
        assert writer.lines == 1


def test_csv_and_markdown_reports(synthetic_file):
    store = SessionStore()
    for ev in read_session(synthetic_file).events:
        store.handle(of(ev))
    csv_text = export.results_csv(store)
    rows = csv_text.splitlines()
    assert rows[0].startswith("level,precision,mode,dtype,shape,M,N,K,median ms,TFLOPS,")
    assert len(rows) == 1 + len(store.results)
    wmma = next(r for r in rows if r.startswith("wmma,"))
    assert ",300.0,42.9%,cublas_fp16,30.3%," in wmma
    md = export.ladder_markdown(store, "synthetic.jsonl", [("Ladder", "ladder.png")])
    assert "synthetic data, not a measurement" in md
    # a recording's text is escaped (an underscore too): it renders as itself; references
    # are named by their titles
    assert "| wmma | FP16 | 4096×4096×4096 | 300.0 | 42.9% | cuBLAS FP16 | 30.3% |" in md
    assert "![Ladder](<ladder.png>)" in md
    assert "launch (double\\_buffer at 7×100×1000)" in md


def test_gpu_probe_gives_a_reason(monkeypatch):
    monkeypatch.setenv("GEMMSCOPE_NO_GPU", "1")
    assert "GEMMSCOPE_NO_GPU" in probe().reason
    monkeypatch.delenv("GEMMSCOPE_NO_GPU")
    result = probe()
    assert result.available or result.reason  # here: no CuPy / no driver, said so


class FakeDriver:
    """Stands in for libcuda: cuInit's result and the device list are set by the test."""

    def __init__(self, init_rc: int, names: list[str]):
        self.init_rc, self.names = init_rc, names

    def cuInit(self, flags):
        return self.init_rc

    def cuDeviceGetCount(self, ref):
        ref._obj.value = len(self.names)
        return 0

    def cuDeviceGet(self, ref, ordinal):
        ref._obj.value = ordinal
        return 0

    def cuDeviceGetName(self, buf, size, dev):
        buf.value = self.names[dev.value].encode()
        return 0


def test_gpu_probe_reads_the_driver(monkeypatch):
    from gemmscope.app.core import gpu_probe

    monkeypatch.setattr(gpu_probe, "_load_driver", lambda: FakeDriver(0, ["NVIDIA H200"]))
    assert gpu_probe.probe_driver() == gpu_probe.GpuProbe(True, "NVIDIA H200", "", 1)
    monkeypatch.setattr(gpu_probe, "_load_driver", lambda: FakeDriver(100, []))
    assert gpu_probe.probe_driver().reason == "no CUDA device (the driver found none)"
    monkeypatch.setattr(gpu_probe, "_load_driver", lambda: FakeDriver(999, []))
    assert "cuInit error 999" in gpu_probe.probe_driver().reason
    monkeypatch.setattr(gpu_probe, "_load_driver", lambda: None)
    assert gpu_probe.probe_driver().reason == "no CUDA driver (libcuda not found)"


def test_the_run_form_leaves_out_what_the_sessions_gpu_cannot_run_and_says_so():
    from gemmscope.app.core.runs import RunForm
    from gemmscope.kernels.ladder import registry
    from gemmscope.kernels.protocol.commands import RunMode
    from gemmscope.kernels.protocol.events import Mode
    from gemmscope.kernels.protocol.plan import ladder_requests

    def header(cc: str):
        return of({"type": "session", "t": 0.0, "protocol": 4, "created": "x", "levels": {},
                   "catalog": registry.catalog(), "device": {"name": "GPU", "cc": cc}})

    form = RunForm(Shape(256, 256, 256), mode=RunMode(Mode.SUSTAINED))
    asked = ladder_requests([lv.id for lv in registry.ladder()], Shape(256, 256, 256))
    runs, said = form.runs(asked, header("8.9"))  # an L4: no Hopper levels
    kept = {r.level for r in runs}
    assert "naive" in kept and "wgmma_tma" not in kept
    assert len(said) == len(asked) - len(runs) and all(s.startswith("skipped: ") for s in said)
    assert any("wgmma_tma needs sm_90a only" in s for s in said)
    assert all(r.mode == Mode.SUSTAINED for r in runs)
    # a Hopper runs them all; without a header (no runner yet) nothing is left out
    assert form.runs(asked, header("9.0")) == ([r.with_mode(form.mode) for r in asked], [])
    assert len(form.runs(asked, None)[0]) == len(asked)


def test_the_apps_burst_runs_ask_for_half_a_second_and_sustained_runs_for_none():
    """Issue 40 item 3: a warm ladder at 2048³ in 30 s; `record` keeps the 1 s window."""
    from gemmscope.app.core.runs import APP_ENERGY_S, RunForm
    from gemmscope.kernels.protocol.commands import ENERGY_S, RunMode
    from gemmscope.kernels.protocol.events import Mode
    from gemmscope.kernels.protocol.plan import RunRequest

    assert APP_ENERGY_S == 0.5 and ENERGY_S[1] <= APP_ENERGY_S < ENERGY_S[0]
    requests = [RunRequest("naive", Shape(64, 64, 64)), RunRequest("coalesced", Shape(64, 64, 64))]
    runs, _ = RunForm(Shape(64, 64, 64)).runs(requests, None)
    assert [r.command("x")["energy_s"] for r in runs] == [APP_ENERGY_S] * 2
    sustained, _ = RunForm(Shape(64, 64, 64), mode=RunMode(Mode.SUSTAINED)).runs(requests, None)
    assert all("energy_s" not in r.command("x") for r in sustained)


def test_the_run_form_sends_its_operand_distribution_with_every_run():
    import json

    from gemmscope.app.core.runs import RunForm
    from gemmscope.kernels.protocol.events import Distribution
    from gemmscope.kernels.protocol.plan import ladder_requests

    asked = ladder_requests(["naive", "wmma"], Shape(256, 256, 256))
    runs, _ = RunForm(Shape(256, 256, 256)).runs(asked, None)  # the default, uniform: unsaid
    assert all("operands" not in r.command("r") for r in runs)
    runs, _ = RunForm(Shape(256, 256, 256), operands=Distribution.ZEROS).runs(asked, None)
    assert [parse_command(json.dumps(r.command("r"))).operands for r in runs] == \
        [Distribution.ZEROS] * 2
