"""A user's source is compiled in a child process with limits (issue 45): a small
preprocessor bomb is refused in words within the limit, and Ctrl-C or a SIGTERM to the
command ends the compile at once."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gemmscope.kernels.ladder.spec_file import load_spec, read_source
from gemmscope.kernels.toolchain import build_event, compile_child
from gemmscope.kernels.toolchain.variant_check import check_spec

psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.skipif(build_event.nvrtc_missing() is not None,
                                reason="NVRTC (the nvrtc extra) is not installed")
EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "kernels"
# 1 KB of macros that expand to 10^12 empty statements
BOMB = "#define B0 ;\n" + "".join(
    f"#define B{i + 1} " + " ".join([f"B{i}"] * 10) + "\n" for i in range(12)) + \
    "__device__ void bomb() { B12 }\n"


def bomb_spec(tmp_path: Path) -> Path:
    for name in ("regblock_float4.toml", "regblock_float4.cu"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    cu = tmp_path / "regblock_float4.cu"
    cu.write_text(BOMB + cu.read_text(encoding="utf-8"), encoding="utf-8")
    return tmp_path / "regblock_float4.toml"


def test_a_preprocessor_bomb_is_refused_in_words_within_the_limit(tmp_path, monkeypatch):
    assert len(BOMB) < 2048
    limits = compile_child.Limits(wall_s=5.0, cpu_s=5, memory_bytes=2 << 30)
    monkeypatch.setattr(build_event, "USER", limits)
    spec = load_spec(bomb_spec(tmp_path))
    started = time.monotonic()
    result, _launch = check_spec(spec, read_source(spec), None, 1024, 1024, 1024)
    took = time.monotonic() - started
    assert took < limits.wall_s + 10
    failed = [f for f in result.findings if f.what == "compile"]
    assert failed and "stopped" in failed[0].text and "at most 5 s" in failed[0].text
    assert not result.ok


def test_a_user_kernel_still_compiles_in_the_child():
    spec = load_spec(EXAMPLES / "regblock_float4.toml")
    result, _launch = check_spec(spec, read_source(spec), None, 1024, 1024, 1024)
    assert result.ok and any(f.what == "registers" for f in result.findings)
    assert "not known" not in " ".join(f.text for f in result.findings)


def command_line(process) -> str:
    """A process's command line, or "" once it has ended: a descendant may exit (and be
    a zombie until reaped) between listing it and reading its command line."""
    try:
        return " ".join(process.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):  # ZombieProcess is a NoSuchProcess
        return ""


def compile_children(parent: int) -> list:
    try:
        kids = psutil.Process(parent).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [k for k in kids if compile_child.MODULE in command_line(k)]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_ends_the_compile_at_once(tmp_path, sig):
    command = subprocess.Popen([sys.executable, "-m", "gemmscope.kernels", "check",
                                str(bomb_spec(tmp_path))], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               # as a terminal starts it: a test run started in the
                               # background (nohup, `cmd &` in a script) ignores SIGINT,
                               # its children inherit that, and Python then never raises
                               # KeyboardInterrupt
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        kids: list = []
        while not kids and time.monotonic() < deadline:
            time.sleep(0.2)
            kids = compile_children(command.pid)
        assert kids, "the compile child never started"
        time.sleep(1.0)  # NVRTC is at work now
        os.kill(command.pid, sig)
        # "at once": long before the compile's own wall limit (60 s) would have ended it
        bound = compile_child.USER.wall_s / 2
        command.wait(timeout=bound)
        _gone, alive = psutil.wait_procs(kids, timeout=bound)
        assert not alive, "the compile ran on after its command ended"
        err = command.stderr.read()
        assert "Traceback" not in err
        if sig == signal.SIGINT:
            assert command.returncode == 130 and "interrupted" in err
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
        command.stdout.close()
        command.stderr.close()


def test_the_runner_screens_a_user_source_before_cupy_compiles_it(tmp_path, monkeypatch):
    """On the GPU the runner compiles a user's kernel with CuPy in its own process; the
    limited child compiles it first, so a bomb is a compile error there too."""
    from gemmscope.kernels.toolchain import nvrtc
    from gemmscope.kernels.toolchain.user_sources import folder_for

    monkeypatch.setattr(build_event, "USER", compile_child.Limits(5.0, 5, 2 << 30))
    spec = load_spec(bomb_spec(tmp_path))
    launch = spec.launch(read_source(spec), 1024, 1024, 1024, spec.defaults)
    level = launch.level(folder_for(launch))
    # the wall clock or RLIMIT_CPU may stop it first: both name the limits
    with pytest.raises(nvrtc.CompileError, match=r"stopped .*a compile takes at most 5 s"):
        build_event.screen_user_source(level, None, "sm_90")
    build_event.forget(level.id)
