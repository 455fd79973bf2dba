// Hopper (sm_90a) building blocks shared by the wgmma levels, assembled into their
// sources like common.cuh (see kernels/toolchain/nvrtc.py). Everything is inline PTX, so
// the levels need no CUDA header beyond what NVRTC always has. One header per topic; this
// one includes them all, so a level includes "hopper.cuh" (or only the topics it uses):
//   - hopper_barriers.cuh: mbarriers (init, arrive, expected transactions, parity wait)
//     and named barriers;
//   - hopper_tma.cuh: the tensor map, TMA loads and stores, bulk groups, the async fence;
//   - hopper_schedule.cuh: a persistent block's tiles and stream-K K-step ranges, and the
//     partial sums of a tile cut between blocks;
//   - hopper_warp_specialized.cuh: the producer warpgroup's loop, its barriers, setmaxnreg;
//   - hopper_wgmma.cuh: descriptors, fences, commit/wait, and the m64nNk16 (BF16) and
//     m64nNk32 (E4M3) instructions with FP32 accumulators (hopper_wgmma_ops.cuh, generated
//     by kernels/toolchain/gen_wgmma.py);
//   - hopper_epilogue.cuh: accumulators stored as bf16, directly or with TMA.
// The grouped tile order and the shared-address conversion are common.cuh's.
#pragma once
#include "common.cuh"
#include "hopper_barriers.cuh"
#include "hopper_tma.cuh"
#include "hopper_schedule.cuh"
#include "hopper_warp_specialized.cuh"
#include "hopper_wgmma.cuh"
#include "hopper_epilogue.cuh"
