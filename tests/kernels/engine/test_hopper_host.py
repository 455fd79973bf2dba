"""Host side of the sm_90a levels without a GPU: tensor-map arguments, refusals."""

from __future__ import annotations

import ctypes
import dataclasses
from types import SimpleNamespace

import pytest

from gemmscope.kernels.device import hopper
from gemmscope.kernels.device.gpu import DeviceInfo
from gemmscope.kernels.engine import measure
from gemmscope.kernels.ladder import registry

H200 = DeviceInfo(name="NVIDIA H200", sm_count=132, cc="9.0", arch="sm_90", sm_clock_max_mhz=1980,
                  mem_clock_max_mhz=3201, memory_gib=140, l2_bytes=60 << 20, driver="13.0",
                  cuda_runtime="13.0", cupy="14.2")
A100 = dataclasses.replace(H200, name="NVIDIA A100", cc="8.0", arch="sm_80")


def test_map_arguments_describe_rows_pitch_and_box():
    spec = hopper.TiledMap(ptr=0x10000, dtype="bf16", rows=1000, cols=1024, box_rows=128,
                           box_cols=64)
    spec.check()
    args = spec.arguments()
    assert args["data_type"] == hopper.DATA_TYPE["bf16"] and args["rank"] == 2
    assert args["dims"] == [1024, 1000]  # inner dimension first
    assert args["strides"] == [2048]  # row pitch in bytes
    assert args["box"] == [64, 128]
    assert args["swizzle"] == hopper.SWIZZLE_128B


