"""Where each GPU test runs and how long it may take (docs/gpu-run-plan.md).

The GPU suite does not fit one 10-minute run on the H200, so it runs in SHARDS, each
meant to take at most 7 minutes: every test file is placed in one shard by the table
below (a new GPU file must be placed, or the CPU test tests/test_gpu_tiers.py fails), and
test_gpu.py's level tests are split by level: the SIMT FP32 levels in shard 1, the
Tensor Core levels and the references in shard 2 (with the rest of the file). The quick
tier is a marker, ``-m "gpu and smoke"``, on tests chosen in their files.

Every GPU test gets a time limit: its file's, unless the test carries its own
``@pytest.mark.timeout``. tests/conftest.py applies both.
"""

from __future__ import annotations

from dataclasses import dataclass

SHARDS = 4


@dataclass(frozen=True, slots=True)
class Placement:
    shard: int | None  # None: split per test (shard_of says how)
    timeout_s: int  # each test's limit, unless the test sets its own
    why: str


FILES: dict[str, Placement] = {
    # shard 1: the SIMT half of the ladder, compile determinism, the device's limits,
    # stream-K (its compiles and launches balance shard 2's Tensor Core half)
    "test_gpu.py": Placement(None, 120, "every level at every shape: split by level"),
    "test_build_determinism_gpu.py": Placement(1, 300, "every level in 4 fresh processes"),
    "test_limits_gpu.py": Placement(1, 120, "runs over the limits, faults that are not"),
    "test_stream_k_gpu.py": Placement(1, 120, "stream-K after many launches"),
    # measured on the H200 (2026-12-02): 92 s, the longest of shard 3's files: here it
    # balances the shards (shard 3 came to about 6 minutes with it)
    "test_gpu_build_events.py": Placement(1, 300, "a build event per compiled variant"),
    "test_build_cache_gpu.py": Placement(1, 300, "a second runner builds from the cache"),
    # shard 2: the Tensor Core half of the ladder and its correctness files
    "test_fp8_deep_gpu.py": Placement(2, 120, "fp8_deep with and without clusters"),
    "test_fp8_tile_fit_gpu.py": Placement(2, 150, "the FP8 and BF16 tile widths per shape"),
    "test_deepgemm_reference_gpu.py": Placement(2, 180, "DeepGEMM (skips without it)"),
    "test_mma_tma_gpu.py": Placement(2, 180, "mma_tma after many launches, to 8192^3"),
    "test_paired_gpu.py": Placement(2, 420, "a level and its reference timed in pairs"),
    # shard 4, beside the sustained runs (238 s measured; shard 3 took 366 s of its 420
    # before the traces came): the trace builds' compiles and a few launches each
    "test_trace_gpu.py": Placement(4, 240, "trace builds: correct, bounded, as modelled"),
    # shard 3: Nsight Compute, recordings, user kernels, build events, references
    "test_ncu_bank_conflicts.py": Placement(3, 180, "ncu counters vs the access model"),
    "test_ncu_source_gpu.py": Placement(3, 180, "ncu's source page per level"),
    "test_ncu_source_user_gpu.py": Placement(3, 300, "ncu's source page of user kernels"),
    "test_record_ncu_telemetry_gpu.py": Placement(3, 240, "record --ncu keeps sampling"),
    "test_record_profile_only_gpu.py": Placement(3, 300, "record --append --profile-only"),
    "test_record_update_gpu.py": Placement(3, 240, "record --update after a change"),
    "test_reference_launch_gpu.py": Placement(3, 120, "a reference launched once"),
    "test_user_kernels_gpu.py": Placement(3, 240, "user kernels, a fault, a sweep"),
    "test_multi_gpu.py": Placement(3, 240, "two GPUs (skips with one)"),
    "test_operands_versions_gpu.py": Placement(3, 240, "operand distributions, versions, "
                                                      "Triton code key, ncu version"),
    # measured on the H200 (2026-12-04): 18 s
    "test_launch_clocks_gpu.py": Placement(3, 300, "ncu reads the clocks inside launches"),
    # shard 4: energy and sustained runs (windows of seconds, cool-downs between them)
    "test_sustained_gpu.py": Placement(4, 240, "energy, sustained, settle, the check"),
}


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0].rsplit("/", 1)[-1]


def _simt(level_id: str) -> bool:
    from gemmscope.kernels.ladder import registry
    from gemmscope.kernels.ladder.level import Kind

    level = registry.BY_ID.get(level_id)
    return level is not None and level.kind is Kind.LEVEL and str(level.precision) == "fp32"


def placement(nodeid: str) -> Placement:
    """The file's placement; KeyError names a GPU test file that has none."""
    name = _file(nodeid)
    if name not in FILES:
        raise KeyError(f"{name} is not placed in a GPU shard: add it to "
                       "tests/support/gpu_tiers.py's FILES")
    return FILES[name]


def shard_of(nodeid: str) -> int:
    """The shard (1..SHARDS) of a GPU test, by its node id."""
    place = placement(nodeid)
    if place.shard is not None:
        return place.shard
    # test_gpu.py: test_level_is_correct[<level>-<M>x<N>x<K>] of a SIMT level in shard 1
    name = nodeid.split("::", 1)[1]
    if name.startswith("test_level_is_correct[") and _simt(name[name.index("[") + 1:]
                                                           .rsplit("-", 1)[0]):
        return 1
    return 2
