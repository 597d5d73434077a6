// Kernels of package motion: histogram binning on the device, the
// registration scores, and nothing else (the correction is a cuBLAS SGEMM).

__device__ __forceinline__ int pmod(int a, int n) {
    a %= n;
    return a < 0 ? a + n : a;
}

// upper returns the number of edges[0..n) that are <= v (edges ascending).
__device__ __forceinline__ int upper(const float* edges, int n, float v) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int m = (lo + hi) >> 1;
        if (edges[m] <= v) lo = m + 1; else hi = m;
    }
    return lo;
}

// bin adds min(*count, cap) spikes (depth y[i], amplitude amp[i]) to the
// window's histogram hist [rows][20] (uint32 counts). A spike's row is the
// number of rowEdge[0..rows-1) at or below its depth and its column the
// number of ampEdge[0..19) at or below its amplitude: the edges are the
// smallest float32 values of each bin as the CPU computes them, so both
// back ends bin every float32 alike. Non-finite spikes are counted in
// *bad and skipped; the spikes binned are added to *spikes.
extern "C" __global__ void bin(const float* __restrict__ y, const float* __restrict__ amp,
                               const int* __restrict__ count, int cap,
                               const float* __restrict__ rowEdge, int rows,
                               const float* __restrict__ ampEdge,
                               unsigned int* __restrict__ hist, int* __restrict__ spikes,
                               int* __restrict__ bad) {
    int n = min(*count, cap);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) atomicAdd(spikes, n);
    if (i >= n) return;
    float v = y[i], a = amp[i];
    if (!isfinite(v) || !isfinite(a)) {
        atomicAdd(bad, 1);
        return;
    }
    int r = upper(rowEdge, rows - 1, v);
    int c = upper(ampEdge, 19, a);
    atomicAdd(&hist[r * 20 + c], 1u);
}

// scores computes, for window t = blockIdx.x, shift s = blockIdx.y - smax
// and block j = blockIdx.z (rows [starts[j], starts[j]+l)), the mean over
// the block's cells of G[t] rolled by S[t] over all rows and by s inside
// the block, times R; out[(j*(2smax+1) + s+smax)*nb + t]. float64, one
// block of SCORE_THREADS threads per score, in the fixed order that the
// CPU scorer repeats bit for bit (scoreLanes in ../estimate.go): thread q
// sums cells q, q + SCORE_THREADS, ... in increasing order, each product
// rounded then added (__dmul_rn and __dadd_rn: NVRTC's default --fmad
// would otherwise fuse them into FMAs, which the CPU does not do), then the
// threads' sums are added by a fixed pairwise tree and the total divided
// by the cell count (float64 division is IEEE-rounded). No atomics: the
// result does not depend on scheduling.
extern "C" __global__ void __launch_bounds__(SCORE_THREADS)
scores(const double* __restrict__ G, const double* __restrict__ R,
       const int* __restrict__ S, const int* __restrict__ starts,
       int nb, int rows, int l, int smax, double* __restrict__ out) {
    __shared__ double red[SCORE_THREADS];
    int t = blockIdx.x, si = blockIdx.y, j = blockIdx.z;
    int s = si - smax, b = starts[j], st = S[t];
    const double* h = G + (size_t)t * rows * 20;
    double sum = 0;
    for (int i = threadIdx.x; i < l * 20; i += SCORE_THREADS) {
        int rr = i / 20, k = i - rr * 20;
        int src = pmod(b + pmod(rr - s, l) - st, rows);
        sum = __dadd_rn(sum, __dmul_rn(h[src * 20 + k], R[(b + rr) * 20 + k]));
    }
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int o = SCORE_THREADS / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) red[threadIdx.x] = __dadd_rn(red[threadIdx.x], red[threadIdx.x + o]);
        __syncthreads();
    }
    if (threadIdx.x == 0) out[((size_t)j * (2 * smax + 1) + si) * nb + t] = red[0] / (double)(l * 20);
}
