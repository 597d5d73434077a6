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
