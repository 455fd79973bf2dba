"""FP8 E4M3 and BF16 conversions and DeepGEMM-style block scaling (numpy; the same
functions run on CuPy arrays in the runner)."""

from __future__ import annotations

import numpy as np
import pytest

from gemmscope.kernels.engine import quantize as qz


def test_every_finite_code_decodes_and_encodes_back():
    values = qz.e4m3_values()
    finite = [c for c in range(256) if not np.isnan(values[c]) and c != 0x80]  # -0 -> +0
    codes = qz.e4m3_encode(values[finite])
    assert list(codes) == finite
    assert values[0x7E] == 448 and values[0x01] == 2.0**-9 and np.isnan(values[0x7F])


def test_rounding_is_to_nearest_with_ties_to_even_and_saturates():
    # 1.0 = code 0x38, 1.125 = 0x39, 1.25 = 0x3A: midpoints go to the even code
    assert qz.e4m3_encode(np.array([1.0625]))[0] == 0x38
    assert qz.e4m3_encode(np.array([1.1875]))[0] == 0x3A
    assert qz.e4m3_encode(np.array([1.07]))[0] == 0x39
    assert qz.e4m3_encode(np.array([1000.0, -1000.0])).tolist() == [0x7E, 0xFE]
    assert qz.e4m3_decode(qz.e4m3_encode(np.array([-3.3]))) == pytest.approx([-3.25])


def test_matches_ml_dtypes_where_available():
    ml = pytest.importorskip("ml_dtypes")
    x = np.random.default_rng(1).standard_normal(50_000).astype(np.float32) * 50
    x = x[np.abs(x) <= 448]
    ref = x.astype(ml.float8_e4m3fn).astype(np.float64)
    assert np.array_equal(qz.e4m3_decode(qz.e4m3_encode(x)), ref)
    assert np.array_equal(qz.bf16_encode(x), x.astype(ml.bfloat16).view(np.uint16))


def test_bf16_round_trip_is_within_half_an_ulp():
    x = np.random.default_rng(2).uniform(-1, 1, 10_000).astype(np.float32)
    y = qz.bf16_decode(qz.bf16_encode(x))
    assert np.all(np.abs(y - x) <= np.abs(x) * 2.0**-8)


def test_row_blocks_scale_each_1x128_block_to_448():
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (5, 256)).astype(np.float32)
    a[2, 128:] *= 1000  # one block much larger than the others
    codes, scales = qz.quantize_rows_1x128(a)
    assert codes.shape == a.shape and scales.shape == (2, 5)  # block-major: [kb, m]
    amax = np.abs(a.reshape(5, 2, 128)).max(axis=2)
    assert np.allclose(scales.T, amax / 448, rtol=1e-6)
    assert scales[1, 2] > 500 * scales[0, 2]
    back = qz.dequantize_rows_1x128(codes, scales)
    assert np.all(np.abs(back - a) <= np.abs(a) * 2.0**-4 + scales.T.repeat(128, 1) * 2.0**-9)
    with pytest.raises(ValueError, match="multiple of 128"):
        qz.quantize_rows_1x128(a[:, :100])


def test_square_blocks_cover_a_partial_last_row_block():
    rng = np.random.default_rng(4)
    bt = rng.uniform(-1, 1, (200, 256)).astype(np.float32)  # 200 rows: blocks of 128 + 72
    bt[150, 5] = 7.0
    codes, scales = qz.quantize_blocks_128x128(bt)
    assert scales.shape == (2, 2)
    assert scales[1, 0] == pytest.approx(7.0 / 448)
    assert qz.e4m3_decode(codes[150:151, 5:6])[0, 0] * scales[1, 0] == pytest.approx(7.0)
    back = qz.dequantize_blocks_128x128(codes, scales)
    assert back.shape == bt.shape
    assert np.abs(back - bt).max() <= 7.0 / 448 * 16  # half a step of the largest binade


def test_per_tensor_scale_and_deepgemm_measure():
    x = np.random.default_rng(5).uniform(-2, 2, (64, 64))
    codes, scale = qz.quantize_tensor(x)
    assert float(scale) == pytest.approx(np.abs(x).max() / 448, rel=1e-6)
    assert qz.deepgemm_diff(x, x) == pytest.approx(0.0, abs=1e-15)
    assert qz.deepgemm_diff(x, -x) == pytest.approx(2.0)
    y = qz.e4m3_decode(codes) * float(scale)
    assert 0 < qz.deepgemm_diff(x, y) < 1e-3
