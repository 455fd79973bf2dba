#!/usr/bin/env bash
# Nsight Compute on every SIMT level at 1024^3: shared-memory bank conflicts and
# wavefronts (loads and stores), one CSV per level under ${1:-out}/. GPU machine.
set -u
out=${1:-out}; mkdir -p "$out"
metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,gpu__time_duration.sum
for lv in naive coalesced smem_tiled smem_padded double_buffer register_2d vectorized warp_tiling cp_async; do
  kernel=$(python3 -c "from gemmscope.kernels.ladder import registry; print(registry.get('$lv').kernel)")
  ncu --clock-control none --metrics "$metrics" --csv --page raw -k "regex:$kernel" -c 1 \
    python3 -m gemmscope.kernels.engine.launch "$lv" 1024 1024 1024 > "$out/ncu_$lv.csv" 2> "$out/ncu_$lv.err"
  echo "$lv: $(grep -c '' "$out/ncu_$lv.csv") lines"
done
