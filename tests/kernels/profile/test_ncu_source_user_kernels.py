"""`gemmscope record --kernel SPEC --ncu-source` with a stand-in runner and a stand-in ncu
(tests/support/fake_ncu.py): each user kernel, CUDA and Triton (the examples of
resources/kernels/), gets a source_counters event as a level does, profiled through a
launch that reads its spec and builds the Level the runner builds from the run command
(kernels/cli/user_launch.py), under a -k of the kernel's own name."""

from __future__ import annotations

import hashlib
import io
import shutil
from pathlib import Path

import places
import pytest
from fake_ncu import logged_commands, write_fake_ncu
from test_ncu_record import STAND_IN_RUNNER

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.cli import user_launch
from gemmscope.kernels.engine.user_kernels import LaunchRefused, UserKernels
from gemmscope.kernels.ladder.spec_file import load_spec, read_source
from gemmscope.kernels.profile import ncu, ncu_targets
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.toolchain import nvrtc

EXAMPLES = places.REPO / "resources" / "kernels"
CUDA = EXAMPLES / "regblock_float4.toml"
TRITON = EXAMPLES / "triton_matmul.toml"
SIZE = (64, 32, 16)


def record(tmp_path: Path, *extra: str, levels: str = "naive") -> tuple[int, list, str]:
    out = tmp_path / "rec.jsonl"
    err = io.StringIO()
    code = cli.main(["record", "-o", str(out), "-l", levels, "-s", "16", "-r", "2",
                     "--no-compare", "--telemetry-hz", "0", "--runner", STAND_IN_RUNNER,
                     "--ncu-source-size", "x".join(map(str, SIZE)), *extra],
                    stdout=io.StringIO(), stderr=err)
    session = recording.read_session(out)
    assert session.problem is None
    return code, [e for e in session.events if e.type == "source_counters"], err.getvalue()


def profiles(log: Path) -> dict[str, list[str]]:
    """The profiling runs ncu was asked for, by the launched id."""
    out = {}
    for args in logged_commands(log):
        if "-o" in args:
            module = next(a for a in args if a.startswith("gemmscope.kernels."))
            out[args[args.index(module) + 1]] = args
    return out


def launch_args(cmd: list[str]) -> list[str]:
    return cmd[cmd.index(ncu.USER_LAUNCH_MODULE) + 1:]


def whole_name(regex: str, name: str) -> bool:
    import re

    assert regex.startswith("regex:")
    return re.search(regex.removeprefix("regex:"), name) is not None


