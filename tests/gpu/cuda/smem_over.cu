// A kernel over the device's shared memory per block (test suite only): 48000 bytes of
// static shared memory plus the dynamic shared memory its test level asks for. The
// runner must refuse it after compiling and before launching (a launch would fail with
// an invalid-value error).
#include "common.cuh"

template <int X, bool VEC>
__global__ void gs_smem_over(int M, int N, int K, const float* A, const float* B, float* C) {
    __shared__ float fixed[12000];
    extern __shared__ float dynamic[];
    fixed[threadIdx.x] = 1.f;
    dynamic[threadIdx.x] = fixed[threadIdx.x];
    __syncthreads();
    if (M < 0) C[0] = dynamic[threadIdx.x + 1] + fixed[threadIdx.x + 1];
}
