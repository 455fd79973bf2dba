#!/bin/sh
# Nsight Compute on one launch each of fp8_deep and DeepGEMM at one shape (GPU machine):
#   sh benchmarks/ncu_fp8_deep.sh DEEPGEMM_FOLDER OUT M N K ['{"RING": 1}']
# The optional last argument: fp8_deep's parameters over those its shape rule picks there
# (engine.launch --over-shape-rule), to profile one change to the launch a run makes.
# Sections: SpeedOfLight, WarpStateStats, SchedulerStats, MemoryWorkloadAnalysis; the
# clocks left free (--clock-control none), as the side-by-side timing runs them.
set -e
DG=$1; OUT=$2; M=$3; N=$4; K=$5; P=${6:-}
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
ncu --clock-control none -k regex:fp8gemm_deep -s 1 -c 1 $SECTIONS \
    python3 -m gemmscope.kernels.engine.launch fp8_deep $M $N $K --launches 2 \
    ${P:+--params "$P" --over-shape-rule} > "$OUT/ncu_fp8_deep.txt" 2>&1 || true
cat > /tmp/dg_once.py <<PY
import sys, torch
sys.path.insert(0, "$DG")
import deep_gemm
M, N, K = $M, $N, $K
a = (torch.randn(M, K, device="cuda") * 0.3).to(torch.float8_e4m3fn)
b = (torch.randn(N, K, device="cuda") * 0.3).to(torch.float8_e4m3fn)
sa = deep_gemm.get_col_major_tma_aligned_tensor(torch.ones(M, K // 128, device="cuda"))
sb = torch.ones((N + 127) // 128, K // 128, device="cuda")
out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
for _ in range(2):
    deep_gemm.gemm_fp8_fp8_bf16_nt((a, sa), (b, sb), out)
torch.cuda.synchronize()
PY
ncu --clock-control none -k regex:fp8_gemm_kernel -s 1 -c 1 $SECTIONS python3 /tmp/dg_once.py > "$OUT/ncu_deepgemm.txt" 2>&1 || true
