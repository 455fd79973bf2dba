"""benchmarks/paired_machines.py: issue 41 item 8's table across machines, from the rows
`paired_ratio.py --json` prints (no GPU), checked on runs whose figures are known."""

from __future__ import annotations

import json

import benchmark_script
import pytest


@pytest.fixture(scope="module")
def pm():
    return benchmark_script.load("paired_machines")


def _output(rows: list[tuple[str, str, list[float | None]]]) -> str:
    """What paired_ratio.py --json prints: its tables, then the rows as one JSON line."""
    js = [{"level": lv, "shape": sh,
           "runs": [[p, None, None, "precision" if p else "error", 50, 0] for p in pcts]}
          for lv, sh, pcts in rows]
    return "level  shape  run1 ...\n[not json\n" + json.dumps(js) + "\n"


def _runs(pm, **machines):
    return {label: pm.rows_of(_output(rows), label) for label, rows in machines.items()}


def test_rows_and_machines_within_their_bounds_hold_and_the_others_do_not(pm):
    def rows(wmma, fp8):
        return [("wmma", "4096", wmma), ("fp8_deep", "4096", fp8)]

    runs = _runs(pm, A=rows([48.0, 48.2, 48.4], [99.0, 101.0, 100.0]),
                 B=rows([48.5, 48.5, 48.6], [100.0, 100.2, 100.1]),
                 C=rows([49.5, 49.6, 49.4], [100.5, 100.4, 100.6]))
    by = {r["level"]: r for r in pm.compare(runs)}
    wmma, fp8 = by["wmma"], by["fp8_deep"]
    assert wmma["cells"]["A"] == (48.2, pytest.approx(100 * (48.4 / 48.0 - 1)))
    assert wmma["across"] == pytest.approx(100 * (49.5 / 48.2 - 1))  # 2.70%: too far apart
    assert not wmma["holds"]
    assert fp8["cells"]["A"][1] == pytest.approx(100 * (101.0 / 99.0 - 1))  # 2.02% within A
    assert not fp8["holds"]
    loose = {r["level"]: r["holds"] for r in pm.compare(runs, within=2.5, across=3.0)}
    assert loose == {"wmma": True, "fp8_deep": True}


def test_a_row_a_machine_lacks_or_with_a_failed_repetition_does_not_hold(pm):
    runs = _runs(pm, A=[("naive", "4096", [1.0, 1.0, 1.0]), ("tf32", "4096", [97.0, None, 97.1])],
                 B=[("tf32", "4096", [97.0, 97.0, 97.0])])
    rows = {r["level"]: r for r in pm.compare(runs)}
    assert rows["naive"]["cells"]["B"] is None and not rows["naive"]["holds"]
    assert rows["tf32"]["cells"]["A"][0] == pytest.approx(97.05)
    assert not rows["tf32"]["holds"]
    text = pm.table(list(runs), list(rows.values()), 1.0, 2.0)
    assert "| naive | 4096 | 1.00 (0.00) | - | - | **no** |" in text
    assert text.endswith("0 of 2 rows hold both bounds")


def test_one_run_is_judged_within_itself_only(pm):
    runs = _runs(pm, A=[("naive", "4096", [1.0, 1.001, 1.0])])
    (row,) = pm.compare(runs)
    assert row["across"] is None and row["holds"]
    assert "nothing to compare across" in pm.table(["A"], [row], 1.0, 2.0)


@pytest.mark.parametrize("text", ["", "no json here\n", '[{"level": 3}]\n',
                                  '[{"level": "a", "shape": "b"}]\n'])
def test_output_that_is_not_a_paired_run_is_refused_in_one_line(pm, text):
    with pytest.raises(pm.RunFileError, match=r"^x: "):
        pm.rows_of(text, "x")


def test_a_file_too_large_missing_or_not_a_file_is_refused_and_exits_2(pm, tmp_path, capsys):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (pm.MAX_BYTES + 1))
    assert pm.main([f"A={big}"]) == 2
    assert pm.main([f"A={tmp_path / 'none.json'}"]) == 2
    assert pm.main(["A=/dev/zero"]) == 2  # a device: refused at once, nothing read
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and f"over {pm.MAX_BYTES:,} bytes" in err[0]
    assert "none.json" in err[1] and "not a regular file" in err[2]


def test_labels_must_be_given_and_distinct(pm, tmp_path):
    f = tmp_path / "r.json"
    f.write_text(_output([("naive", "4096", [1.0])]))
    with pytest.raises(SystemExit):
        pm.main([str(f)])
    with pytest.raises(SystemExit):
        pm.main([f"A={f}", f"A={f}"])


def test_names_from_a_file_stay_one_plain_cell(pm):
    text = json.dumps([{"level": "a|b\nc\u202e*d*", "shape": "x" * 200, "runs": [[50.0]]}])
    (row,) = pm.rows_of(text, "f")
    assert row["level"] == "a\\|b c*d*" and row["shape"] == "x" * 64
    line = pm.table(["A"], pm.compare({"A": [row]}), 1.0, 2.0).splitlines()[2]
    assert line.count("|") - line.count("\\|") == 6


def test_a_label_from_the_command_line_stays_one_plain_cell(pm, tmp_path, capsys):
    f = tmp_path / "r.json"
    f.write_text(_output([("naive", "4096", [1.0])]))
    assert pm.main([f"a|\x1b[2Jb={f}"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "\x1b" not in head and head.count("|") - head.count("\\|") == 6


def test_a_folder_gives_a_machine_a_file_labelled_by_its_name(pm, tmp_path, capsys):
    for name, pcts in (("gpu-b", [50.0, 50.1, 50.2]), ("gpu-a", [50.0, 50.0, 50.0])):
        (tmp_path / f"{name}.json").write_text(_output([("wmma", "4096", pcts)]))
    (tmp_path / "notes.md").write_text("not a run")
    assert pm.main(["--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| level | shape | gpu-a: median (within %) | gpu-b: median")
    assert out[2].startswith("| wmma | 4096 | 50.00 (0.00) | 50.10 (0.40) |")


def test_a_folder_that_is_missing_or_holds_no_run_is_refused(pm, tmp_path, capsys):
    for argv in (["--dir", str(tmp_path / "none")], ["--dir", str(tmp_path)]):
        with pytest.raises(SystemExit) as exc:
            pm.main(argv)
        assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "is not a folder" in err and "holds .json files" in err
