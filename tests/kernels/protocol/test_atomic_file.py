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


def test_a_symlink_is_followed_to_its_target_and_stays_a_link(tmp_path):
    real = tmp_path / "data" / "real.csv"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    write_text(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"
    assert names(tmp_path) == ["data", "link.csv"] and names(real.parent) == ["real.csv"]


def test_a_dangling_symlink_or_a_non_regular_target_is_refused_before_any_work(tmp_path):
    from gemmscope.kernels.protocol.atomic_file import NotRegularFile

    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "nowhere" / "x.csv")
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    for path in (dangling, fifo, "/dev/null", tmp_path):
        with pytest.raises(NotRegularFile):
            NewFile(path, replace=True)
    assert names(tmp_path) == ["dangling.csv", "fifo.csv"]  # no temporary file left


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "private.ini"
    path.write_text("old\n")
    path.chmod(0o600)
    write_text(path, "new\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text() == "new\n"
