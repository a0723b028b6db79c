// The kernel of our HIP code object (`hipcc --genco`): each thread writes
// its global index, plus a seed, into one word of `out`. The simulator runs
// no shader code, so launching it must fail visibly; loading the code object
// and looking the kernel up must work.
#include <hip/hip_runtime.h>

extern "C" __global__ void kfd_fill(unsigned int *out, unsigned int seed, unsigned int n)
{
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = i + seed;
}
