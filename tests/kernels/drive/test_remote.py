"""A runner over ssh, through a real OpenSSH server on 127.0.0.1.

The server runs as root with its own config, a throwaway host key and one authorized
client key, all made here; the client uses its own ``-F`` config (never ``~/.ssh``). The
remote command is the stand-in runner (``tests/support/fake_runner.py``) or this installation's
runner. Every failure ``gemmscope --remote`` explains is provoked for real, and each must
end with exit code 2 and its message within 15 s.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import places
import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.drive import remote

FAKE = places.FAKE_RUNNER
LIMIT_S = 15.0

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def keygen(path: Path) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name,
                    "-f", str(path)], check=True, timeout=30)
    return path


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (Linux /proc), parents before children."""
    out: list[int] = []
    todo = [pid]
    while todo:
        here = todo.pop(0)
        try:
            tasks = list(Path(f"/proc/{here}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                kids = [int(p) for p in (task / "children").read_text().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@dataclass
class Sshd:
    dir: Path
    port: int
    proc: subprocess.Popen[bytes]
    client_key: Path
    stranger_key: Path
    host_pub: Path

    @property
    def target(self) -> str:
        return f"root@127.0.0.1:{self.port}"

    def client_config(self, key: Path | None = None, known_hosts: Path | None = None,
                      strict: str = "accept-new") -> Path:
        key = key or self.client_key
        known = known_hosts or self.dir / "known_hosts"
        path = self.dir / f"ssh_config-{key.name}-{known.name}-{strict}"
        path.write_text(f"Host *\n  IdentityFile {key}\n  IdentitiesOnly yes\n"
                        f"  UserKnownHostsFile {known}\n  StrictHostKeyChecking {strict}\n"
                        f"  GlobalKnownHostsFile /dev/null\n  LogLevel ERROR\n")
        return path

    def options(self, config: Path | None = None) -> list[str]:
        return [f"--ssh-option=-F{config or self.client_config()}"]


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory):
    missing = [exe for exe in ("sshd", "ssh", "ssh-keygen") if shutil.which(exe) is None]
    if missing:
        pytest.skip(f"OpenSSH is not installed here ({', '.join(missing)} missing)")
    if os.geteuid() != 0:
        pytest.skip("the test sshd runs as root, and this is not root")
    d = tmp_path_factory.mktemp("sshd")
    d.chmod(0o700)
    host_key = keygen(d / "host_key")
    client_key = keygen(d / "client_key")
    stranger_key = keygen(d / "stranger_key")
    (d / "authorized_keys").write_text(client_key.with_suffix(".pub").read_text())
    port = free_port()
    config = d / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        "PermitRootLogin prohibit-password\n"
        f"PidFile {d / 'sshd.pid'}\nLogLevel ERROR\n")
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)
    with open(d / "sshd.log", "wb") as log:  # the child keeps its own descriptor
        proc = subprocess.Popen([shutil.which("sshd") or "sshd", "-D", "-e", "-f",
                                 str(config)], stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 10
        while True:
            if proc.poll() is not None:
                pytest.skip(f"sshd did not start: {(d / 'sshd.log').read_text()[-500:]}")
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.skip("sshd did not listen within 10 s")
                time.sleep(0.05)
        yield Sshd(d, port, proc, client_key, stranger_key,
                   host_key.with_suffix(".pub"))
    finally:
        for pid in reversed(descendants(proc.pid)):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def fake(*args: str) -> str:
    return shlex.join([sys.executable, str(FAKE), *args])


def gemmscope(argv: list[str]) -> tuple[int, str, str, float]:
    """The CLI in this process: exit code, stdout, stderr, seconds."""
    out, err = io.StringIO(), io.StringIO()
    t0 = time.monotonic()
    code = cli.main(argv, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue(), time.monotonic() - t0


def bench(sshd: Sshd, remote_command: str, *extra: str, target: str | None = None,
          config: Path | None = None) -> tuple[int, str, str, float]:
    return gemmscope(["bench", "--level", "naive", "--size", "256", "--repeats", "5",
                      "--no-compare", "--remote", target or sshd.target,
                      "--remote-command", remote_command, *sshd.options(config), *extra])


# --------------------------------------------------------------------------- works
def test_levels_remote_lists_the_hosts_levels(sshd: Sshd) -> None:
    code, out, err, took = gemmscope([
        "levels", "--remote", sshd.target, *sshd.options(),
        "--remote-command", shlex.join([sys.executable, "-m", "gemmscope.kernels",
                                        "runner", "--telemetry-hz", "0"])])
    assert code == 0, err
    local = io.StringIO()
    assert cli.main(["levels"], stdout=local) == 0
    assert out == local.getvalue()  # the same installation answers the same catalog
    assert out.split()[0] == "naive"
    assert took < LIMIT_S


def test_bench_remote_records_which_host_ran(sshd: Sshd, tmp_path: Path) -> None:
    path = tmp_path / "remote.jsonl"
    code, out, err, took = bench(sshd, fake(), "--output", str(path))
    assert code == 0, err
    assert "naive" in out
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert events[0]["type"] == "session"
    assert events[0]["remote"] == sshd.target
    assert [e["type"] for e in events].count("result") == 1
    assert took < LIMIT_S


# --------------------------------------------------------------------------- fails
def expect_failure(result: tuple[int, str, str, float], *words: str) -> str:
    code, _out, err, took = result
    assert code == 2, err
    assert took < LIMIT_S, f"took {took:.1f} s: {err}"
    for word in words:
        assert word in err, err
    return err


def test_unreachable_host(sshd: Sshd) -> None:
    closed = free_port()
    expect_failure(bench(sshd, fake(), target=f"root@127.0.0.1:{closed}"),
                   "unreachable", "connection refused")


def test_authentication_refused(sshd: Sshd) -> None:
    config = sshd.client_config(key=sshd.stranger_key)
    err = expect_failure(bench(sshd, fake(), config=config), "authentication refused")
    assert "password" in err  # says none is asked for


def test_host_key_verification_failed(sshd: Sshd) -> None:
    known = sshd.dir / "wrong_known_hosts"
    stranger = sshd.stranger_key.with_suffix(".pub").read_text().split()[:2]
    known.write_text(f"[127.0.0.1]:{sshd.port} {' '.join(stranger)}\n")
    config = sshd.client_config(known_hosts=known, strict="yes")
    expect_failure(bench(sshd, fake(), config=config), "host key verification failed")


def test_gemmscope_missing_on_the_host(sshd: Sshd) -> None:
    expect_failure(bench(sshd, "no-such-gemmscope runner"), "gemmscope is missing",
                   "--remote-command")


def test_incompatible_protocol(sshd: Sshd) -> None:
    expect_failure(bench(sshd, fake("--protocol", "999")), "incompatible protocol",
                   "999")


def test_a_command_that_is_no_runner(sshd: Sshd) -> None:
    expect_failure(bench(sshd, "echo hello"), "does not speak gemmscope's protocol")


def test_runner_dies_mid_run(sshd: Sshd, tmp_path: Path) -> None:
    # over ssh the runner's exit is the channel closing with its status
    err = expect_failure(bench(sshd, fake("--mode", "crash"), "--output",
                               str(tmp_path / "crash.jsonl")), "exited (code 3)")
    assert "127.0.0.1" in err


@contextlib.contextmanager
def dropping(sshd: Sshd, after_s: float = 0.6):
    """Meanwhile, once the stand-in runs under sshd, kill the sshd session process and
    everything under it (the connection drops with no exit status)."""
    stop = threading.Event()

    def drop() -> None:
        while not stop.is_set():
            if any(str(FAKE) in cmdline(pid) for pid in descendants(sshd.proc.pid)):
                time.sleep(after_s)  # a few repeats arrive first
                for pid in descendants(sshd.proc.pid):
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=drop, daemon=True)
    killer.start()
    try:
        yield
    finally:
        stop.set()
        killer.join(5)


def test_connection_dropped_mid_run(sshd: Sshd, tmp_path: Path) -> None:
    """The sshd session process and the runner under it are killed while a run is in
    flight: ssh exits 255 after the header, the run becomes an error."""
    with dropping(sshd):
        result = bench(sshd, fake("--mode", "slow"), "--output",
                       str(tmp_path / "drop.jsonl"))
    err = expect_failure(result, "connection to", "lost", "Run again to reconnect")
    assert sshd.target in err


# --------------------------------------------------------------------------- the app
def test_app_live_over_ssh_names_the_host_reports_a_drop_and_reconnects(
        qtbot, make_window, sshd: Sshd, tmp_path: Path) -> None:
    from gemmscope.app.core.runner_command import plan_live
    from gemmscope.kernels.drive.session import SessionState
    from gemmscope.kernels.ladder.shape import Shape
    from gemmscope.kernels.protocol.plan import RunRequest
    from gemmscope.kernels.protocol.recording import read_session

    plan = plan_live(None, None, remote=sshd.target, remote_command=fake("--mode", "slow"),
                     ssh_options=sshd.options()[0].split("=", 1)[1:])
    assert plan.remote == sshd.target
    window = make_window()
    path = window.start_live(plan.label, plan.command, tmp_path / "live.jsonl",
                             remote=plan.remote)
    live = window.live
    assert live is not None
    assert sshd.target in window.mode_text()
    qtbot.waitUntil(lambda: live.state is SessionState.READY, timeout=10_000)
    with dropping(sshd), qtbot.waitSignal(live.idle, timeout=15_000):
        live.submit([RunRequest("naive", Shape(64, 64, 64), 10)])
    assert live.state is SessionState.FAILED
    said = window.statusBar().currentMessage()
    assert f"connection to {sshd.target} lost" in said and "Run again to reconnect" in said
    with qtbot.waitSignal(live.idle, timeout=15_000):  # Run again: it reconnects
        live.submit([RunRequest("naive", Shape(64, 64, 64), 3)])
    assert live.state is SessionState.READY
    window.close_source()
    session = read_session(path)
    assert session.header.remote == sshd.target
    assert [e.kind for e in session.errors] == ["runner_crash"]
    assert len(session.results) == 1
    assert [e.type for e in session.events].count("repeat") >= 3 + 1  # kept, up to the drop


def test_plan_live_remote_comes_first_and_is_checked() -> None:
    from gemmscope.app.core.runner_command import plan_live

    plan = plan_live("other runner", "pref runner", remote="me@gpu:2200",
                     remote_command="gemmscope runner --telemetry-hz 10")
    assert plan.command is not None and plan.command[0] == "ssh"
    assert plan.command[-2:] == ["me@gpu", "gemmscope runner --telemetry-hz 10"]
    assert plan.remote == "me@gpu:2200" and "me@gpu:2200" in plan.label
    with pytest.raises(ValueError):
        plan_live(None, None, remote="gpu:notaport")


def test_a_runner_silent_after_connecting_is_given_up_at_once(fake_runner: Path) -> None:
    """No header within header_timeout_s: the transport or the install is at fault, so it
    is not retried (no ssh needed: the bound is the session's)."""
    from gemmscope.kernels.drive.session import RunnerSession, SessionState

    events: list[dict] = []
    options = remote.session_options("gpu-box")
    options["header_timeout_s"] = 0.5
    session = RunnerSession(events.append, [sys.executable, str(fake_runner), "--mode",
                                            "silent_start"], **options)
    t0 = time.monotonic()
    try:
        with pytest.raises(RuntimeError, match=r"said nothing within 0\.5 s"):
            session.wait_ready()
    finally:
        session.close()
    assert time.monotonic() - t0 < 5
    assert session.state is SessionState.STOPPED
    assert [e.kind for e in events if e.type == "error"] == ["timeout"]
    assert "will not help" in events[-1].message


def test_ncu_does_not_go_with_remote(tmp_path: Path) -> None:
    code, _out, err, _took = gemmscope(["record", "-o", str(tmp_path / "x.jsonl"), "--ncu",
                                        "--remote", "gpu-box"])
    assert code == 2 and "--ncu" in err


# --------------------------------------------------------------------------- argv
def test_ssh_command_argv() -> None:
    argv = remote.ssh_command("alice@gpu.example:2200", "gemmscope runner",
                              extra=["Compression=yes", "-F/tmp/cfg"])
    assert argv[:2] == ["ssh", "-T"]
    assert "BatchMode=yes" in argv and "ConnectTimeout=10" in argv
    assert argv[argv.index("-p") + 1] == "2200"
    assert ["-o", "Compression=yes"] == argv[argv.index("Compression=yes") - 1:][:2]
    assert "-F/tmp/cfg" in argv
    assert argv[-3:] == ["--", "alice@gpu.example", "gemmscope runner"]


@pytest.mark.parametrize(("text", "host", "user", "port"), [
    ("gpu", "gpu", None, None), ("me@gpu:22", "gpu", "me", 22),
    ("[::1]:2222", "::1", None, 2222), ("::1", "::1", None, None)])
def test_parse_target(text: str, host: str, user: str | None, port: int | None) -> None:
    t = remote.parse_target(text)
    assert (t.host, t.user, t.port) == (host, user, port)


@pytest.mark.parametrize("text", ["", "gpu:0", "gpu:x", "-oProxyCommand=x", "@gpu", "a b"])
def test_parse_target_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        remote.parse_target(text)


@pytest.mark.parametrize(("code", "tail", "seen", "words", "permanent"), [
    (255, "ssh: connect to host gpu port 22: Connection timed out", False,
     "unreachable: connection timed out", True),
    (255, "ssh: Could not resolve hostname gpu: Name or service not known", False,
     "unreachable", True),
    (255, "me@gpu: Permission denied (publickey).", False, "authentication refused", True),
    (255, "Host key verification failed.", False, "host key verification failed", True),
    (127, "sh: gemmscope: not found", False, "gemmscope is missing", True),
    (255, "Connection to gpu closed by remote host.", True, "connection to gpu lost", True),
    (255, "Timeout, server gpu not responding.", True, "Run again to reconnect", True),
    (1, "Traceback ...", True, "exited (code 1)", False),
])
def test_explain(code: int, tail: str, seen: bool, words: str, permanent: bool) -> None:
    failure = remote.explain(code, tail, "gpu", header_seen=seen)
    assert words in failure.message
    assert failure.permanent is permanent
