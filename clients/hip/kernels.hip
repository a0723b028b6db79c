// Kernel tests for `cargo xtask hip`: each kernel's result is checked
// against a host reference computed independently. Prints `OK <name>` or
// `FAIL <name>: <why>` per test and `ALL OK` when every test passed.
// Integers compare exactly; floats within a stated relative tolerance.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static int g_fail = 0, g_pass = 0;

#define CK(x)                                                                  \
  do {                                                                         \
    hipError_t e_ = (x);                                                       \
    if (e_ != hipSuccess) {                                                    \
      snprintf(why, sizeof why, "%s: %s", #x, hipGetErrorString(e_));        \
      return false;                                                            \
    }                                                                          \
  } while (0)

static char why[512];

static void report(const char *name, bool ok) {
  if (ok) {
    printf("OK %s\n", name);
    g_pass++;
  } else {
    printf("FAIL %s: %s\n", name, why);
    g_fail++;
  }
  fflush(stdout);
}

static bool close_rel(double want, double got, double tol) {
  if (want == got) return true;
  double d = fabs(want - got), m = fabs(want);
  return d <= tol * (m > 1e-30 ? m : 1.0);
}

// Guard value outside the written range: must stay untouched.
static const unsigned GUARD = 0xdeadbeefu;

// ---- element-wise -----------------------------------------------------------
__global__ void k_axpy(int n, int a, const int *x, int *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

static bool t_elementwise() {
  const int n = 1000, pad = 16;
  std::vector<int> x(n), y(n + pad), want(n + pad);
  for (int i = 0; i < n; i++) { x[i] = i * 7 - 300; y[i] = i ^ 0x55; }
  for (int i = n; i < n + pad; i++) y[i] = (int)GUARD;
  for (int i = 0; i < n + pad; i++) want[i] = i < n ? 3 * x[i] + y[i] : y[i];
  int *dx, *dy;
  CK(hipMalloc(&dx, n * 4));
  CK(hipMalloc(&dy, (n + pad) * 4));
  CK(hipMemcpy(dx, x.data(), n * 4, hipMemcpyHostToDevice));
  CK(hipMemcpy(dy, y.data(), (n + pad) * 4, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(k_axpy, dim3((n + 127) / 128), dim3(128), 0, 0, n, 3, dx, dy);
  CK(hipGetLastError());
  CK(hipMemcpy(y.data(), dy, (n + pad) * 4, hipMemcpyDeviceToHost));
  CK(hipFree(dx));
  CK(hipFree(dy));
  for (int i = 0; i < n + pad; i++)
    if (y[i] != want[i]) {
      snprintf(why, sizeof why, "y[%d] = %d, want %d", i, y[i], want[i]);
      return false;
    }
  return true;
}

// ---- grid-stride loop, millions of threads ---------------------------------
__global__ void k_stride(unsigned n, unsigned *o) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    o[i] = i * 2654435761u;
}
__global__ void k_big(unsigned n, unsigned *o) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = i + 1;
}

static bool check_u32(const char *what, const std::vector<unsigned> &got,
                      const std::vector<unsigned> &want) {
  for (size_t i = 0; i < want.size(); i++)
    if (got[i] != want[i]) {
      snprintf(why, sizeof why, "%s[%zu] = %#x, want %#x", what, i, got[i], want[i]);
      return false;
    }
  return true;
}

static bool t_grid_stride() {
  const unsigned n = 100003;
  std::vector<unsigned> o(n + 8, GUARD), want(n + 8, GUARD);
  for (unsigned i = 0; i < n; i++) want[i] = i * 2654435761u;
  unsigned *d;
  CK(hipMalloc(&d, (n + 8) * 4));
  CK(hipMemcpy(d, o.data(), (n + 8) * 4, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(k_stride, dim3(37), dim3(96), 0, 0, n, d);
  CK(hipMemcpy(o.data(), d, (n + 8) * 4, hipMemcpyDeviceToHost));
  CK(hipFree(d));
  return check_u32("o", o, want);
}

static bool t_millions() {
  const unsigned n = 2u << 20;
  std::vector<unsigned> o(n + 64, GUARD), want(n + 64, GUARD);
  for (unsigned i = 0; i < n; i++) want[i] = i + 1;
  unsigned *d;
  CK(hipMalloc(&d, (n + 64) * 4));
  CK(hipMemcpy(d, o.data(), (n + 64) * 4, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(k_big, dim3(n / 256), dim3(256), 0, 0, n, d);
  CK(hipMemcpy(o.data(), d, (n + 64) * 4, hipMemcpyDeviceToHost));
  CK(hipFree(d));
  return check_u32("o", o, want);
}

// ---- reduction with __shared__ + __syncthreads ------------------------------
__global__ void k_reduce(int n, const int *x, long long *partial) {
  __shared__ long long s[256];
  int t = threadIdx.x, i = blockIdx.x * 256 + t;
  s[t] = i < n ? x[i] : 0;
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}

static bool t_reduce() {
  const int n = 5001, b = (n + 255) / 256;
  std::vector<int> x(n);
  std::vector<long long> p(b);
  for (int i = 0; i < n; i++) x[i] = (i * 37) % 1001 - 500;
  int *dx;
  long long *dp;
  CK(hipMalloc(&dx, n * 4));
  CK(hipMalloc(&dp, b * 8));
  CK(hipMemcpy(dx, x.data(), n * 4, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(k_reduce, dim3(b), dim3(256), 0, 0, n, dx, dp);
  CK(hipMemcpy(p.data(), dp, b * 8, hipMemcpyDeviceToHost));
  CK(hipFree(dx));
  CK(hipFree(dp));
  for (int k = 0; k < b; k++) {
    long long w = 0;
    for (int i = k * 256; i < n && i < (k + 1) * 256; i++) w += x[i];
    if (p[k] != w) {
      snprintf(why, sizeof why, "block %d sum %lld, want %lld", k, p[k], w);
      return false;
    }
  }
  return true;
}

// ---- atomics: shared and global, int, float, 64-bit, CAS loop ---------------
__device__ double cas_add_double(double *p, double v) {
  unsigned long long *a = (unsigned long long *)p, old = *a, seen;
  do {
    seen = old;
    old = atomicCAS(a, seen, __double_as_longlong(__longlong_as_double(seen) + v));
  } while (old != seen);
  return __longlong_as_double(old);
}

__global__ void k_atomics(int n, int *gi, float *gf, unsigned long long *g64,
                          double *gd, unsigned *gmax) {
  __shared__ int sh[8];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 8) sh[t] = 0;
  __syncthreads();
  if (i < n) {
    atomicAdd(&sh[i & 7], i);
    atomicAdd(gf, 0.5f);
    atomicAdd(g64, (unsigned long long)i << 20);
    cas_add_double(gd, 0.25);
    atomicMax(gmax, (unsigned)(i * 7919) % 10007u);
  }
  __syncthreads();
  if (t < 8) atomicAdd(&gi[t], sh[t]);
}

static bool t_atomics() {
  const int n = 777;
  int *gi;
  float *gf;
  unsigned long long *g64;
  double *gd;
  unsigned *gmax;
  CK(hipMalloc(&gi, 32));
  CK(hipMalloc(&gf, 4));
  CK(hipMalloc(&g64, 8));
  CK(hipMalloc(&gd, 8));
  CK(hipMalloc(&gmax, 4));
  CK(hipMemset(gi, 0, 32));
  CK(hipMemset(gf, 0, 4));
  CK(hipMemset(g64, 0, 8));
  CK(hipMemset(gd, 0, 8));
  CK(hipMemset(gmax, 0, 4));
  hipLaunchKernelGGL(k_atomics, dim3((n + 63) / 64), dim3(64), 0, 0, n, gi, gf,
                     g64, gd, gmax);
  int hi[8];
  float hf;
  unsigned long long h64;
  double hd;
  unsigned hmax;
  CK(hipMemcpy(hi, gi, 32, hipMemcpyDeviceToHost));
  CK(hipMemcpy(&hf, gf, 4, hipMemcpyDeviceToHost));
  CK(hipMemcpy(&h64, g64, 8, hipMemcpyDeviceToHost));
  CK(hipMemcpy(&hd, gd, 8, hipMemcpyDeviceToHost));
  CK(hipMemcpy(&hmax, gmax, 4, hipMemcpyDeviceToHost));
  hipFree(gi); hipFree(gf); hipFree(g64); hipFree(gd); hipFree(gmax);
  int wi[8] = {0};
  unsigned long long w64 = 0;
  unsigned wmax = 0;
  for (int i = 0; i < n; i++) {
    wi[i & 7] += i;
    w64 += (unsigned long long)i << 20;
    unsigned m = (unsigned)(i * 7919) % 10007u;
    if (m > wmax) wmax = m;
  }
  for (int k = 0; k < 8; k++)
    if (hi[k] != wi[k]) {
      snprintf(why, sizeof why, "shared int [%d] %d, want %d", k, hi[k], wi[k]);
      return false;
    }
  // Sums of 0.5 and 0.25 are exact in float/double at this size.
  if (hf != n * 0.5f) { snprintf(why, sizeof why, "float %g, want %g", hf, n * 0.5); return false; }
  if (h64 != w64) { snprintf(why, sizeof why, "u64 %llu, want %llu", h64, w64); return false; }
  if (hd != n * 0.25) { snprintf(why, sizeof why, "CAS double %g, want %g", hd, n * 0.25); return false; }
  if (hmax != wmax) { snprintf(why, sizeof why, "max %u, want %u", hmax, wmax); return false; }
  return true;
}

// ---- tiled matrix multiply --------------------------------------------------
#define TILE 16
__global__ void k_matmul(int m, int n, int k, const float *a, const float *b, float *c) {
  __shared__ float ta[TILE][TILE], tb[TILE][TILE];
  int r = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0;
  for (int t = 0; t < k; t += TILE) {
    ta[threadIdx.y][threadIdx.x] = (r < m && t + threadIdx.x < k) ? a[r * k + t + threadIdx.x] : 0;
    tb[threadIdx.y][threadIdx.x] = (col < n && t + threadIdx.y < k) ? b[(t + threadIdx.y) * n + col] : 0;
    __syncthreads();
    for (int j = 0; j < TILE; j++) acc += ta[threadIdx.y][j] * tb[j][threadIdx.x];
    __syncthreads();
  }
  if (r < m && col < n) c[r * n + col] = acc;
}

static bool t_matmul() {
  const int m = 37, n = 29, k = 41;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  // Small integers: every product and partial sum is exact in float.
  for (int i = 0; i < m * k; i++) a[i] = (float)((i * 5) % 11 - 5);
  for (int i = 0; i < k * n; i++) b[i] = (float)((i * 3) % 7 - 3);
  float *da, *db, *dc;
  CK(hipMalloc(&da, a.size() * 4));
  CK(hipMalloc(&db, b.size() * 4));
  CK(hipMalloc(&dc, c.size() * 4));
  CK(hipMemcpy(da, a.data(), a.size() * 4, hipMemcpyHostToDevice));
  CK(hipMemcpy(db, b.data(), b.size() * 4, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(k_matmul, dim3((n + TILE - 1) / TILE, (m + TILE - 1) / TILE),
                     dim3(TILE, TILE), 0, 0, m, n, k, da, db, dc);
  CK(hipMemcpy(c.data(), dc, c.size() * 4, hipMemcpyDeviceToHost));
  hipFree(da); hipFree(db); hipFree(dc);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float w = 0;
      for (int l = 0; l < k; l++) w += a[i * k + l] * b[l * n + j];
      if (c[i * n + j] != w) {
        snprintf(why, sizeof why, "c[%d][%d] = %g, want %g", i, j, c[i * n + j], w);
        return false;
      }
    }
  return true;
}

// ---- warp shuffles and votes (warpSize 64, or 32 on gfx11) -----------------
// 64 threads: one wave64, or two wave32s; every result is per warp.
__global__ void k_warp(int *o) {
  int t = threadIdx.x, ws = warpSize, lane = t % ws;
  int v = t * 3 + 1;
  int s = v;
  for (int d = ws / 2; d > 0; d >>= 1) s += __shfl_xor(s, d);
  o[t * 4 + 0] = s;
  o[t * 4 + 1] = __shfl(v, (lane * 5) & (ws - 1));
  o[t * 4 + 2] = __popcll(__ballot(t % 3 == 0));
  o[t * 4 + 3] = (__any(t == 17) ? 1 : 0) | (__all(t < 64) ? 2 : 0) | (ws << 2);
}

static int g_warp_size = 64;

static bool t_warp() {
  int *d;
  std::vector<int> o(256);
  CK(hipMalloc(&d, 1024));
  hipLaunchKernelGGL(k_warp, dim3(1), dim3(64), 0, 0, d);
  CK(hipMemcpy(o.data(), d, 1024, hipMemcpyDeviceToHost));
  hipFree(d);
  const int ws = g_warp_size;
  for (int t = 0; t < 64; t++) {
    int first = t / ws * ws, sum = 0, third = 0;
    for (int u = first; u < first + ws; u++) { sum += u * 3 + 1; third += u % 3 == 0; }
    int any = first <= 17 && 17 < first + ws;
    int w[4] = {sum, (first + ((t % ws * 5) & (ws - 1))) * 3 + 1, third, any | 2 | (ws << 2)};
    for (int j = 0; j < 4; j++)
      if (o[t * 4 + j] != w[j]) {
        snprintf(why, sizeof why, "lane %d item %d = %d, want %d", t, j, o[t * 4 + j], w[j]);
        return false;
      }
  }
  return true;
}

// ---- double and half precision, libm ----------------------------------------
__global__ void k_prec(int n, const double *x, double *od, float *of, __half *oh) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  od[i * 4 + 0] = v * v + 1.0 / (v + 3.0);
  od[i * 4 + 1] = sqrt(v + 5.0);
  od[i * 4 + 2] = exp(v * 0.1);
  od[i * 4 + 3] = sin(v);
  float f = (float)v;
  of[i * 4 + 0] = expf(f * 0.1f);
  of[i * 4 + 1] = logf(f + 5.5f);
  of[i * 4 + 2] = cosf(f);
  of[i * 4 + 3] = powf(f + 5.0f, 1.5f);
  __half h = __float2half(f);
  oh[i] = __hadd(__hmul(h, h), __float2half(0.5f));
}

static bool t_precision() {
  const int n = 201;
  std::vector<double> x(n), od(n * 4);
  std::vector<float> of(n * 4);
  std::vector<__half> oh(n);
  for (int i = 0; i < n; i++) x[i] = (i - 100) / 25.0;  // [-4, 4]
  double *dx, *dd;
  float *df;
  __half *dh;
  CK(hipMalloc(&dx, n * 8));
  CK(hipMalloc(&dd, n * 32));
  CK(hipMalloc(&df, n * 16));
  CK(hipMalloc(&dh, n * 2));
  CK(hipMemcpy(dx, x.data(), n * 8, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(k_prec, dim3((n + 63) / 64), dim3(64), 0, 0, n, dx, dd, df, dh);
  CK(hipMemcpy(od.data(), dd, n * 32, hipMemcpyDeviceToHost));
  CK(hipMemcpy(of.data(), df, n * 16, hipMemcpyDeviceToHost));
  CK(hipMemcpy(oh.data(), dh, n * 2, hipMemcpyDeviceToHost));
  hipFree(dx); hipFree(dd); hipFree(df); hipFree(dh);
  for (int i = 0; i < n; i++) {
    double v = x[i];
    // Double: the OCML functions are within 1 ULP (the quotient, sqrt
    // correctly rounded): 1e-14 relative is generous.
    double wd[4] = {v * v + 1.0 / (v + 3.0), sqrt(v + 5.0), exp(v * 0.1), sin(v)};
    for (int j = 0; j < 4; j++)
      if (!close_rel(wd[j], od[i * 4 + j], j == 3 ? 1e-13 : 1e-14)) {
        snprintf(why, sizeof why, "double x=%g item %d = %.17g, want %.17g", v, j, od[i * 4 + j], wd[j]);
        return false;
      }
    // Float libm: a few ULP (OCML documents <= 4 ULP for these): 4e-6
    // relative, 1e-6 absolute near the zeros of cos.
    float f = (float)v;
    double wf[4] = {exp(f * 0.1f), log(f + 5.5f), cos(f), pow(f + 5.0f, 1.5)};
    for (int j = 0; j < 4; j++)
      if (!close_rel(wf[j], of[i * 4 + j], 4e-6) && fabs(wf[j] - of[i * 4 + j]) > 1e-6) {
        snprintf(why, sizeof why, "float x=%g item %d = %.9g, want %.9g", v, j, of[i * 4 + j], wf[j]);
        return false;
      }
    // Half: h*h and +0.5 each rounded to half: within 2 half ULP (2^-10 rel).
    float hv = __half2float(__float2half(f));
    double wh = hv * hv + 0.5;
    double gh = __half2float(oh[i]);
    if (!close_rel(wh, gh, 2.0 / 1024)) {
      snprintf(why, sizeof why, "half x=%g = %g, want %g", v, gh, wh);
      return false;
    }
  }
  return true;
}

// ---- dynamic shared memory --------------------------------------------------
__global__ void k_dyn(int n, const int *x, int *o) {
  extern __shared__ int dyn[];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  dyn[t] = i < n ? x[i] : 0;
  __syncthreads();
  if (i < n) o[i] = dyn[blockDim.x - 1 - t] + t;
}

static bool t_dyn_shared() {
  const int n = 450, b = 96;
  std::vector<int> x(n), o(n + 4, (int)GUARD), w(n + 4, (int)GUARD);
  for (int i = 0; i < n; i++) x[i] = i * i - 7;
  for (int i = 0; i < n; i++) {
    int blk = i / b, t = i % b, src = blk * b + b - 1 - t;
    w[i] = (src < n ? x[src] : 0) + t;
  }
  int *dx, *d;
  CK(hipMalloc(&dx, n * 4));
  CK(hipMalloc(&d, (n + 4) * 4));
  CK(hipMemcpy(dx, x.data(), n * 4, hipMemcpyHostToDevice));
  CK(hipMemcpy(d, o.data(), (n + 4) * 4, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(k_dyn, dim3((n + b - 1) / b), dim3(b), b * 4, 0, n, dx, d);
  CK(hipMemcpy(o.data(), d, (n + 4) * 4, hipMemcpyDeviceToHost));
  hipFree(dx); hipFree(d);
  for (int i = 0; i < n + 4; i++)
    if (o[i] != w[i]) { snprintf(why, sizeof why, "o[%d] = %d, want %d", i, o[i], w[i]); return false; }
  return true;
}

// ---- 2-D / 3-D grids --------------------------------------------------------
__global__ void k_3d(int nx, int ny, int nz, unsigned *o) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < nx && y < ny && z < nz)
    o[(z * ny + y) * nx + x] = (x << 20) | (y << 10) | z;
}

static bool t_grid3d() {
  const int nx = 19, ny = 13, nz = 7, nn = nx * ny * nz;
  std::vector<unsigned> o(nn), w(nn);
  for (int z = 0; z < nz; z++)
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++) w[(z * ny + y) * nx + x] = (x << 20) | (y << 10) | z;
  unsigned *d;
  CK(hipMalloc(&d, nn * 4));
  CK(hipMemset(d, 0xff, nn * 4));
  hipLaunchKernelGGL(k_3d, dim3(3, 4, 3), dim3(8, 4, 3), 0, 0, nx, ny, nz, d);
  CK(hipMemcpy(o.data(), d, nn * 4, hipMemcpyDeviceToHost));
  hipFree(d);
  return check_u32("o", o, w);
}

// ---- divergent loops, private arrays (scratch), non-inlined calls -----------
__device__ __attribute__((noinline)) unsigned collatz(unsigned v) {
  unsigned steps = 0;
  while (v != 1) {
    v = (v & 1) ? 3 * v + 1 : v / 2;
    steps++;
  }
  return steps;
}

__global__ void k_diverge(int n, volatile int *idx, unsigned *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned priv[40];  // indexed by a loaded value: lives in scratch
  for (int j = 0; j < 40; j++) priv[j] = (unsigned)(i * j);
  unsigned s = priv[idx[i] % 40];
  o[i] = collatz((unsigned)i + 1) * 1000u + s % 1000u;
}

static unsigned h_collatz(unsigned v) {
  unsigned s = 0;
  while (v != 1) { v = (v & 1) ? 3 * v + 1 : v / 2; s++; }
  return s;
}

static bool t_divergent() {
  const int n = 300;
  std::vector<int> idx(n);
  std::vector<unsigned> o(n), w(n);
  for (int i = 0; i < n; i++) idx[i] = (i * 13 + 5) % 97;
  for (int i = 0; i < n; i++)
    w[i] = h_collatz(i + 1) * 1000u + ((unsigned)(i * (idx[i] % 40))) % 1000u;
  int *di;
  unsigned *d;
  CK(hipMalloc(&di, n * 4));
  CK(hipMalloc(&d, n * 4));
  CK(hipMemcpy(di, idx.data(), n * 4, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(k_diverge, dim3((n + 63) / 64), dim3(64), 0, 0, n, di, d);
  CK(hipMemcpy(o.data(), d, n * 4, hipMemcpyDeviceToHost));
  hipFree(di); hipFree(d);
  return check_u32("o", o, w);
}

// ---- matrix cores: MFMA (gfx9) ---------------------------------------------
// One wave: D(32x32) = A(32x2) * B(2x32) with v_mfma_f32_32x32x2f32.
// Lane l holds A[l%32][l/32] and B[l/32][l%32]; the result's lane l,
// register r holds D[8*(r/4) + 4*(l/32)... per the CDNA layout:
// row = (r/4)*8 + (l/32)*4 + r%4, column = l%32.
typedef float f32x16 __attribute__((ext_vector_type(16)));
__global__ void k_mfma(const float *a, const float *b, float *d) {
#if defined(__gfx90a__) || defined(__gfx942__)
  int l = threadIdx.x;
  float av = a[(l % 32) * 2 + l / 32];
  float bv = b[(l / 32) * 32 + l % 32];
  f32x16 acc = {0};
  acc = __builtin_amdgcn_mfma_f32_32x32x2f32(av, bv, acc, 0, 0, 0);
  for (int r = 0; r < 16; r++) {
    int row = (r / 4) * 8 + (l / 32) * 4 + r % 4;
    d[row * 32 + l % 32] = acc[r];
  }
#endif
}

static bool t_mfma() {
  std::vector<float> a(64), b(64), d(1024);
  for (int i = 0; i < 64; i++) { a[i] = (float)(i % 9 - 4); b[i] = (float)(i % 5 - 2); }
  float *da, *db, *dd;
  CK(hipMalloc(&da, 256));
  CK(hipMalloc(&db, 256));
  CK(hipMalloc(&dd, 4096));
  CK(hipMemcpy(da, a.data(), 256, hipMemcpyHostToDevice));
  CK(hipMemcpy(db, b.data(), 256, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(k_mfma, dim3(1), dim3(64), 0, 0, da, db, dd);
  CK(hipMemcpy(d.data(), dd, 4096, hipMemcpyDeviceToHost));
  hipFree(da); hipFree(db); hipFree(dd);
  for (int i = 0; i < 32; i++)
    for (int j = 0; j < 32; j++) {
      float w = a[i * 2] * b[j] + a[i * 2 + 1] * b[32 + j];  // exact
      if (d[i * 32 + j] != w) {
        snprintf(why, sizeof why, "D[%d][%d] = %g, want %g", i, j, d[i * 32 + j], w);
        return false;
      }
    }
  return true;
}

// ---- matrix cores: WMMA (gfx11, wave32) ------------------------------------
// 16x16x16 products, one wave32. Lane l holds row l%16 of A and column
// l%16 of B (all 16 k; lanes 16-31 repeat lanes 0-15); a 32-bit result's
// register r of lane l is D[2r + l/16][l%16], a 16-bit one's is the low
// half of register r. Four forms: f32 += f16*f16, f32 += bf16*bf16,
// i32 += i8*u8, f16 += f16*f16. Small integers keep every sum exact.
typedef _Float16 f16x16 __attribute__((ext_vector_type(16)));
typedef short i16x16 __attribute__((ext_vector_type(16)));
typedef float f32x8 __attribute__((ext_vector_type(8)));
typedef int i32x8 __attribute__((ext_vector_type(8)));
typedef int i32x4 __attribute__((ext_vector_type(4)));
__global__ void k_wmma(const signed char *a, const signed char *b, float *df16, float *dbf16,
                       int *di8, float *dh) {
#if defined(__GFX11__)
  int l = threadIdx.x, r16 = l % 16, hi = l / 16;
  f16x16 ah, bh;
  i16x16 abf, bbf;
  i32x4 a8, b8;
  for (int k = 0; k < 16; k++) {
    float av = a[r16 * 16 + k], bv = b[k * 16 + r16];
    ah[k] = (_Float16)av;
    bh[k] = (_Float16)bv;
    abf[k] = (short)(__float_as_uint(av) >> 16);
    bbf[k] = (short)(__float_as_uint(bv) >> 16);
  }
  for (int k = 0; k < 4; k++) {
    unsigned wa = 0, wb = 0;
    for (int j = 0; j < 4; j++) {
      wa |= (unsigned)(unsigned char)a[r16 * 16 + k * 4 + j] << (8 * j);
      wb |= (unsigned)(unsigned char)(b[(k * 4 + j) * 16 + r16] + 8) << (8 * j);
    }
    a8[k] = (int)wa;
    b8[k] = (int)wb;
  }
  f32x8 c1 = {0}, c2 = {0};
  i32x8 c3 = {0};
  f16x16 c4 = {0};
  for (int r = 0; r < 8; r++) {
    c1[r] = 1.0f;
    c3[r] = -100;
    c4[2 * r] = (_Float16)0.5f;
  }
  c1 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(ah, bh, c1);
  c2 = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(abf, bbf, c2);
  c3 = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(true, a8, false, b8, c3, false);
  c4 = __builtin_amdgcn_wmma_f16_16x16x16_f16_w32(ah, bh, c4, false);
  for (int r = 0; r < 8; r++) {
    int at = (2 * r + hi) * 16 + r16;
    df16[at] = c1[r];
    dbf16[at] = c2[r];
    di8[at] = c3[r];
    dh[at] = (float)c4[2 * r];
  }
#endif
}

static bool t_wmma() {
  std::vector<signed char> a(256), b(256);
  for (int i = 0; i < 256; i++) { a[i] = (signed char)(i % 7 - 3); b[i] = (signed char)(i % 5 - 2); }
  signed char *da, *db;
  float *d1, *d2, *d4;
  int *d3;
  CK(hipMalloc(&da, 256));
  CK(hipMalloc(&db, 256));
  CK(hipMalloc(&d1, 1024));
  CK(hipMalloc(&d2, 1024));
  CK(hipMalloc(&d3, 1024));
  CK(hipMalloc(&d4, 1024));
  CK(hipMemcpy(da, a.data(), 256, hipMemcpyHostToDevice));
  CK(hipMemcpy(db, b.data(), 256, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(k_wmma, dim3(1), dim3(32), 0, 0, da, db, d1, d2, d3, d4);
  std::vector<float> o1(256), o2(256), o4(256);
  std::vector<int> o3(256);
  CK(hipMemcpy(o1.data(), d1, 1024, hipMemcpyDeviceToHost));
  CK(hipMemcpy(o2.data(), d2, 1024, hipMemcpyDeviceToHost));
  CK(hipMemcpy(o3.data(), d3, 1024, hipMemcpyDeviceToHost));
  CK(hipMemcpy(o4.data(), d4, 1024, hipMemcpyDeviceToHost));
  hipFree(da); hipFree(db); hipFree(d1); hipFree(d2); hipFree(d3); hipFree(d4);
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      int s = 0, s8 = 0;
      for (int k = 0; k < 16; k++) {
        s += a[i * 16 + k] * b[k * 16 + j];
        s8 += a[i * 16 + k] * (b[k * 16 + j] + 8);
      }
      const int at = i * 16 + j;
      double got[4] = {o1[at], o2[at], (double)o3[at], o4[at]};
      double want[4] = {s + 1.0, (double)s, s8 - 100.0, s + 0.5};
      for (int f = 0; f < 4; f++)
        if (got[f] != want[f]) {
          snprintf(why, sizeof why, "form %d D[%d][%d] = %g, want %g", f, i, j, got[f], want[f]);
          return false;
        }
    }
  return true;
}

static bool g_gfx11 = false;

// The matrix-core test of the device's generation.
static bool t_matrix() { return g_gfx11 ? t_wmma() : t_mfma(); }

// ---- streams and events -----------------------------------------------------
__global__ void k_addk(int n, int k, int *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = o[i] * 2 + k;
}

static bool t_streams() {
  const int n = 333, ns = 3;
  hipStream_t s[ns];
  hipEvent_t e[ns];
  int *d[ns];
  std::vector<int> h(n);
  for (int j = 0; j < ns; j++) {
    CK(hipStreamCreate(&s[j]));
    CK(hipEventCreate(&e[j]));
    CK(hipMalloc(&d[j], n * 4));
    CK(hipMemsetAsync(d[j], 0, n * 4, s[j]));
  }
  for (int r = 0; r < 3; r++)
    for (int j = 0; j < ns; j++)
      hipLaunchKernelGGL(k_addk, dim3((n + 63) / 64), dim3(64), 0, s[j], n, j + r, d[j]);
  for (int j = 0; j < ns; j++) CK(hipEventRecord(e[j], s[j]));
  // Stream 0 waits for stream 2's work, then adds once more to d[2].
  CK(hipStreamWaitEvent(s[0], e[2], 0));
  hipLaunchKernelGGL(k_addk, dim3((n + 63) / 64), dim3(64), 0, s[0], n, 100, d[2]);
  CK(hipEventRecord(e[0], s[0]));
  CK(hipEventSynchronize(e[0]));
  bool ok = true;
  for (int j = 0; j < ns && ok; j++) {
    CK(hipStreamSynchronize(s[j]));
    CK(hipMemcpy(h.data(), d[j], n * 4, hipMemcpyDeviceToHost));
    int w = 0;
    for (int r = 0; r < 3; r++) w = w * 2 + j + r;
    if (j == 2) w = w * 2 + 100;
    for (int i = 0; i < n; i++)
      if (h[i] != w) {
        snprintf(why, sizeof why, "stream %d o[%d] = %d, want %d", j, i, h[i], w);
        ok = false;
        break;
      }
  }
  for (int j = 0; j < ns; j++) {
    hipFree(d[j]);
    hipEventDestroy(e[j]);
    hipStreamDestroy(s[j]);
  }
  return ok;
}

// ---- hipMemset and device-to-device hipMemcpy of odd sizes/offsets ----------
static bool t_memops() {
  const size_t n = 4099;
  std::vector<unsigned char> h(n), w(n), src(n);
  for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i * 31 + 7);
  unsigned char *a, *b;
  CK(hipMalloc(&a, n));
  CK(hipMalloc(&b, n));
  CK(hipMemcpy(a, src.data(), n, hipMemcpyHostToDevice));
  CK(hipMemset(b, 0x5a, n));
  CK(hipMemset(b + 3, 0xc3, 1001));
  CK(hipMemcpy(b + 1013, a + 7, 2049, hipMemcpyDeviceToDevice));
  CK(hipMemcpy(b + 4000, a + 1, 33, hipMemcpyDeviceToDevice));
  CK(hipMemcpy(h.data(), b, n, hipMemcpyDeviceToHost));
  hipFree(a); hipFree(b);
  memset(w.data(), 0x5a, n);
  memset(w.data() + 3, 0xc3, 1001);
  memcpy(w.data() + 1013, src.data() + 7, 2049);
  memcpy(w.data() + 4000, src.data() + 1, 33);
  for (size_t i = 0; i < n; i++)
    if (h[i] != w[i]) {
      snprintf(why, sizeof why, "byte %zu = %#x, want %#x", i, h[i], w[i]);
      return false;
    }
  return true;
}

int main() {
  hipDeviceProp_t prop;
  if (hipGetDeviceProperties(&prop, 0) != hipSuccess) {
    printf("FAIL properties: hipGetDeviceProperties\n");
    return 1;
  }
  g_warp_size = prop.warpSize;
  g_gfx11 = strncmp(prop.gcnArchName, "gfx11", 5) == 0;
  printf("device 0: %s, warp size %d\n", prop.gcnArchName, g_warp_size);
  struct { const char *name; bool (*f)(); } tests[] = {
      {"elementwise", t_elementwise}, {"grid_stride", t_grid_stride},
      {"millions", t_millions},       {"reduce_shared", t_reduce},
      {"atomics", t_atomics},         {"matmul_tiled", t_matmul},
      {"warp_shuffle_vote", t_warp},  {"precision_libm", t_precision},
      {"dynamic_shared", t_dyn_shared}, {"grid_3d", t_grid3d},
      {"divergent_scratch_call", t_divergent},
      {g_gfx11 ? "wmma" : "mfma", t_matrix},
      {"streams_events", t_streams},  {"memset_memcpy_d2d", t_memops},
  };
  for (auto &t : tests) {
    why[0] = 0;
    bool ok = t.f();
    if (!ok) (void)hipGetLastError();  // clear a sticky launch error
    report(t.name, ok);
  }
  printf("kernels: %d passed, %d failed\n", g_pass, g_fail);
  if (g_fail == 0) printf("ALL OK\n");
  return g_fail == 0 ? 0 : 1;
}
