// The kernel of our HIP code object (`hipcc --genco`): each thread writes
// its global index, plus a seed, into one word of `out`; the simulator's
// shader machine runs it.
#include <hip/hip_runtime.h>

extern "C" __global__ void kfd_fill(unsigned int *out, unsigned int seed, unsigned int n)
{
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = i + seed;
}
