// A kernel that faults on purpose (test suite only, never in the product's ladder):
// thread 0 writes far outside any allocation, which raises an illegal-address error
// that poisons the CUDA context of the process that launched it.
#include "common.cuh"

template <int X, bool VEC>
__global__ void gs_fault(int M, int N, int K, const float* A, const float* B, float* C) {
    if (threadIdx.x == 0 && blockIdx.x == 0) C[(gs_index)1 << 40] = 1.f;
}
