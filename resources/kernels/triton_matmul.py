"""An example Triton kernel for gemmscope (docs/user-kernels.md): a tiled FP16 matrix
product with FP32 accumulation and an FP32 C, written here for the bench.

gemmscope calls the @triton.jit function named in the spec as

    kernel[grid](A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                 stride_cm, stride_cn, **meta, num_warps=..., num_stages=...)

with row-major A (M x K), B (K x N) and C (M x N) on the GPU, the grid from the spec's
expressions and the meta-parameters from its [params]. Masks keep every shape right.
"""

import triton
import triton.language as tl


@triton.jit
def matmul_fp16(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # one program per BLOCK_M x BLOCK_N tile of C; GROUP_M tile rows walked together so
    # that neighbouring programs share their tiles of B in L2
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_here = tl.minimum(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % rows_here
    tile_n = (pid % per_group) // rows_here

    offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_at = A + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_at = B + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - step * BLOCK_K
        a = tl.load(a_at, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_at, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_at += BLOCK_K * stride_ak
        b_at += BLOCK_K * stride_bk
    c_at = C + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_at, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