def test_a_cuda_and_a_triton_kernel_get_events_beside_the_levels(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_RUNNER_TRITON_NAME", "matmul_fp16_sm90_compiled")
    log = tmp_path / "ncu.log"
    fake = write_fake_ncu(tmp_path / "ncu", log=log)
    code, events, err = record(tmp_path, "--kernel", str(CUDA), "--kernel", str(TRITON),
                               "--ncu-source", str(fake))
    assert code == 0, err
    assert [e.level for e in events] == ["naive", "regblock_float4", "triton_matmul"]
    assert all(e.status == "ok" and e.lines and (e.M, e.N, e.K) == SIZE for e in events)
    assert "source counters of 3 level(s) recorded" in err
    by_id = {e.level: e for e in events}
    for path in (CUDA, TRITON):
        spec = load_spec(path)
        ev = by_id[spec.id]
        assert ev.params == spec.defaults  # the variant of its planned run
        args = launch_args(ev.command)
        assert args[:4] == [spec.id, *map(str, SIZE)]
        assert args[args.index("--kernel") + 1] == str(path.resolve())
        digest = hashlib.sha256(read_source(spec).encode()).hexdigest()
        assert args[args.index("--sha256") + 1] == digest  # the source that ran
    assert by_id["naive"].params is None
    ran = profiles(log)
    assert ran["naive"][ran["naive"].index("-k") + 1] == "regex:sgemm_naive"  # as before
    assert ncu.LAUNCH_MODULE in ran["naive"]
    cuda_k = ran["regblock_float4"][ran["regblock_float4"].index("-k") + 1]
    triton_k = ran["triton_matmul"][ran["triton_matmul"].index("-k") + 1]
    # ncu's function names: the template's name, Triton's compiled entry
    assert whole_name(cuda_k, "regblock_float4")
    assert whole_name(cuda_k, "void regblock_float4<128, 128, 8, 8, 8, true>(int)")
    assert not whole_name(cuda_k, "regblock_float4_old")
    assert not whole_name(cuda_k, "my_regblock_float4")
    assert whole_name(triton_k, "matmul_fp16_sm90_compiled")
    assert not whole_name(triton_k, "matmul_fp16")  # the runs said what Triton compiled


def test_without_a_compiled_name_a_triton_kernel_is_matched_by_its_function(tmp_path):
    log = tmp_path / "ncu.log"
    fake = write_fake_ncu(tmp_path / "ncu", log=log)
    code, events, err = record(tmp_path, "--kernel", str(TRITON), "--ncu-source", str(fake))
    assert code == 0, err
    assert [e.status for e in events] == ["ok", "ok"]  # naive, triton_matmul
    cmd = profiles(log)["triton_matmul"]
    assert whole_name(cmd[cmd.index("-k") + 1], "matmul_fp16")


def test_the_launch_builds_the_level_the_runner_builds_from_the_run(tmp_path):
    """The profiled launch's arguments, parsed by the launch's own parser, give the Level
    the runner makes of the run command record plans for that variant and shape."""
    log = tmp_path / "ncu.log"
    fake = write_fake_ncu(tmp_path / "ncu", log=log)
    code, events, err = record(tmp_path, "--kernel", str(CUDA), "--param", "BK=16",
                               "--vary", "BM=64,128", "--ncu-source", str(fake), levels="")
    assert code == 0, err
    (ev,) = events  # the kernel once, in its first planned variant
    assert ev.params == {**load_spec(CUDA).defaults, "BK": 16, "BM": 64}
    args = user_launch.parser().parse_args(launch_args(profiles(log)["regblock_float4"]))
    built = user_launch.spec_level(args.kernel, args.level, dict(args.param), args.M,
                                   args.N, args.K, args.sha256)
    planned = cli.plan(cli.build_parser().parse_args(
        ["bench", "--kernel", str(CUDA), "--param", "BK=16", "--param", "BM=64", "-s",
         "x".join(map(str, SIZE))]))
    (run,) = [r for r in planned if r.kernel is not None]
    runner, _launch, _event = UserKernels().level(run.kernel)
    for attr in ("id", "kernel", "params", "precision", "toolchain", "b_layout",
                 "output_format", "vector", "fixed_grid", "source", "arch"):
        assert getattr(built, attr) == getattr(runner, attr), attr
    assert built.launch_geometry() == runner.launch_geometry()
    assert built.dyn_smem_bytes() == runner.dyn_smem_bytes()
    assert (Path(built.source_dir) / built.source).read_text() == run.kernel["source"]


def test_the_files_lines_are_named_by_are_the_kernels_own(tmp_path):
    for path in (CUDA, TRITON):
        spec = load_spec(path)
        planned = cli.plan(cli.build_parser().parse_args(
            ["bench", "--kernel", str(path), "-s", "16"]))
        (target,) = ncu_targets.user_targets([str(path)], planned, SIZE)
        assert target.files is not None and target.files[0] == spec.source
        run = next(r for r in planned if r.kernel is not None)
        level, _, _ = UserKernels().level(run.kernel)
        assert target.files == tuple(nvrtc.source_files(level))
        assert target.triton == (spec.language == "triton")


def test_a_variant_refused_at_the_step_shape_is_not_launched(tmp_path):
    log = tmp_path / "ncu.log"
    fake = write_fake_ncu(tmp_path / "ncu", log=log)
    # 64 x 64 threads per block: over 1024, refused by the constraint check
    code, events, err = record(tmp_path, "--kernel", str(CUDA), "--param", "BM=256",
                               "--param", "BN=256", "--param", "TM=4", "--param", "TN=4",
                               "--ncu-source", str(fake), levels="naive")
    assert code == 1
    by_id = {e.level: e for e in events}
    ev = by_id["regblock_float4"]
    assert ev.status == "failed" and ev.lines is None
    assert "refused before launch" in ev.reason and "1024" in ev.reason
    assert ev.params["BM"] == 256
    assert set(profiles(log)) == {"naive"}  # ncu never ran for it
    assert "none for regblock_float4" in err


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    for name in ("regblock_float4.toml", "regblock_float4.cu"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path / "regblock_float4.toml"


def test_the_launch_refuses_a_source_edited_since_it_ran(spec_copy):
    source = spec_copy.with_suffix(".cu")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    level = user_launch.spec_level(spec_copy, "regblock_float4", {}, 64, 64, 64, digest)
    assert level.kernel == "regblock_float4"
    source.write_text(source.read_text() + "\n// edited\n")
    with pytest.raises(LaunchRefused, match="changed since it ran"):
        user_launch.spec_level(spec_copy, "regblock_float4", {}, 64, 64, 64, digest)


@pytest.mark.parametrize("level_id, params, says", [
    ("naive", {}, "not of 'naive'"),
    ("regblock_float4", {"BX": 8}, "no parameter"),
    ("regblock_float4", {"BM": 48}, "refused before launch"),
    ("regblock_float4", {"BM": 256, "BN": 256, "TM": 4, "TN": 4}, "refused before launch"),
])
def test_the_launch_refuses_what_record_would_not_send(spec_copy, level_id, params, says):
    with pytest.raises(LaunchRefused, match=says):
        user_launch.spec_level(spec_copy, level_id, params, 64, 64, 64)


def test_the_launch_reads_a_spec_within_the_bounds_only(spec_copy):
    source = spec_copy.with_suffix(".cu")
    source.write_bytes(b"\xff\xfe not text")
    with pytest.raises(LaunchRefused, match="not UTF-8"):
        user_launch.spec_level(spec_copy, "regblock_float4", {}, 64, 64, 64)
    spec_copy.write_text(spec_copy.read_text() + "\n[extra]\nx = 1\n")
    with pytest.raises(LaunchRefused):
        user_launch.spec_level(spec_copy, "regblock_float4", {}, 64, 64, 64)


def test_the_launch_command_line_says_why_it_did_not_launch(spec_copy, capsys):
    code = user_launch.main(["regblock_float4", "64", "64", "64", "--kernel", str(spec_copy),
                             "--sha256", "0" * 64])
    assert code == 2
    assert "changed since it ran" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        user_launch.parser().parse_args(["x", "1", "1", "1", "--kernel", "k.toml",
                                         "--param", "BM=-1"])


def test_the_user_launch_module_is_the_one_the_step_names():
    assert user_launch.MODULE == ncu.USER_LAUNCH_MODULE
    assert user_launch.__name__ == ncu.USER_LAUNCH_MODULE
