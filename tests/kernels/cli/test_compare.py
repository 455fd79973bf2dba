"""``gemmscope compare OLD NEW``: the regression gate (issue 41 item 7), on synthetic
recordings whose ratios and intervals the tests set."""

from __future__ import annotations

import io
import json

import pytest
import synthetic_session as synth

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.cli.quick import quick

LEVEL = "wmma"


def recording(tmp_path, name: str,
              ratios: dict[str, tuple[float, float, float] | float] | None = None,
              gpu: str | None = None, unverified: tuple[str, ...] = ()):
    """The synthetic session with ``ratios``: level -> (pct, low, high) for a paired result,
    or a pct alone for an unpaired one."""
    ratios = ratios or {}
    evs = synth.events()
    for ev in evs:
        if ev["type"] == "session" and gpu is not None:
            ev["device"]["name"] = gpu
        if ev["type"] != "result":
            continue
        given = ratios.get(ev["level"])
        if isinstance(given, tuple):
            ev.update(pct_of_reference=given[0], pct_ci_low=given[1], pct_ci_high=given[2],
                      paired=True)
        elif given is not None:
            ev["pct_of_reference"] = given
        if ev["level"] in unverified:
            ev.update(verified=False, rel_err=0.5)
    return synth.write(tmp_path / name, evs)


def compare(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["compare", *map(str, argv)], out, err)
    return code, out.getvalue(), err.getvalue()


def line_of(out: str, level: str, shape: str = "4096×4096×4096") -> str:
    return next(x for x in out.splitlines() if x.startswith(level + " ") and shape in x)


def test_a_fall_beyond_both_intervals_exits_1(tmp_path):
    old = recording(tmp_path, "old.jsonl", {LEVEL: (90.0, 89.0, 91.0)})
    new = recording(tmp_path, "new.jsonl", {LEVEL: (80.0, 79.0, 81.0)})
    code, out, err = compare(old, new)
    assert code == 1, out + err
    row = line_of(out, LEVEL)
    assert "90.0% [89.0–91.0%]" in row and "80.0% [79.0–81.0%]" in row
    assert "-10.0 pp" in row and "FELL" in row
    assert "1 of" in out.splitlines()[-1]


def test_a_fall_within_the_intervals_and_the_margin_exits_0(tmp_path):
    old = recording(tmp_path, "old.jsonl", {LEVEL: (90.0, 88.0, 92.0)})
    new = recording(tmp_path, "new.jsonl", {LEVEL: (87.0, 85.0, 89.5)})
    code, out, err = compare(old, new)
    assert code == 0, out + err
    assert line_of(out, LEVEL).endswith("same")
    # the margin is the flag's: no margin, and 89.5 < 88 - 0 is still false
    assert compare(old, new, "--fail-over", "0")[0] == 0
    # a fall of 5 points beyond both intervals fails at a margin of 1
    worse = recording(tmp_path, "worse.jsonl", {LEVEL: (80.0, 79.0, 82.0)})
    assert compare(old, worse, "--fail-over", "1")[0] == 1
    assert compare(old, worse, "--fail-over", "10")[0] == 0


def test_unpaired_results_are_points_and_say_so(tmp_path):
    old = recording(tmp_path, "old.jsonl", {LEVEL: 90.0})
    new = recording(tmp_path, "new.jsonl", {LEVEL: 87.5})
    code, out, _ = compare(old, new)
    assert code == 1  # 87.5 < 90 - 2: a point has no interval to hide in
    assert "90.0% (unpaired)" in line_of(out, LEVEL) and "87.5% (unpaired)" in line_of(out, LEVEL)
    assert compare(old, recording(tmp_path, "near.jsonl", {LEVEL: 88.5}))[0] == 0


def test_a_wrong_answer_in_new_fails_whatever_its_speed(tmp_path):
    old = recording(tmp_path, "old.jsonl")
    new = recording(tmp_path, "new.jsonl", unverified=(LEVEL,))
    code, out, _ = compare(old, new)
    assert code == 1 and "WRONG" in line_of(out, LEVEL)


def test_the_output_lists_every_common_level(tmp_path):
    old = recording(tmp_path, "old.jsonl")
    code, out, _ = compare(old, old)
    assert code == 0
    for level in synth.LADDER_TFLOPS:
        assert line_of(out, level)
    for size in synth.SWEEP:  # the sweep's shapes too (no reference there: no ratio)
        assert line_of(out, synth.SWEEP_LEVEL, f"{size}×{size}×{size}")
    # the references are the denominators, not lines of their own
    assert not any(x.startswith("cublas_") for x in out.splitlines())


