"""``report`` and ``compare`` say why a name is not a recording as the one bounded reader
does (issue 45, held out: a FIFO, a folder and a symlink loop were all "no such file",
checked before the reader, and report wrote a missing name's control characters raw)."""

from __future__ import annotations

import io
import os

import pytest

from gemmscope.kernels.cli.quick import quick


def _fifo(tmp_path):
    os.mkfifo(tmp_path / "f")
    return tmp_path / "f", "not a regular file"


def _folder(tmp_path):
    (tmp_path / "d").mkdir()
    return tmp_path / "d", "not a regular file"


def _loop(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    return tmp_path / "a", "symbolic links"


def _escape(tmp_path):
    return tmp_path / "x\x1b]0;title\x07", "No such file"


@pytest.mark.parametrize("make", [_fifo, _folder, _loop, _escape])
@pytest.mark.parametrize("how", ["report", "report --baseline", "compare"])
def test_a_name_that_is_no_recording_is_said_as_the_reader_says_it(make, how, tmp_path,
                                                                     synthetic_file):
    path, why = make(tmp_path)
    name = how.split()[0]
    argv = {"report": [str(path)], "report --baseline": [str(synthetic_file), "--baseline",
                                                         str(path)],
            "compare": [str(path), str(synthetic_file)]}[how]
    out, err = io.StringIO(), io.StringIO()
    assert quick(name)(argv, out, err) == 2
    said = err.getvalue()
    assert said.count("\n") == 1 and why in said, said
    assert "\x1b" not in said and "\x07" not in said
