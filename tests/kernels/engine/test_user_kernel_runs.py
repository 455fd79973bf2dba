"""A user's kernel through the plan and the runner, without a GPU: the runs the CLI plans
(variants, refusals, the command's size bound) and how the runner answers them."""

from __future__ import annotations

import io
import json

import places
import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.engine.runner import Runner
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.ladder.spec_file import load_spec, read_source
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.toolchain import nvrtc

EXAMPLES = places.REPO / "resources" / "kernels"
SPEC = str(EXAMPLES / "regblock_float4.toml")


def planned(*argv: str):
    return cli.plan(cli.build_parser().parse_args(["bench", *argv]))


def serve(commands: list[dict]) -> list[dict]:
    out = io.StringIO()
    runner = Runner(out, telemetry_hz=0)
    runner.start()
    try:
        runner.serve(iter(json.dumps(c) + "\n" for c in commands))
    finally:
        runner.stop()
    return [protocol.loads(x) for x in out.getvalue().splitlines()]


def test_kernel_alone_plans_only_the_users_variants_with_their_kernel_objects():
    runs = planned("--kernel", SPEC, "--vary", "BM=64,128", "--vary", "BN=32,64,128",
                   "-s", "4096", "-s", "1000x999x1001")
    assert len(runs) == 2 * 3 * 2 and {r.level for r in runs} == {"regblock_float4"}
    combos = {(r.kernel["params"]["BM"], r.kernel["params"]["BN"]) for r in runs}
    assert combos == {(m, n) for m in (64, 128) for n in (32, 64, 128)}
    odd = [r for r in runs if r.shape == Shape(1000, 999, 1001)]
    assert all(r.kernel["grid"][1] == -(-1000 // r.kernel["params"]["BM"]) for r in odd)
    cmd = runs[0].command("run-1")
    assert cmd["kernel"]["source"] == (EXAMPLES / "regblock_float4.cu").read_text()
    assert "params" not in cmd  # the kernel object carries them


def test_a_variant_the_check_refuses_is_sent_with_its_reason_in_words():
    (run,) = planned("--kernel", SPEC, "--param", "BM=256")
    assert "is not a multiple of" in run.kernel["refused"]
    events = serve([run.command("run-1"), {"cmd": "quit"}])
    kernel = next(e for e in events if e["type"] == "kernel")
    assert kernel["level"] == "regblock_float4" and kernel["file"] == "regblock_float4.cu"
    error = next(e for e in events if e["type"] == "error")
    assert error["kind"] == "refused" and error["level"] == "regblock_float4"
    assert error["message"].startswith("regblock_float4 (BM=256 BN=128 BK=8 TM=8 TN=8) was "
                                       "refused before launch: parameters: BK * BN // 4")
    assert error["params"]["BM"] == 256


def test_without_a_gpu_a_kernel_run_says_so_naming_the_kernel():
    (run,) = planned("--kernel", SPEC)
    events = serve([run.command("run-1"), {"cmd": "quit"}])
    error = next(e for e in events if e["type"] == "error")
    if error["kind"] == "no_gpu":
        assert error["message"].startswith("cannot run regblock_float4")


@pytest.mark.parametrize("change, says", [
    ({"source": '#include "secrets.h"\n'}, "kernel.source: line 1"),
    ({"id": "naive"}, "a level of the registry"),
    ({"file": "../../x.cu"}, "kernel.file"),
])
def test_the_runner_refuses_a_bad_kernel_object_and_keeps_serving(change, says):
    (run,) = planned("--kernel", SPEC)
    cmd = run.command("run-1")
    cmd["kernel"] = {**cmd["kernel"], **change}
    cmd["kernel"].pop("sha256")
    events = serve([cmd, {"cmd": "ping", "id": "p"}, {"cmd": "quit"}])
    error = next(e for e in events if e["type"] == "error")
    assert error["kind"] == "bad_input" and says in error["message"]
    assert any(e["type"] == "pong" for e in events)


def test_a_source_too_large_for_a_run_command_is_refused_before_anything_runs(tmp_path):
    spec = (EXAMPLES / "regblock_float4.toml").read_text()
    (tmp_path / "big.toml").write_text(spec.replace('source = "regblock_float4.cu"',
                                                    'source = "big.cu"'))
    body = (EXAMPLES / "regblock_float4.cu").read_text()
    (tmp_path / "big.cu").write_text(body + "// padding\n" * 4000)
    with pytest.raises(cli.CliError, match="at most"):
        planned("--kernel", str(tmp_path / "big.toml"))


def test_param_and_vary_are_checked_against_the_spec():
    with pytest.raises(cli.CliError, match="no such parameter"):
        planned("--kernel", SPEC, "--param", "XX=1")
    with pytest.raises(cli.CliError, match="at most 2"):
        planned("--kernel", SPEC, "--vary", "BM=64", "--vary", "BN=64", "--vary", "BK=8")
    with pytest.raises(cli.CliError, match="go with --kernel"):
        planned("--param", "BM=64")


def test_an_edited_source_under_the_same_id_forgets_the_old_compile(tmp_path):
    from gemmscope.kernels.engine.user_kernels import UserKernels

    spec = load_spec(SPEC)
    first = spec.launch(read_source(spec), 64, 64, 64, spec.defaults)
    users = UserKernels()
    level, _launch, event = users.level(first.as_wire())
    assert event is not None and users.level(first.as_wire())[2] is None
    nvrtc._cache[(level.id, "", tuple(level.params.items()), False)] = object()  # type: ignore[assignment]
    edited = spec.launch(read_source(spec) + "// edited\n", 64, 64, 64, spec.defaults)
    _level, _launch, event = users.level(edited.as_wire())
    assert event is not None and event["sha256"] != first.digest
    assert not any(key[0] == level.id for key in nvrtc._cache)


def test_check_command_prints_the_check_in_words():
    out = io.StringIO()
    code = cli.main(["check", SPEC, "--param", "BM=256", "--no-compile"], stdout=out,
                    stderr=io.StringIO())
    lines = out.getvalue().splitlines()
    assert code == 1 and lines[0].startswith("regblock_float4 (regblock_float4.cu) BM=256")
    assert any(line.startswith("FAIL parameters: BK * BN // 4") for line in lines)
    assert any(line.startswith("ok   threads: 512 per block") for line in lines)


@pytest.mark.parametrize("param", ["BM=0", "BN=0"])
def test_a_check_whose_launch_cannot_be_computed_claims_no_launch_finding(param):
    # a zero tile side divides by zero in the grid: no threads, grid, shared memory or
    # occupancy line may then say "ok" of the stand-in values
    out = io.StringIO()
    code = cli.main(["check", SPEC, "--param", param, "--no-compile"], stdout=out,
                    stderr=io.StringIO())
    lines = out.getvalue().splitlines()[1:]
    assert code == 1
    assert any(line.startswith("FAIL parameters: the launch: ") for line in lines)
    assert lines[-1].startswith("note launch: threads, grid, shared memory, registers and "
                                "occupancy not checked")
    assert not any(line.split(":")[0].split()[-1] in ("threads", "grid", "occupancy")
                   for line in lines)


def test_the_runner_side_of_user_kernels_needs_no_msgspec():
    import subprocess
    import sys

    code = ("import sys; import gemmscope.kernels.engine.runner, gemmscope.kernels.engine.launch;"
            " print('msgspec' in sys.modules, 'gemmscope.kernels.ladder.kernel_spec' in "
            "sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_a_triton_kernel_without_triton_is_refused_with_the_reason(monkeypatch):
    from gemmscope.kernels.engine import measure, triton_launch
    from gemmscope.kernels.toolchain.user_sources import folder_for

    spec = load_spec(EXAMPLES / "triton_matmul.toml")
    launch = spec.launch(read_source(spec), 256, 256, 256, spec.defaults)
    level = launch.level(folder_for(launch))
    assert level.toolchain == "triton" and level.threads == (256, 1)
    assert not measure.graphable(level)  # Triton's launcher runs plainly, not in a graph
    monkeypatch.setattr(triton_launch, "triton_missing", lambda: "triton is not installed")
    monkeypatch.setattr(measure, "triton_missing", lambda: "triton is not installed")
    why = measure.refusal(level, 256, 256, 256, None)
    assert why is not None and why.kind == "unsupported"
    assert str(why) == ("triton_matmul is a Triton kernel and triton is not installed; "
                        "skipped")


def test_the_run_command_of_a_kernel_is_one_the_runner_parses_within_its_bound():
    from gemmscope.kernels.protocol import commands

    for spec in ("regblock_float4.toml", "triton_matmul.toml"):
        (run,) = planned("--kernel", str(EXAMPLES / spec))
        line = json.dumps(run.command("run-1"))
        assert len(line.encode()) < protocol.MAX_COMMAND_BYTES
        parsed = commands.parse_command(line)
        assert parsed.kernel is not None and parsed.kernel["source"] == run.kernel["source"]
        assert run.where()["params"] == run.kernel["params"]  # errors name the variant


def test_diff_takes_a_kernel_spec_beside_a_level():
    from gemmscope.kernels.toolchain import build_event

    if build_event.nvrtc_missing() is not None:
        pytest.skip("NVRTC from PyPI is not installed")
    out = io.StringIO()
    code = cli.main(["diff", SPEC, "register_2d"], stdout=out, stderr=io.StringIO())
    text = out.getvalue()
    assert code == 0
    assert f"--- regblock_float4.cu ({SPEC})" in text  # the source diff names both
    assert "kernels/cuda/register_2d.cu (register_2d)" in text
    assert "registers per thread" in text and "LDS.128" in text
