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


def _planted(folder, target, name="export.csv"):
    """A link named ``name`` in ``folder`` to ``target`` (what another user plants in a
    shared folder, /tmp, to redirect a write)."""
    link = folder / name
    link.symlink_to(target)
    return link


def test_the_users_own_symlink_is_followed_to_its_target_and_stays_a_link(tmp_path):
    real = tmp_path / "data" / "real.csv"
    real.parent.mkdir()
    real.write_text("old\n")
    tmp_path.chmod(0o700)  # a folder of the user's, no one else writes it
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    write_text(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"
    assert names(tmp_path) == ["data", "link.csv"] and names(real.parent) == ["real.csv"]


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o775, 0o3770])  # /tmp, shared, a group's
@pytest.mark.parametrize("target_exists", [True, False])
@pytest.mark.parametrize("write", ["text", "replacing", "new_file"])
def test_a_planted_symlink_is_replaced_never_written_through(tmp_path, mode,
                                                            target_exists, write):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    victim = tmp_path / "home" / ".bashrc"
    victim.parent.mkdir()
    if target_exists:
        victim.write_text("mine\n")
        victim.chmod(0o644)
    link = _planted(shared, victim)
    if write == "text":
        write_text(link, "export\n")
    elif write == "replacing":
        with replacing(link) as temp:
            temp.write_text("export\n")
    else:
        out = NewFile(link, replace=True)
        out.temp.write_text("export\n")
        out.commit()
    assert not link.is_symlink() and link.read_text() == "export\n"
    if target_exists:
        assert victim.read_text() == "mine\n"  # the target untouched
    else:
        assert not victim.exists()  # nothing made where a dangling link pointed
    assert names(shared) == ["export.csv"]  # no temporary file left


def test_an_own_link_to_a_planted_one_stops_at_the_planted_one(tmp_path):
    tmp_path.chmod(0o700)
    victim = tmp_path / "victim.csv"
    victim.write_text("mine\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    planted = _planted(shared, victim, "x.csv")
    mine = tmp_path / "out.csv"
    mine.symlink_to(planted)  # the user's own link, into a shared folder
    write_text(mine, "new\n")
    assert victim.read_text() == "mine\n" and mine.is_symlink()
    assert not planted.is_symlink() and planted.read_text() == "new\n"


def test_a_symlink_is_not_replaced_without_replace(tmp_path):
    victim = tmp_path / "victim.csv"
    victim.write_text("mine\n")
    for target in (victim, tmp_path / "nowhere.csv"):
        link = tmp_path / f"link-{target.name}"
        link.symlink_to(target)
        with pytest.raises(OSError):  # exists (or an own link that leads nowhere)
            NewFile(link)
        with pytest.raises(OSError):
            write_text(link, "x", replace=False)
    assert victim.read_text() == "mine\n" and not (tmp_path / "nowhere.csv").exists()


def test_a_link_planted_under_the_temporary_name_is_not_followed(tmp_path, monkeypatch):
    """The temporary file is made exclusively, never through a link already there."""
    import secrets

    victim = tmp_path / "victim.csv"
    victim.write_text("mine\n")
    tokens = iter(["aaaaaaaa", "bbbbbbbb"])
    monkeypatch.setattr(secrets, "token_hex", lambda _n: next(tokens))
    (tmp_path / ".out.aaaaaaaa.tmp.csv").symlink_to(victim)  # guessed and planted
    write_text(tmp_path / "out.csv", "new\n")
    assert victim.read_text() == "mine\n" and (tmp_path / "out.csv").read_text() == "new\n"


def test_links_in_the_folders_above_are_followed(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "via").symlink_to(real, target_is_directory=True)
    write_text(tmp_path / "via" / "out.csv", "new\n")
    assert (real / "out.csv").read_text() == "new\n"


def test_a_dangling_own_symlink_or_a_non_regular_target_is_refused_before_any_work(tmp_path):
    from gemmscope.kernels.protocol.atomic_file import NotRegularFile

    tmp_path.chmod(0o700)
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "nowhere" / "x.csv")
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    for path in (dangling, fifo, "/dev/null", tmp_path):
        with pytest.raises(NotRegularFile):
            NewFile(path, replace=True)
    assert names(tmp_path) == ["dangling.csv", "fifo.csv"]  # no temporary file left


def test_an_own_link_is_followed_a_planted_one_is_not(tmp_path):
    from gemmscope.kernels.protocol.atomic_file import NotRegularFile, target_of

    dotfiles = tmp_path / "dotfiles" / "gemmscope.conf"
    dotfiles.parent.mkdir()
    dotfiles.write_text("[General]\n")
    config = tmp_path / "config"
    config.mkdir(mode=0o700)
    mine = config / "gemmscope.conf"
    mine.symlink_to(dotfiles)
    assert target_of(mine) == dotfiles.resolve()  # the user's own link, kept
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    planted = shared / "handed.ini"
    planted.symlink_to(dotfiles)
    assert target_of(planted) == planted  # in a folder others write: not followed
    assert target_of(config / "new.conf") == config / "new.conf"
    dangling = config / "dangling.conf"
    dangling.symlink_to(config / "nowhere")
    with pytest.raises(NotRegularFile):  # an own link that leads nowhere: refused
        target_of(dangling)
    planted_dangling = shared / "dangling.ini"
    planted_dangling.symlink_to(config / "nowhere")
    assert target_of(planted_dangling) == planted_dangling  # replaced, nothing made there


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "private.ini"
    path.write_text("old\n")
    path.chmod(0o600)
    write_text(path, "new\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text() == "new\n"


@pytest.mark.parametrize("mode", [0o1777, 0o777])
def test_a_session_is_never_appended_through_a_planted_link(tmp_path, mode):
    from gemmscope.kernels.protocol.session_file import SessionWriter

    victim = tmp_path / "victim.jsonl"
    victim.write_text("mine\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    with pytest.raises(OSError, match="symlink"):
        SessionWriter(_planted(shared, victim, "live.jsonl"))
    fifo = shared / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(OSError):  # at once: no reader is waited for
        SessionWriter(fifo)
    assert victim.read_text() == "mine\n"


def test_a_session_is_appended_through_the_users_own_link(tmp_path):
    from gemmscope.kernels.protocol.session_file import SessionWriter

    tmp_path.chmod(0o700)
    real = tmp_path / "real.jsonl"
    real.write_text('{"type":"session"}\n')
    link = tmp_path / "live.jsonl"
    link.symlink_to(real)
    writer = SessionWriter(link)
    writer.write_line('{"type":"info"}\n')
    writer.close()
    assert link.is_symlink() and real.read_text().count("\n") == 2
