"""The one-launch tool's --params (kernels/engine/launch.py): over the level's own
parameters by default, over the shape rule's picks with --over-shape-rule."""

import pytest

from gemmscope.kernels.engine import launch
from gemmscope.kernels.ladder import registry

SHAPE = (4096, 4096, 7168)  # fp8_deep's rule picks CL 2 and KS 56 here on 132 SMs


def test_params_over_the_shape_rule_keep_the_shapes_other_picks():
    level = registry.get("fp8_deep")
    picked = level.for_shape(*SHAPE, 132).params
    assert picked != level.params  # else this shape shows nothing
    over = launch.with_given_params(level, *SHAPE, {"RING": 1}, sm_count=132).params
    assert over == {**picked, "RING": 1}


def test_params_without_the_rule_are_over_the_levels_own():
    level = registry.get("fp8_deep")
    plain = launch.with_given_params(level, *SHAPE, {"RING": 1}).params
    assert plain == {**level.params, "RING": 1}


def test_a_reference_takes_no_parameters():
    with pytest.raises(ValueError, match="reference"):
        launch.with_given_params(registry.get("cublas_bf16"), 64, 64, 64, {"BK": 8}, 132)


def test_over_shape_rule_without_params_is_refused_in_one_line(capsys):
    assert launch.main(["fp8_deep", "64", "64", "512", "--over-shape-rule"]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(
        "python -m gemmscope.kernels.engine.launch: --over-shape-rule: give --params")
