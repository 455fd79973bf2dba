"""Files written whole or not at all: a temporary name beside the destination, renamed."""

from __future__ import annotations

import os
import stat

import pytest

from gemmscope.kernels.protocol.atomic_file import NewFile, replacing, write_text


def names(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_new_file_appears_only_when_committed(tmp_path):
    out = NewFile(tmp_path / "run.jsonl")
    assert out.temp.parent == tmp_path and out.temp.name.startswith(".run.")
    assert out.temp.suffix == ".jsonl"  # exporters pick the format by the suffix
    out.temp.write_text("data\n")
    assert not (tmp_path / "run.jsonl").exists()
    assert out.commit() == tmp_path / "run.jsonl"
    assert names(tmp_path) == ["run.jsonl"] and (tmp_path / "run.jsonl").read_text() == "data\n"
    mode = stat.S_IMODE((tmp_path / "run.jsonl").stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # as if opened by name, not a private temp file


def test_an_existing_file_is_replaced_only_when_asked(tmp_path):
    old = tmp_path / "run.jsonl"
    old.write_text("precious\n")
    with pytest.raises(FileExistsError):
        NewFile(old)
    assert names(tmp_path) == ["run.jsonl"]  # nothing created
    out = NewFile(old, replace=True)
    out.temp.write_text("new\n")
    assert old.read_text() == "precious\n"  # until the end
    out.commit()
    assert old.read_text() == "new\n" and names(tmp_path) == ["run.jsonl"]


def test_a_file_that_appears_meanwhile_is_not_replaced(tmp_path):
    out = NewFile(tmp_path / "run.jsonl")
    out.temp.write_text("mine\n")
    (tmp_path / "run.jsonl").write_text("theirs\n")
    with pytest.raises(FileExistsError):
        out.commit()
    assert (tmp_path / "run.jsonl").read_text() == "theirs\n"
    assert out.temp.read_text() == "mine\n"  # the caller decides what to do with it
    out.discard()
    assert names(tmp_path) == ["run.jsonl"]


def test_replacing_keeps_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), replacing(path) as temp:
        temp.write_text("half")
        raise RuntimeError("disk full")
    assert path.read_text() == "old\n" and names(tmp_path) == ["results.csv"]
    assert write_text(path, "new\n") == path and path.read_text() == "new\n"
    assert names(tmp_path) == ["results.csv"]
