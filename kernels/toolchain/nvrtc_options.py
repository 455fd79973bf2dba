"""NVRTC options that every compile of a level uses: the build (kernels.toolchain.nvrtc,
CuPy and offline), the SASS check of the access models (kernels.toolchain.sass_check) and
the benchmark scripts that compile kernels of their own.

DETERMINISTIC makes a level compile to the same cubin in every process, whatever its heap
layout (benchmarks/build_determinism.py measures it; issue 31):

- ``-disable-LoadStoreVectorizerPass`` (an option of NVVM's optimizer, through -Xnvvm):
  that pass merges scalar accesses into vector ones in an order that depends on the
  compiling process's heap addresses (ASLR alone changes it). A float4 shared load came
  out as a v4 load with lanes unused plus a reload of those lanes (PTX used_bytes_mask),
  so cp_async and cp_async_interior had an extra LDS in their K loop in some processes.
  With the pass off NVVM's output was the same in every process for every level, and
  ptxas still makes one LDS.128 of four adjacent shared loads; a 128-bit global access
  must be written as one (kernels/cuda/common.cuh's gs_load4 / gs_store4, __ldg of a
  float4) to stay one LDG.E.128 / STG.E.128.
- ``-frandom-seed``: the front end names internal-linkage functions (<mma.h>'s wmma) with
  a per-process number unless given a seed (NVRTC's option for identical output).

NVVM ignores an option it does not know, with a line in the log (UNKNOWN_OPTION), which
the offline compile turns into an error.
"""

from __future__ import annotations

DETERMINISTIC: tuple[str, ...] = ("-Xnvvm", "-Xopt", "-Xnvvm", "-disable-LoadStoreVectorizerPass",
                                  "-frandom-seed=gemmscope")
BASE: tuple[str, ...] = ("-std=c++17", "-lineinfo", *DETERMINISTIC)
# what NVVM logs for an option it does not know (and then ignores)
UNKNOWN_OPTION = "Unknown command line argument"
