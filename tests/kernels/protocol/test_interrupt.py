"""Ctrl-C as the commands see it (kernels/protocol/interrupt.py): a KeyboardInterrupt, or an
error raised because of one, which both command lines answer with one line and exit 130."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from gemmscope.app import main as app_main
from gemmscope.kernels.cli import main as cli_main
from gemmscope.kernels.protocol.interrupt import MAX_LINKS, by_ctrl_c


def _wrapped() -> RuntimeError:
    """What Python 3.11 raises when a Ctrl-C lands in a class body's __set_name__ (Pillow's
    GIF plugin, imported by the first GIF save): the interrupt as the error's cause."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as ki:
            raise RuntimeError("Error calling __set_name__ on 'cached_property' instance "
                               "'is_animated' in 'GifImageFile'") from ki
    except RuntimeError as exc:
        return exc


def _in_handling() -> ValueError:
    """An error raised while a Ctrl-C was being handled: the interrupt as its context."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ValueError("cleanup failed")  # noqa: B904 (the context is the point)
    except ValueError as exc:
        return exc


def test_an_interrupt_itself_its_cause_or_its_context_is_ctrl_c():
    assert by_ctrl_c(KeyboardInterrupt())
    assert by_ctrl_c(_wrapped())
    assert by_ctrl_c(_in_handling())
    assert not by_ctrl_c(RuntimeError("no interrupt in sight"))
    assert not by_ctrl_c(None)


def test_a_chain_that_loops_is_followed_no_further_than_its_bound():
    a, b = ValueError("a"), ValueError("b")
    a.__cause__, b.__cause__ = b, a
    assert not by_ctrl_c(a)
    deep = KeyboardInterrupt()
    for i in range(MAX_LINKS + 5):
        outer = ValueError(str(i))
        outer.__cause__ = deep
        deep = outer
    assert not by_ctrl_c(deep)  # past the bound: not followed (and not mistaken)


def test_the_app_answers_a_wrapped_ctrl_c_in_one_line_with_130(monkeypatch, capsys):
    def interrupted(_argv):
        raise _wrapped()

    monkeypatch.setattr(app_main, "_main", interrupted)
    assert app_main.main([]) == 130
    err = capsys.readouterr().err
    assert err == app_main.INTERRUPTED + "\n"


def test_the_app_still_raises_what_is_not_an_interrupt(monkeypatch):
    def broken(_argv):
        raise RuntimeError("a real fault")

    monkeypatch.setattr(app_main, "_main", broken)
    with pytest.raises(RuntimeError, match="a real fault"):
        app_main.main([])


def test_the_gpu_side_commands_answer_a_wrapped_ctrl_c_in_one_line_with_130(monkeypatch):
    def interrupted(_args, _out, _err):
        raise _wrapped()

    monkeypatch.setitem(cli_main.COMMANDS, "levels", interrupted)
    out, err = io.StringIO(), io.StringIO()
    assert cli_main.main(["levels"], out, err) == 130
    assert err.getvalue() == "interrupted\n"


DROPPED = """
import os, signal, sys
from gemmscope.kernels.protocol.atomic_file import NewFile
from gemmscope.kernels.protocol.interrupt import ctrl_c_seen, watch_ctrl_c

watch_ctrl_c()


class Finalized:
    def __del__(self):  # a Ctrl-C that lands here is dropped by Python
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass


Finalized()
print("went on", ctrl_c_seen())
out = NewFile(sys.argv[1])
out.temp.write_bytes(b"half")
try:
    out.commit()
except KeyboardInterrupt:
    out.discard()
    print("not committed")
"""


def test_a_ctrl_c_python_drops_in_a_finalizer_still_stops_the_commit_and_is_not_printed(
        tmp_path):
    target = tmp_path / "out.gif"
    done = subprocess.run([sys.executable, "-c", DROPPED, str(target)], capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.split("\n")[:2] == ["went on True", "not committed"], done
    assert "KeyboardInterrupt" not in done.stderr and "Exception ignored" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary
