// Kernels of linalg's GPU covariance and second moment (gpu_gram.go).
// Compiled at run time by NVRTC; entry points are extern "C".
//
// Data are channel-major: channel c of a window is the row x[c*ld + c0 ...],
// n samples long. Deterministic: no atomics, every sum in a fixed order.

// row_means writes mean[c] = (1/n) sum_t x[c*ld + c0 + t] in double, one
// block of exactly 256 threads per channel: each thread sums a strided
// subset, then a fixed tree reduction.
template <typename T>
__device__ void row_means(double* __restrict__ mean, const T* __restrict__ x,
                          long long ld, long long c0, int n) {
    __shared__ double sh[256];
    const int c = blockIdx.x;
    const T* row = x + (long long)c * ld + c0;
    double s = 0.0;
    for (int t = threadIdx.x; t < n; t += 256) s += (double)row[t];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) mean[c] = sh[0] / (double)n;
}

extern "C" __global__ void row_means_f32(double* mean, const float* x, long long ld, long long c0, int n) {
    row_means<float>(mean, x, ld, c0, n);
}
extern "C" __global__ void row_means_f64(double* mean, const double* x, long long ld, long long c0, int n) {
    row_means<double>(mean, x, ld, c0, n);
}

// pack copies columns [c0, c0+n) of every channel into the split-major
// buffer dst [S][C][W]: sample t of channel c goes to split s = t / W at
// dst[(s*C + c)*W + t%W]. Samples t in [n, S*W) are written as zero, so the
// last split is zero-padded. When mean is not null the channel mean is
// subtracted in double before rounding to the output type. With S = 1 and
// W = the padded row length this is a plain contiguous copy [C][W].
// Grid: (x: chunks of samples, y: channel); any block size.
template <typename TI, typename TO>
__device__ void pack(TO* __restrict__ dst, const TI* __restrict__ x, const double* __restrict__ mean,
                     int C, long long ld, long long c0, int n, int W, int S) {
    const int c = blockIdx.y;
    const double m = mean != nullptr ? mean[c] : 0.0;
    const TI* row = x + (long long)c * ld + c0;
    const int total = S * W;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        const int s = t / W;
        const int u = t - s * W;
        TO v = TO(0);
        if (t < n) v = mean != nullptr ? TO((double)row[t] - m) : TO(row[t]);
        dst[((long long)s * C + c) * W + u] = v;
    }
}

extern "C" __global__ void pack_f32(float* dst, const float* x, const double* mean,
                                    int C, long long ld, long long c0, int n, int W, int S) {
    pack<float, float>(dst, x, mean, C, ld, c0, n, W, S);
}
extern "C" __global__ void pack_f64(double* dst, const double* x, const double* mean,
                                    int C, long long ld, long long c0, int n, int W, int S) {
    pack<double, double>(dst, x, mean, C, ld, c0, n, W, S);
}
// pack_f32_f64 widens float32 samples to double (centring in double).
extern "C" __global__ void pack_f32_f64(double* dst, const float* x, const double* mean,
                                        int C, long long ld, long long c0, int n, int W, int S) {
    pack<float, double>(dst, x, mean, C, ld, c0, n, W, S);
}

// finish writes the row-major C×C result
//   out[r*C + c] = alpha * sum_{s=0}^{S-1} P_s(min(r,c), max(r,c)) (+ beta*out)
// from S column-major C×C slices P_s at P + s*stride, summing in double in
// the fixed order s = 0, 1, …. Only the upper triangle of each slice
// (element (i, j), i <= j, at j*C + i) is read, so a SYRK result with its
// lower triangle unwritten works and the output is exactly symmetric. With
// beta == 0 the old output is not read (it may be NaN).
template <typename T>
__device__ void finish(double* __restrict__ out, const T* __restrict__ P, int C, int S,
                       long long stride, double alpha, double beta) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= C * C) return;
    const int r = idx / C;
    const int c = idx - r * C;
    const int lo = r < c ? r : c;
    const int hi = r < c ? c : r;
    const long long k = (long long)hi * C + lo;
    double s = 0.0;
    for (int i = 0; i < S; i++) s += (double)P[(long long)i * stride + k];
    double v = alpha * s;
    if (beta != 0.0) v += beta * out[idx];
    out[idx] = v;
}