def test_map_arguments_are_the_enums_of_nvidias_bindings():
    """The numbers of DATA_TYPE and the swizzle, interleave, promotion and fill values are
    the ones cuda.bindings names (cuda.h's), so encode hands the driver what it means."""
    cu = pytest.importorskip("cuda.bindings.driver")
    assert {k: cu.CUtensorMapDataType(v).name for k, v in hopper.DATA_TYPE.items()} == {
        "uint8": "CU_TENSOR_MAP_DATA_TYPE_UINT8", "uint16": "CU_TENSOR_MAP_DATA_TYPE_UINT16",
        "f16": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", "bf16": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
        "f32": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32", "tf32": "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32"}
    args = hopper.TiledMap(0x10000, "uint8", 64, 256, 64, 128, swizzle=False).arguments()
    assert cu.CUtensorMapSwizzle(hopper.SWIZZLE_128B).name == "CU_TENSOR_MAP_SWIZZLE_128B"
    assert cu.CUtensorMapSwizzle(args["swizzle"]).name == "CU_TENSOR_MAP_SWIZZLE_NONE"
    assert cu.CUtensorMapInterleave(args["interleave"]).name == "CU_TENSOR_MAP_INTERLEAVE_NONE"
    assert (cu.CUtensorMapL2promotion(args["l2_promotion"]).name
            == "CU_TENSOR_MAP_L2_PROMOTION_L2_256B")
    assert (cu.CUtensorMapFloatOOBfill(args["oob_fill"]).name
            == "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE")


def _driver(cu, encode_tiled):
    """cuda.bindings.driver's enums, with a stand-in for cuTensorMapEncodeTiled."""
    names = ("CUresult", "CUtensorMapDataType", "CUtensorMapSwizzle", "CUtensorMapInterleave",
             "CUtensorMapL2promotion", "CUtensorMapFloatOOBfill", "cuuint64_t", "cuuint32_t")
    return SimpleNamespace(**{n: getattr(cu, n) for n in names},
                           cuTensorMapEncodeTiled=encode_tiled)


def test_encode_hands_the_bindings_typed_arguments_and_returns_the_maps_bytes(monkeypatch):
    cu = pytest.importorskip("cuda.bindings.driver")
    seen = {}

    class Map:  # what the bindings return: an opaque 128-byte struct at getPtr()
        def __init__(self):
            self.raw = (ctypes.c_ubyte * hopper.TENSOR_MAP_BYTES)(*range(128))

        def getPtr(self):
            return ctypes.addressof(self.raw)

    def encode_tiled(*args):
        seen["args"] = args
        return cu.CUresult.CUDA_SUCCESS, Map()

    monkeypatch.setattr(hopper, "_bindings", lambda: _driver(cu, encode_tiled))
    out = hopper.encode(hopper.TiledMap(0x10000, "bf16", 1000, 1024, 128, 64))
    assert bytes(out) == bytes(range(128))
    dtype, rank, address, dims, strides, box, elem = seen["args"][:7]
    assert dtype is cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    # the sizes as the bindings' own integer types (an older cuda-bindings takes no int)
    assert all(isinstance(v, cu.cuuint64_t) for v in (*dims, *strides))
    assert all(isinstance(v, cu.cuuint32_t) for v in (*box, *elem))
    assert ((rank, address), [int(v) for v in dims], [int(v) for v in strides],
            [int(v) for v in box]) == ((2, 0x10000), [1024, 1000], [2048], [64, 128])
    assert seen["args"][8] is cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B


def test_a_refusal_of_the_driver_is_said_with_its_name(monkeypatch):
    cu = pytest.importorskip("cuda.bindings.driver")

    monkeypatch.setattr(hopper, "_bindings", lambda: _driver(
        cu, lambda *args: (cu.CUresult.CUDA_ERROR_INVALID_VALUE, None)))
    with pytest.raises(hopper.TensorMapError, match="CUDA_ERROR_INVALID_VALUE"):
        hopper.encode(hopper.TiledMap(0x10000, "bf16", 1000, 1024, 128, 64))


@pytest.mark.parametrize("spec, message", [
    (hopper.TiledMap(0x10000, "bf16", 10, 1001, 128, 64), "multiple of 16"),
    (hopper.TiledMap(0x10008, "bf16", 10, 1024, 128, 64), "aligned"),
    (hopper.TiledMap(0x10000, "uint8", 10, 1024, 128, 64), "128-byte"),
    (hopper.TiledMap(0x10000, "uint8", 10, 1024, 512, 128), "rows"),
])
def test_bad_maps_are_refused_before_the_driver(spec, message):
    with pytest.raises(hopper.TensorMapError, match=message):
        hopper.encode(spec)


def test_launch_passes_each_argument_by_address():
    seen = {}

    class Driver:
        @staticmethod
        def launchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
            arr = (ctypes.c_void_p * 3).from_address(params)
            seen.update(f=f, grid=(gx, gy, gz), block=(bx, by, bz), smem=smem,
                        first=ctypes.c_int32.from_address(arr[0]).value,
                        map_byte=ctypes.c_ubyte.from_address(arr[1] + 5).value,
                        ptr=ctypes.c_void_p.from_address(arr[2]).value)

    tmap = hopper.blank_map()
    tmap[5] = 42
    hopper.launch(Driver, 7, (132, 1, 1), (384, 1, 1), 1000, 0,
                  [hopper.int32(4096), tmap, hopper.pointer(0xABC0)])
    assert seen == {"f": 7, "grid": (132, 1, 1), "block": (384, 1, 1), "smem": 1000,
                    "first": 4096, "map_byte": 42, "ptr": 0xABC0}


def test_hopper_levels_are_refused_elsewhere_and_for_unaligned_k():
    wg, fp8 = registry.get("wgmma_tma"), registry.get("fp8_block_scaled")
    why = measure.refusal(wg, 256, 256, 256, A100)
    assert why is not None and "needs Hopper (sm_90a)" in str(why) and why.kind == "unsupported"
    assert measure.refusal(wg, 256, 256, 256, H200) is None
    assert "multiple of 8" in str(measure.refusal(wg, 100, 100, 100, H200))
    assert measure.refusal(wg, 1000, 999, 1000, H200) is None  # M and N are free
    assert "multiple of 128" in str(measure.refusal(fp8, 256, 256, 1000, H200))
    assert measure.refusal(fp8, 17, 4099, 512, H200) is None


def test_fp8_reference_without_torch_is_skipped_with_a_message(monkeypatch):
    ref = registry.get("cublaslt_fp8")
    monkeypatch.setattr(measure, "torch_scaled_mm_available", lambda: False)
    why = measure.refusal(ref, 4096, 4096, 4096, H200)
    assert why is not None and "torch" in str(why) and why.kind == "unsupported"
    monkeypatch.setattr(measure, "torch_scaled_mm_available", lambda: True)
    assert measure.refusal(ref, 4096, 4096, 4096, H200) is None
    assert "multiples of 16" in str(measure.refusal(ref, 1000, 1000, 1000, H200))


def test_references_exist_for_every_precision_and_take_the_levels_layout():
    for lv in registry.ladder():
        ref = registry.get(lv.reference or "")
        assert ref.b_layout == lv.b_layout, (lv.id, ref.id)


def test_sixteen_bit_outputs_are_counted_in_the_memory_estimate():
    bf16 = measure.bytes_needed(registry.get("wgmma_tma"), 1024, 1024, 1024)
    fp32 = measure.bytes_needed(registry.get("cp_async"), 1024, 1024, 1024)
    assert bf16 < fp32


def test_one_verification_rule_with_deepgemm_for_fp8():
    from gemmscope.kernels.engine.operands import Accuracy
    from gemmscope.kernels.ladder.registry import DEEPGEMM_DIFF_MAX, TOLERANCE, Precision

    fp8, fp32 = Precision.FP8, Precision.FP32
    assert Accuracy(1e-3, False, 1e-6).verified(fp8)
    assert not Accuracy(1e-3, False, 2 * DEEPGEMM_DIFF_MAX).verified(fp8)  # DeepGEMM's limit
    assert Accuracy(1e-5, False, 2 * DEEPGEMM_DIFF_MAX).verified(fp32)  # FP8 only
    assert not Accuracy(2 * TOLERANCE[fp32], False, 0.0).verified(fp32)
    assert not Accuracy(1e-6, True, float("nan")).verified(fp32)
    assert not Accuracy(float("nan"), False, 0.0).verified(fp32)
    formats = {lid: registry.get(lid).output_format for lid in (
        "cp_async", "wmma", "cublas_fp16", "wgmma_tma", "cublas_bf16", "fp8_block_scaled",
        "cublaslt_fp8")}
    assert formats == {"cp_async": "fp32", "wmma": "fp32", "cublas_fp16": "fp16",
                       "wgmma_tma": "bf16", "cublas_bf16": "bf16", "fp8_block_scaled": "bf16",
                       "cublaslt_fp8": "bf16"}


def test_a_launch_of_fp8_deep_built_for_another_k_is_refused_before_it_builds():
    """Every caller that hands the launcher its parameters (benchmark scripts, sweeps, the
    CLI's launch) meets the refusal the runner gives: KS = 16 compiled in where K = 1024
    has 8 K blocks, refused before a compile, a device or an allocation."""
    from gemmscope.kernels.engine.level_launch import Refused, level_launcher

    class Ops:  # only the shape is read before the refusal
        shape = (1024, 1024, 1024)

    level = registry.get("fp8_deep")
    with pytest.raises(Refused, match=r"fp8_deep: built with KS=16.*K=1024 has 8.*KS=0"):
        level_launcher(level, Ops(), {**level.params, "KS": 16})
