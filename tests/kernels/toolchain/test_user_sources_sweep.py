"""kernels/toolchain/user_sources.py: a user's kernel folder outlives no process. A process
killed runs no exit handler (a compile child past its limits, a runner stopped with
SIGKILL: a day of test runs left 13 folders in /tmp), so the next process to make its
folder removes those of processes that are gone, and only those."""

from __future__ import annotations

import os
import subprocess
import sys

from gemmscope.kernels.toolchain import user_sources
from gemmscope.kernels.toolchain.user_sources import PREFIX, sweep_orphans


def gone_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_folders_of_processes_gone_are_removed_and_the_others_left(tmp_path):
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        dead, living = gone_pid(), alive.pid
        orphan = tmp_path / f"{PREFIX}{dead}-abc123"
        (orphan / "5ceb884fde764170").mkdir(parents=True)
        (orphan / "5ceb884fde764170" / "k.cu").write_text("// a user's kernel\\n")
        kept = [tmp_path / f"{PREFIX}{living}-def456",  # its process runs
                tmp_path / f"{PREFIX}{os.getpid()}-ghi789",  # this process's own
                tmp_path / f"{PREFIX}t9gx6oke",  # the old name, without a pid
                tmp_path / f"{PREFIX}99999999999999999999-x",  # no such pid number
                tmp_path / f"other-{dead}-abc"]  # not ours
        for folder in kept:
            folder.mkdir()
        assert sweep_orphans(tmp_path) == [orphan]
        assert not orphan.exists() and all(folder.is_dir() for folder in kept)
    finally:
        alive.kill()
        alive.wait()


def test_a_link_named_like_an_orphan_is_not_followed(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep.txt").write_text("not ours")
    (tmp_path / f"{PREFIX}{gone_pid()}-lnk").symlink_to(target)
    assert sweep_orphans(tmp_path) == []
    assert (target / "keep.txt").is_file()


def test_a_new_folder_is_named_with_the_pid_and_sweeps_first(tmp_path, monkeypatch):
    monkeypatch.setattr(user_sources.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(user_sources, "_root", None)
    orphan = tmp_path / f"{PREFIX}{gone_pid()}-old"
    orphan.mkdir()
    root = user_sources._base()
    assert root.parent == tmp_path and root.name.startswith(f"{PREFIX}{os.getpid()}-")
    assert not orphan.exists()
