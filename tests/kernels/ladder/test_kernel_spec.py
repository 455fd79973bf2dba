"""A user's kernel spec: read into a typed record, every field checked, each failure one
line naming the field; the source check; the run command's kernel object."""

from __future__ import annotations

import re
from pathlib import Path

import places
import pytest

from gemmscope.kernels.ladder import user_level
from gemmscope.kernels.ladder.kernel_spec import Language, SpecError
from gemmscope.kernels.ladder.registry import BY_ID, Precision
from gemmscope.kernels.ladder.source_check import MAX_SOURCE_BYTES, check_source
from gemmscope.kernels.ladder.spec_file import MAX_SPEC_BYTES, load_spec, parse_spec, read_source

EXAMPLES = places.REPO / "resources" / "kernels"

GOOD = """
[kernel]
id = "mine"
name = "my_gemm"
source = "mine.cu"
precision = "fp32"

[params]
BM = { default = 64, values = [32, 64, 128] }
BN = 64
TM = { default = 4, min = 1, max = 16 }

[launch]
block = ["(BM // TM) * (BN // TM)"]
grid = ["ceil_div(N, BN)", "ceil_div(M, BM)"]
smem = "BM * BN * 4"

[[rules]]
value = "BM"
multiple_of = "TM"
why = "threads cover the rows"

[[rules]]
value = "K"
multiple_of = "4"
why = "loads of four"
"""


def spec(text: str = GOOD, **_):
    return parse_spec(text, Path("."), "mine.toml")


def test_the_examples_parse_into_their_typed_records():
    cuda = load_spec(EXAMPLES / "regblock_float4.toml")
    assert cuda.language is Language.CUDA and cuda.precision is Precision.FP32
    assert list(cuda.defaults) == ["BM", "BN", "BK", "TM", "TN"]
    assert cuda.reference == "cublas_fp32" and cuda.vector == 4
    assert cuda.grid_of(1000, 999, 1001, cuda.defaults) == (8, 8, 1)
    assert cuda.block_of(cuda.defaults) == (256, 1)
    assert read_source(cuda).startswith("// An example user kernel")
    triton = load_spec(EXAMPLES / "triton_matmul.toml")
    assert triton.language is Language.TRITON and triton.precision is Precision.FP16
    assert triton.block_of(triton.defaults) == (32 * triton.defaults["num_warps"], 1)
    assert "\n@triton.jit\ndef matmul_fp16(" in read_source(triton)