extern "C" __global__ void finish_f32(double* out, const float* P, int C, int S, long long stride,
                                      double alpha, double beta) {
    finish<float>(out, P, C, S, stride, alpha, beta);
}
extern "C" __global__ void finish_f64(double* out, const double* P, int C, int S, long long stride,
                                      double alpha, double beta) {
    finish<double>(out, P, C, S, stride, alpha, beta);
}

// tiles writes the upper triangle of X Xᵀ, split over the samples, for
// GramTiles: S column-major C×C slices P_s at P + s*C*C, slice s holding
// sum over t in [s*K, min(n, (s+1)*K)) of x_i(t)·x_j(t) for i <= j (at
// j*C + i; the diagonal tiles also write some of the lower triangle, which
// finish does not read). x is channel-major: channel c at
// x[c*ld + c0 + t]. Each block of 16×16 threads forms one 64×64 tile of
// the upper triangle (blockIdx.x counts them row by row) over one split
// (blockIdx.y); each thread keeps 4×4 sums, rows ty + 16a and columns
// tx + 16b of the tile. Every sum runs over t in increasing order with
// fused multiply-adds, whatever the device, so the result depends only on
// the data, n and K; float32 samples widened to double multiply exactly.
#define GT_TILE 64
#define GT_KC 16
template <typename T>
__device__ void tiles(double* __restrict__ P, const T* __restrict__ x, long long ld, long long c0,
                      int C, int n, int K) {
    __shared__ double A[GT_KC][GT_TILE + 1];
    __shared__ double B[GT_KC][GT_TILE + 1];
    // Tile (ti, tj), ti <= tj, from the row-by-row count of the upper
    // triangle of the T×T tile grid.
    const int nt = (C + GT_TILE - 1) / GT_TILE;
    int ti = 0, rem = blockIdx.x;
    while (rem >= nt - ti) {
        rem -= nt - ti;
        ti++;
    }
    const int tj = ti + rem;
    const int s = blockIdx.y;
    const int t0 = s * K;
    const int t1 = min(n, t0 + K);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * 16 + tx;
    const int r0 = ti * GT_TILE, q0 = tj * GT_TILE;
    double acc[4][4];
#pragma unroll
    for (int a = 0; a < 4; a++)
#pragma unroll
        for (int b = 0; b < 4; b++) acc[a][b] = 0.0;
    for (int t = t0; t < t1; t += GT_KC) {
        // 64 rows × 16 samples of each operand: thread tid loads samples
        // kk = tid % 16 of rows tid/16 + 16m (consecutive threads read
        // consecutive samples of a row).
        const int kk = tid % GT_KC;
        const int tt = t + kk;
#pragma unroll
        for (int m = 0; m < 4; m++) {
            const int r = tid / GT_KC + 16 * m;
            double va = 0.0, vb = 0.0;
            if (tt < t1) {
                if (r0 + r < C) va = (double)x[(long long)(r0 + r) * ld + c0 + tt];
                if (q0 + r < C) vb = (double)x[(long long)(q0 + r) * ld + c0 + tt];
            }
            A[kk][r] = va;
            B[kk][r] = vb;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < GT_KC; k++) {
            double a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                a[i] = A[k][ty + 16 * i];
                b[i] = B[k][tx + 16 * i];
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    double* out = P + (long long)s * C * C;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int r = r0 + ty + 16 * i;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int q = q0 + tx + 16 * j;
            if (r < C && q < C) out[(long long)q * C + r] = acc[i][j];
        }
    }
}

extern "C" __global__ void __launch_bounds__(256) tiles_f32(double* P, const float* x, long long ld, long long c0,
                                                            int C, int n, int K) {
    tiles<float>(P, x, ld, c0, C, n, K);
}
extern "C" __global__ void __launch_bounds__(256) tiles_f64(double* P, const double* x, long long ld, long long c0,
                                                            int C, int n, int K) {
    tiles<double>(P, x, ld, c0, C, n, K);
}