def test_mismatched_gpus_are_said_in_one_line_exit_2(tmp_path):
    old = recording(tmp_path, "old.jsonl")
    new = recording(tmp_path, "new.jsonl", gpu="NVIDIA H100 80GB HBM3")
    code, out, err = compare(old, new)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "NVIDIA H100 80GB HBM3" in err


@pytest.mark.parametrize("bad", ["garbage", "missing", "headerless", "folder"])
def test_bad_files_are_said_in_one_line_exit_2(tmp_path, bad):
    good = recording(tmp_path, "good.jsonl")
    path = tmp_path / "bad.jsonl"
    if bad == "garbage":
        path.write_bytes(b"\x00\xffnot a recording\n")
    elif bad == "headerless":
        path.write_text(json.dumps({"type": "result", "t": 1.0}) + "\n")
    elif bad == "folder":
        path.mkdir()
    for argv in ((good, path), (path, good)):
        code, out, err = compare(*argv)
        assert code == 2 and out == "", (bad, err)
        assert len(err.splitlines()) == 1 and err.startswith("gemmscope compare: "), err


def test_no_level_in_common_exits_2(tmp_path):
    old = recording(tmp_path, "old.jsonl")
    evs = [ev for ev in synth.events() if ev["type"] != "result"]
    empty = synth.write(tmp_path / "empty.jsonl", evs)
    code, _, err = compare(old, empty)
    assert code == 2 and "no level" in err


def test_compare_starts_without_the_rest_of_the_cli(tmp_path):
    old = recording(tmp_path, "old.jsonl")
    entry = quick("compare")
    assert entry is not None
    assert entry([str(old), str(old), "--fail-over", "1.5"], io.StringIO(), io.StringIO()) == 0
    with pytest.raises(SystemExit) as exc:  # argparse's usage error: exit 2
        entry([str(old), str(old), "--fail-over", "-1"], io.StringIO(), io.StringIO())
    assert exc.value.code == 2


def test_each_distribution_compares_with_its_own(tmp_path):
    evs = synth.events()
    result = next(ev for ev in evs if ev["type"] == "result" and ev["level"] == LEVEL)
    zeros = {**result, "t": evs[-1]["t"] + 1.0, "operands": "zeros", "pct_of_reference": 60.0}
    old = synth.write(tmp_path / "old.jsonl", [*evs, zeros])
    code, out, _ = compare(old, old)
    assert code == 0
    rows = [x for x in out.splitlines() if x.startswith(LEVEL + " ")]
    assert len(rows) == 2 and " uniform " in rows[0] and " zeros " in rows[1]
    # NEW measured zeros only, and lower: compared with OLD's zeros, not its uniform
    new = synth.write(tmp_path / "new.jsonl", [*evs[:1], {**zeros, "pct_of_reference": 50.0}])
    code, out, _ = compare(old, new)
    assert code == 1 and "FELL" in line_of(out, LEVEL) and " zeros " in line_of(out, LEVEL)
    assert "only in OLD" in out


def test_what_only_one_recording_measured_is_said_a_line_a_level_smallest_shape_first(
        tmp_path):
    evs = synth.events()
    result = next(ev for ev in evs if ev["type"] == "result" and ev["level"] == LEVEL)
    t = evs[-1]["t"]
    extra = [{**result, "t": t + i + 1, "M": m, "N": n, "K": k, "mode": mode}
             for i, (m, n, k, mode) in enumerate([(8192, 8192, 8192, "burst"),
                                                  (256, 256, 256, "burst"),
                                                  (4096, 2112, 7168, "burst"),
                                                  (4096, 4096, 4096, "sustained")])]
    old = synth.write(tmp_path / "old.jsonl", [*evs, *extra])
    code, out, _ = compare(str(old), str(synth.write(tmp_path / "new.jsonl", evs)))
    assert code == 0
    lines = out.splitlines()
    head = lines.index("only in OLD: 4 results of 1 level")
    assert lines[head + 1] == (f"  {LEVEL}: 256×256×256, 4096×2112×7168, 8192×8192×8192 "
                               "(burst, uniform); 4096×4096×4096 (sustained, uniform)")
    assert not any(x.startswith("only in NEW") for x in lines)
