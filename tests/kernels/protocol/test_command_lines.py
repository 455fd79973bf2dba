"""A command line a user gives (``--runner`` of every parser, a preferences file's runner
command, File ▸ Live runner…) is split by one reader (option_bounds.split_command): a
quote left open, a NUL or a line too long is a refusal in one line, never shlex's
ValueError reaching the user as a traceback (issue 45, held-out: ``--runner "python '"``
was a traceback in bench, record, the app and the doctor)."""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gemmscope.app.core.runner_command import RunnerSource, choose, plan_live
from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol.option_bounds import (
    MAX_COMMAND_CHARS,
    CommandRefused,
    split_command,
)

UNSPLITTABLE = ["python '", 'python "x', "python x\\", "a 'b\"c", "x" * (MAX_COMMAND_CHARS + 1),
                "python\0-m"]


@given(st.text(alphabet=st.sampled_from(list("ab '\"\\\t\n$;")), max_size=40))
def test_a_command_line_is_split_as_a_shell_would_or_refused_in_one_line(text):
    try:
        words = split_command(text)
    except CommandRefused as exc:
        assert "\n" not in str(exc) and str(exc)
        with pytest.raises(ValueError):  # refused only where shlex cannot split it
            shlex.split(text)
    else:
        assert words == shlex.split(text)


@pytest.mark.parametrize("text", UNSPLITTABLE)
def test_what_no_shell_can_split_is_refused(text):
    with pytest.raises(CommandRefused):
        split_command(text)


@pytest.mark.parametrize("sub", ["bench", "record"])
def test_the_cli_refuses_an_unsplittable_runner_where_it_is_parsed(sub):
    out, err = io.StringIO(), io.StringIO()
    assert cli.main([sub, "--runner", "python '", "-o", "never.jsonl"], out, err) == 2
    said = err.getvalue()
    assert said.count("\n") == 1 and "--runner" in said and "quotation" in said


@pytest.mark.parametrize("argv", [
    ["-m", "gemmscope.app.main", "--runner", "python '", "--screenshot", "x.png"],
    ["-m", "gemmscope.app.main", "doctor", "--runner", "python '"],
    ["-m", "gemmscope.kernels", "bench", "--runner", "python '"],
])
def test_an_unsplittable_runner_is_one_line_in_a_process(argv, tmp_path):
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize("text", UNSPLITTABLE[:3])
def test_a_preference_no_shell_can_split_starts_nothing_and_says_why(text):
    choice = choose(None, text, frozen=False)
    assert choice.command is None and choice.source is RunnerSource.PREFERENCE
    assert "cannot be read" in choice.refused
    plan = plan_live(None, text, frozen=False)
    assert plan.command is None and "cannot be read" in plan.reason


def test_the_doctor_says_an_unsplittable_preference_in_a_finding(tmp_path, monkeypatch,
                                                                   capsys):
    from gemmscope.app import main as entry
    from gemmscope.app.core import doctor

    ini = tmp_path / "handed.ini"
    ini.write_text("[runner]\ncommand=\"python '\"\n", encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    code = doctor.run(entry.doctor_options(["--settings", str(ini), "--no-try-runner"]))
    said = capsys.readouterr().out
    assert code in (1, 2)
    assert "cannot be" in said and "quotation" in said


def test_the_runner_dialog_keeps_no_unsplittable_line(make_window):
    window = make_window()
    window.set_runner_command("")
    said = window.set_runner_command("python '")
    assert said.startswith("runner command not kept") and window.prefs.runner_command == ""
    assert window.live is None
