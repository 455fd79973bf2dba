"""The CPU checks every ladder level must pass, one function each, for any level: the
registry's (tests/kernels/ladder/test_registry.py), the models'
(tests/kernels/models/test_level_models.py) and the offline build's
(tests/kernels/toolchain/test_compile_nvrtc.py) tests call them for the registered levels,
and tests/kernels/test_adding_a_level.py for the throwaway level that
docs/adding-a-level.md walks a newcomer through. One body per rule, so the document's
level meets exactly the rules the ladder meets."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import places

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.registry import Precision

SMS = 132  # the H200's multiprocessors: the grids are checked for it


def template_params(level: registry.Level) -> list[str]:
    """Names of the kernel template's parameters, read from the .cu source as the plain build
    reads it (a trace line between the template and the kernel, such as double_buffer's
    launch bounds for its trace build, is not the plain kernel's)."""
    from gemmscope.kernels.toolchain.nvrtc import plain_text

    text = plain_text(registry.source_file(level).read_text())
    m = re.search(r"template\s*<([^>]*)>\s*__global__\s+void\b[^{;]*?\b"
                  + re.escape(level.kernel or "") + r"\s*\(", text, re.S)
    assert m, f"{level.id}: kernel template {level.kernel} not found in {level.source}"
    return [p.split()[-1] for p in m.group(1).replace("\n", " ").split(",")]


def entry_is_complete(level: registry.Level) -> None:
    """Texts, precision and a source file that exists, named relative to the repository
    (a test-only level's folder may lie elsewhere: its file must still exist)."""
    assert level.title and level.adds and level.follows
    assert isinstance(level.precision, Precision)
    assert level.source and registry.source_file(level).is_file()
    if level.source_dir is None:
        assert (places.REPO / (level.source_path or "")).is_file(), \
            "source path is relative to the repo"


def params_match_the_kernel_template(level: registry.Level) -> None:
    names = template_params(level)
    assert names[-1] == "VEC", "the last template parameter selects the vector path"
    assert names[:-1] == list(level.params), "registry params must follow template order"


def geometry_blocks_cover_c(level: registry.Level) -> None:
    """The registry's geometry callable alone sizes the launch: the grid's blocks, each
    one block tile, cover M x N (a persistent grid: one block per SM, no more than tiles)."""
    assert level.geometry is not None
    geo = level.launch_geometry()
    assert (geo.block, geo.tile) == (level.threads, level.tile)
    rows, cols = geo.tile
    assert geo.k_tile >= 1 and geo.group_rows >= 1
    for M, N in ((1, 1), (7, 13), (128, 256), (4097, 4099)):
        gx, gy, gz = level.grid(M, N, SMS)
        tiles = -(-M // rows) * -(-N // cols)
        if level.stream_k:
            assert (gx * gy * gz, gy, gz) == (SMS, 1, 1)
        elif level.grid_rule is not None:  # fewer CTAs for as many waves, whole clusters
            cl = level.params.get("CL", 1)
            assert (gy, gz) == (1, 1) and gx <= max(cl, min(tiles, SMS))
            assert -(-tiles // gx) == -(-tiles // SMS)
        elif level.persistent or level.sm_grid:
            assert (gx * gy * gz, gy, gz) == (min(tiles, SMS), 1, 1)
        else:
            assert gx * gy == tiles and gz == 1
            assert tiles * rows * cols >= M * N


def model_has_the_registry_geometry(level: registry.Level) -> None:
    from gemmscope.kernels.models import model_for

    m = model_for(level.id)
    assert (m.bm, m.bn) == level.tile, level.id
    assert m.threads == level.threads[0] * level.threads[1], level.id
    if "BK" in level.params:
        assert m.bk == level.params["BK"]
    assert m.bk == level.launch_geometry().k_tile, level.id
    if "STAGES" in level.params:
        assert m.stages == level.params["STAGES"]


def threads_cover_the_block_tile_once(level_id: str) -> None:
    from gemmscope.kernels.models import model_for

    m = model_for(level_id)
    if not m.exact:
        masks = sum(m.warp_mask(w).astype(int) for w in range(m.warps))
        assert (masks == 1).all()
        return
    count = np.zeros((m.bm, m.bn), int)
    for tid in range(m.threads):
        rc = m.thread_outputs(tid)
        np.add.at(count, (rc[:, 0], rc[:, 1]), 1)
    assert (count == 1).all()


def model_parameters_come_from_the_registry(level_id: str) -> None:
    """One source of truth: a model keeps no parameter values of its own, so a retuned
    level is modelled as it runs, with or without a partial override."""
    from gemmscope.kernels.models import model_for
    from gemmscope.kernels.models.level_model import LevelModel, model_class

    cls = model_class(level_id)
    assert cls is not None, f"no model class names level {level_id!r}"
    copies = [c.__name__ for c in cls.__mro__ if c is not LevelModel and "defaults" in vars(c)]
    assert not copies, f"{copies} keep their own defaults; the registry has them"
    registered = registry.get(level_id).params
    assert model_for(level_id).params == registered
    name = next(iter(registered))
    assert model_for(level_id, {name: registered[name]}).params == registered


def shared_layout_places_elements_as_the_model_does(level_id: str) -> None:
    """The layout the swizzle explorer takes from a model (padding, CuTe swizzle) puts
    every element of a stage where the model's own addressing does."""
    from gemmscope.kernels.models import model_for

    m = model_for(level_id)
    for arr in m.smem_arrays():
        layout = arr.tile_layout()
        r, c = np.meshgrid(np.arange(arr.rows), np.arange(arr.cols), indexing="ij")
        assert (layout.address(r, c) == arr.address(0, r, c) - arr.base_bytes).all(), arr.name
    first = m.smem_arrays()[:1]
    assert m.shared_layout() == (first[0].tile_layout() if first else None)


def compiles_for_sm90a(level: registry.Level) -> None:
    """NVRTC from PyPI (the nvrtc extra) builds both variants, no GPU, no warning."""
    from gemmscope.kernels.toolchain import nvrtc as build

    out = build.compile_offline(level, arch="sm_90a")
    assert out.cubin_bytes > 1000
    assert set(out.lowered) == set(build.variants(level).values())
    for mangled in out.lowered.values():
        assert (level.kernel or "") in mangled
    assert "warning" not in out.log.lower(), out.log


def compiled_k_loop_matches_the_model(level_id: str, src_dir: Path) -> None:
    """The instruction mix of the compiled K loop (NVRTC + nvdisasm, no GPU) is the one
    the model lists per K step."""
    from gemmscope.kernels.models import model_for
    from gemmscope.kernels.toolchain.sass_check import compare_level, compiler_versions

    cmp = compare_level(level_id, model_for(level_id), src_dir)
    assert not cmp.mismatches, (f"{cmp.mismatches} (sass, model) with {compiler_versions()}; "
                                f"the loop's lines: {cmp.lines_of(cmp.mismatches)}")


# every check a ladder level meets, in the order docs/adding-a-level.md names them
ENTRY_CHECKS = (entry_is_complete, params_match_the_kernel_template, geometry_blocks_cover_c,
                model_has_the_registry_geometry)
MODEL_CHECKS = (threads_cover_the_block_tile_once, model_parameters_come_from_the_registry,
                shared_layout_places_elements_as_the_model_does)
