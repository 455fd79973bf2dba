"""On a GPU: the code key the runner gives a result is the one record --update computes
offline (wmma included, whose <mma.h> needs an include folder the key no longer hashes), so
an update right after a recording runs nothing; a change of what is compiled (here an NVRTC
option, which every level's key hashes, for this process and its runner) re-measures the
levels in the file's shapes and modes, appended, and the readers show the new results."""

from __future__ import annotations

import io

import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.results.rows import newest

pytestmark = pytest.mark.gpu

LEVELS = ["naive", "wmma"]


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return cli.main(list(argv), stdout=out, stderr=err), out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", ["rec.jsonl", "rec.jsonl.gz"])
def test_update_runs_nothing_after_a_recording_and_the_changed_levels_after_a_change(
        tmp_path, monkeypatch, name):
    plain = tmp_path / "rec.jsonl"
    code, _, err = _cli("record", "-o", str(plain), "-l", ",".join(LEVELS), "-s", "256",
                        "-r", "3", "--telemetry-hz", "0")
    assert code == 0, err
    path = tmp_path / name
    if name.endswith(".gz"):
        import gzip

        path.write_bytes(gzip.compress(plain.read_bytes()))
    code, out, err = _cli("record", "--update", str(path))
    assert code == 0 and "nothing changed" in out, out + err

    monkeypatch.setenv("GEMMSCOPE_NVRTC_OPTIONS", "-DGEMMSCOPE_UPDATE_TEST=1")
    code, out, err = _cli("record", "--update", str(path), "--dry-run")
    assert code == 0, err
    assert [line.split(":")[0] for line in out.splitlines() if not line.startswith(" ")
            and not line.startswith("estimated")] == LEVELS
    code, out, err = _cli("record", "--update", str(path), "--telemetry-hz", "0")
    assert code == 0, out + err
    session = recording.read_session(path)
    assert session.problem is None
    levels = [r.level for r in session.results if r.level in LEVELS]
    assert sorted(levels) == sorted(LEVELS * 2)
    shown = {r.level: r for r in newest(session.results)}
    assert all(shown[lv] is [r for r in session.results if r.level == lv][-1] for lv in LEVELS)
    code, out, err = _cli("record", "--update", str(path), "--dry-run")
    assert code == 0 and "nothing changed" in out, out + err