def test_a_spec_evaluates_its_launch_from_the_parameters():
    s = spec()
    p = s.with_defaults({"BM": 128})
    assert s.block_of(p) == ((128 // 4) * (64 // 4), 1)
    assert s.grid_of(1000, 100, 8, p) == (2, 8, 1)
    assert s.smem_of(p) == 128 * 64 * 4
    assert s.param_problems(p) == []
    assert s.param_problems({**p, "BM": 256}) == ["BM=256 is not one of its values [32, 64, 128]"]
    assert "not a multiple" in s.param_problems({**p, "TM": 3})[0]
    assert s.shape_problems(8, 8, 6, p) == ["K = 6 is not a multiple of 4 = 4 (loads of four)"]


@pytest.mark.parametrize("change, field", [
    (('id = "mine"', 'id = "Mine!"'), "kernel.id"),
    (('id = "mine"', 'id = "naive"'), "kernel.id"),
    (('id = "mine"', "id = 3"), "kernel.id"),
    (('name = "my_gemm"', 'name = "my gemm"'), "kernel.name"),
    (('source = "mine.cu"', 'source = "../x/mine.cu"'), "kernel.source"),
    (('source = "mine.cu"', 'source = "/etc/passwd"'), "kernel.source"),
    (('source = "mine.cu"', 'source = "mine.py"'), "kernel.source"),
    (('precision = "fp32"', 'precision = "fp8"'), "kernel.precision"),
    (('precision = "fp32"', 'precision = "fp32"\nreference = "cublas_fp16"'),
     "kernel.reference"),
    (('precision = "fp32"', 'precision = "fp32"\ncolour = "red"'), "kernel"),
    (("BN = 64", "BN = true"), "params.BN"),
    (("BN = 64", "BN = -1"), "params.BN"),
    (("BN = 64", "BN = 99999"), "params.BN"),
    (("BN = 64", 'BN = "64"'), "params.BN"),
    (("BN = 64", "BN = { values = [64] }"), "params.BN"),
    (("BN = 64", "BN = { default = 64, step = 2 }"), "params.BN"),
    (("BN = 64", "BN = { default = 48, values = [32, 64] }"), "params.BN.default"),
    (("BN = 64", "BN = { default = 64, min = 100, max = 10 }"), "params.BN"),
    (("BN = 64", "M = 64"), "params.M"),
    (("BN = 64", "num_warps = 4"), "params.num_warps"),
    (('grid = ["ceil_div(N, BN)", "ceil_div(M, BM)"]', 'grid = ["N / BN"]'),
     "launch.grid[0]"),
    (('grid = ["ceil_div(N, BN)", "ceil_div(M, BM)"]', 'grid = ["1", "2", "3", "4"]'),
     "launch.grid"),
    (('block = ["(BM // TM) * (BN // TM)"]', 'block = ["M"]'), "launch.block[0]"),
    (('block = ["(BM // TM) * (BN // TM)"]', 'block = ["open(1)"]'), "launch.block[0]"),
    (('smem = "BM * BN * 4"', 'smem = "BM * BN * 4.0"'), "launch.smem"),
    (('smem = "BM * BN * 4"', 'smem = "BM // (BN - 64)"'), "launch"),
    (('multiple_of = "TM"', 'multiple_of = "TX"'), "rules[0].multiple_of"),
    (('why = "loads of four"', 'why = "loads of four"\nextra = 1'), "rules[1]"),
    (('[launch]', '[launch]\ngeometry = "spiral"'), "launch.geometry"),
])
def test_every_bad_field_is_one_line_naming_it(change, field):
    old, new = change
    assert old in GOOD
    with pytest.raises(SpecError) as info:
        spec(GOOD.replace(old, new, 1))
    message = str(info.value)
    assert message.startswith(f"mine.toml: {field}"), message
    assert "\n" not in message


def test_a_spec_that_is_not_toml_or_too_big_is_refused():
    with pytest.raises(SpecError, match="not TOML"):
        spec("[kernel\nid=")
    with pytest.raises(SpecError, match="at most"):
        spec("#" * (MAX_SPEC_BYTES + 1))
    with pytest.raises(SpecError, match=r"^mine\.toml: lunch: an unknown key$"):
        spec(GOOD.replace("[launch]", "[lunch]\n[launch]"))


def test_a_missing_section_is_named():
    without = GOOD.split("[launch]")[0]
    with pytest.raises(SpecError, match="launch"):
        spec(without)


@pytest.mark.parametrize("line", [
    '#include "my_header.h"',
    '#include "../kernels/cuda/common.cuh"',
    "#include </etc/passwd>",
    "#include <../../secret.h>",
    "#include HEADER_FROM_A_MACRO",
    "  #  include \\\n  \"other.cuh\"",
    '%:include "other.cuh"',
    "#include_next <cuda_fp16.h>",
    '#embed "data.bin"',
])
def test_a_cuda_source_brings_in_no_other_file(line):
    text = f"// a kernel\n{line}\n__global__ void k() {{}}\n"
    why = check_source(text, "cuda")
    assert why is not None and why.startswith("line 2"), why


def test_toolkit_and_project_headers_are_allowed():
    text = ('#include <cuda_fp16.h>\n#include <cuda/pipeline>\n#include "common.cuh"\n'
            "// #include \"anything\" in a comment is not a directive\n")
    assert check_source(text, "cuda") is None


def test_a_source_is_bounded_text():
    assert "at most" in check_source("x" * (MAX_SOURCE_BYTES + 1), "cuda")
    assert "NUL" in check_source("a\x00b", "triton")


def launch_of(**changes):
    s = load_spec(EXAMPLES / "regblock_float4.toml")
    launch = s.launch(read_source(s), 1000, 999, 1001, {**s.defaults, **changes})
    return launch


def test_the_kernel_object_round_trips_through_the_runners_check():
    launch = launch_of()
    back = user_level.from_wire(launch.as_wire(), frozenset(BY_ID))
    assert back == launch
    level = back.level(Path("/nonexistent"))
    assert level.grid(1000, 999) == (8, 8, 1) and level.threads == (256, 1)
    assert level.name_expression(True) == "regblock_float4<128, 128, 8, 8, 8, true>"
    assert level.use_vector_path(1000, 1000, 1000) and not level.use_vector_path(7, 7, 7)
    assert level.catalog_entry(0)["user"] == "regblock_float4.cu"


@pytest.mark.parametrize("field, value, says", [
    ("id", "naive", "a level of the registry"),
    ("id", "x" * 50, "kernel.id"),
    ("file", "../evil.cu", "kernel.file"),
    ("file", "k.py", "not a cuda source"),
    ("name", "a; b", "kernel.name"),
    ("source", '#include "other.h"\n', "kernel.source"),
    ("source", 5, "kernel.source"),
    ("sha256", "0" * 64, "does not match"),
    ("block", [0], "kernel.block[0]"),
    ("block", [1, 2, 3], "kernel.block"),
    ("grid", [1, 70000], "kernel.grid[1]"),
    ("smem", True, "kernel.smem"),
    ("params", {"BM": "128"}, "kernel.params.BM"),
    ("reference", "cublas_fp16", "kernel.reference"),
    ("arch", "sm_90; rm", "kernel.arch"),
])
def test_the_runner_refuses_a_kernel_object_naming_the_field(field, value, says):
    wire = launch_of().as_wire()
    wire[field] = value
    with pytest.raises(user_level.LaunchRefused, match=re.escape(says)):
        user_level.from_wire(wire, frozenset(BY_ID))


TRITON = """
[kernel]
id = "tri"
name = "mm"
source = "tri.py"
language = "triton"
precision = "fp16"

[params]
BLOCK_M = 128
num_warps = { default = 4, values = [4, 8] }

[launch]
grid = ["ceil_div(M, BLOCK_M)"]
"""


def test_a_triton_spec_takes_its_block_from_num_warps():
    s = spec(TRITON)
    assert s.block_of(s.with_defaults({"num_warps": 8})) == (256, 1)
    assert s.grid_of(1000, 1, 1, s.defaults) == (8, 1, 1)


@pytest.mark.parametrize("change, field", [
    (('grid = ["ceil_div(M, BLOCK_M)"]', 'grid = ["1"]\nblock = ["128"]'), "launch.block"),
    (('precision = "fp16"', 'precision = "fp16"\nvector = 4'), "kernel.vector"),
    (('source = "tri.py"', 'source = "tri.cu"'), "kernel.source"),
])
def test_a_triton_spec_refuses_what_is_cudas(change, field):
    old, new = change
    with pytest.raises(SpecError, match=f"^mine.toml: {re.escape(field)}"):
        spec(TRITON.replace(old, new))
