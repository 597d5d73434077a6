// Kernels of preprocess's GPU path (gpu.go): Kilosort4's per-window
// preprocessing (kilosort4.md §4). Compiled at run time by NVRTC; entry
// points are extern "C". No headers: NVRTC provides the device builtins.
//
// Layouts. The raw window is int16 interleaved as stored, raw[t*cf + r]
// for t in [0, T) and file row r in [0, cf). Everything after the
// reference stage is float32 channel-major, x[c*T + t] for the C mapped
// channels. Deterministic: integer sums are exact whatever the order, and
// every float sum runs in a fixed order.

#define FULL_MASK 0xffffffffu

__device__ __forceinline__ int pp_imin(int a, int b) { return a < b ? a : b; }

// ---------------------------------------------------------------------------
// Channel sums.
//
// chan_sums adds the samples of mapped channel i over the rows
// [blockIdx.x*rows, +rows) of the window into sum[i], an int64 (as
// unsigned long long, two's complement) that must be zero beforehand.
// Grid (ceil(T/rows), ceil(C/blockDim.x)); rows <= 65536 keeps the int
// partial sum exact.
extern "C" __global__ void chan_sums(unsigned long long* __restrict__ sum, const short* __restrict__ raw,
                                     const int* __restrict__ map, int C, int cf, int T, int rows) {
    const int i = blockIdx.y * blockDim.x + threadIdx.x;
    if (i >= C) return;
    const int r0 = blockIdx.x * rows;
    const int r1 = pp_imin(r0 + rows, T);
    const short* p = raw + (long long)r0 * cf + map[i];
    int acc = 0;
#pragma unroll 8
    for (int t = r0; t < r1; ++t) {
        acc += __ldg(p);
        p += cf;
    }
    atomicAdd(&sum[i], (unsigned long long)(long long)acc);
}

// ---------------------------------------------------------------------------
// Reference stage: selection, sign, mean removal and the lower-median CAR.

// fkey maps a float to an unsigned key with the same order (for non-NaN
// values; -0 sorts just below +0).
__device__ __forceinline__ unsigned fkey(float f) {
    const unsigned u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// funkey inverts fkey.
__device__ __forceinline__ float funkey(unsigned k) {
    return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

// CAR_TILE is the number of time columns of one block of car_q*.
#define CAR_TILE 32

// car converts, centres and (if doCAR) references the CAR_TILE time
// columns [blockIdx.x*CAR_TILE, +CAR_TILE) of the window into
// out[c*T + t]:
//
//   v_c = sign*raw[t*cf + map[c]] - mean_c   (float32, mean_c = float32(sign*sum_c/T))
//   out = v_c - median_c'(v_c')              (lower median, rank (C-1)/2)
//
// One warp per column at a time; lane l holds channels l, l+32, … (Q of
// them, C <= 32*Q). The lower median is found exactly by building its
// order-preserving key bit by bit from the top: bit b is set when fewer
// than rank+1 values have keys below the prefix with bit b set, each
// count one warp reduction. The block's columns are staged in dynamic
// shared memory [C][CAR_TILE+1] and written out row by row (coalesced).
// Block: any multiple of 32 threads; dynamic shared C*(CAR_TILE+1)*4 bytes.
template <int Q>
__device__ void car(float* __restrict__ out, const short* __restrict__ raw, const int* __restrict__ map,
                    const unsigned long long* __restrict__ sum, int C, int cf, int T, int invert, int doCAR) {
    extern __shared__ float smem[];
    float* tile = smem; // [C][CAR_TILE+1]
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const int t0 = blockIdx.x * CAR_TILE;
    const float sign = invert ? -1.0f : 1.0f;
    int row[Q];
    float mean[Q];
#pragma unroll
    for (int q = 0; q < Q; ++q) {
        const int i = lane + 32 * q;
        row[q] = 0;
        mean[q] = 0.0f;
        if (i < C) {
            row[q] = map[i];
            double m = (double)(long long)sum[i] / (double)T;
            if (invert) m = -m;
            mean[q] = (float)m;
        }
    }
    const int rank = (C - 1) / 2;
    for (int col = warp; col < CAR_TILE; col += nw) {
        const int t = t0 + col;
        if (t >= T) break; // the same for the whole warp
        const short* src = raw + (long long)t * cf;
        float v[Q];
        unsigned key[Q];
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int i = lane + 32 * q;
            v[q] = 0.0f;
            key[q] = 0xffffffffu; // above every finite key: never counted
            if (i < C) {
                v[q] = sign * (float)src[row[q]] - mean[q];
                key[q] = fkey(v[q]);
            }
        }
        float med = 0.0f;
        if (doCAR) {
            unsigned P = 0;
            for (int b = 31; b >= 0; --b) {
                const unsigned cand = P | (1u << b);
                unsigned cnt = 0;
#pragma unroll
                for (int q = 0; q < Q; ++q) cnt += key[q] < cand ? 1u : 0u;
                if (__reduce_add_sync(FULL_MASK, cnt) <= (unsigned)rank) P = cand;
            }
            med = funkey(P);
        }
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int i = lane + 32 * q;
            if (i < C) tile[i * (CAR_TILE + 1) + col] = v[q] - med;
        }
    }
    __syncthreads();
    const int t = t0 + lane;
    if (t < T) {
        for (int i = warp; i < C; i += nw) out[(long long)i * T + t] = tile[i * (CAR_TILE + 1) + lane];
    }
}

#define CAR_ENTRY(Q)                                                                                       \
    extern "C" __global__ void car_q##Q(float* out, const short* raw, const int* map,                      \
                                        const unsigned long long* sum, int C, int cf, int T, int invert,   \
                                        int doCAR) {                                                       \
        car<Q>(out, raw, map, sum, C, cf, T, invert, doCAR);                                               \
    }
CAR_ENTRY(1)
CAR_ENTRY(2)
CAR_ENTRY(4)
CAR_ENTRY(8)
CAR_ENTRY(12)
CAR_ENTRY(16)
CAR_ENTRY(24)
CAR_ENTRY(32)

// ---------------------------------------------------------------------------
// High-pass, fast path: the Butterworth cascade run forward, then backward,
// over each row taken as periodic, in float64, in chunks with a warm-up.
//
// A row of n samples is cut into chunks of L (the last one shorter). For
// chunk j, owning positions [a, a+len) with a = j*L, one pass runs the
// cascade from zero state over W + len steps: forward over positions
// a-W … a+len-1, backward over a+len-1+W … a, positions taken modulo n
// (W <= n), and writes the last len outputs. The neglected start-up
// transient is below the impulse response's tail beyond W (gpu.go picks
// W for 1e-10 of its absolute sum). The forward pass writes float32 into
// a scratch row; the backward pass reads it and writes gain*y.
//
// One warp per (chunk, group of 32 channels): lane l runs channel
// 32*group + l, so the warp walks 32 rows in step. Inputs and outputs go
// through a per-warp shared tile [32][33] so that global accesses are
// whole rows of 32 consecutive samples. coef holds the NS sections as
// (b0, b1, b2, a1, a2), a first-order section having b2 = a2 = 0.
#define HP_WARPS 4

template <int NS, bool BWD>
__device__ void hp_pass(float* __restrict__ dst, const float* __restrict__ src, const double* __restrict__ coef,
                        int C, int n, int L, int W, int nchunk, int ngroup, double gain) {
    __shared__ float tiles[HP_WARPS][32][33];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int gw = blockIdx.x * HP_WARPS + warp;
    if (gw >= nchunk * ngroup) return; // the whole warp
    const int j = gw / ngroup, g = gw - j * ngroup;
    float(*tile)[33] = tiles[warp];
    const int a = j * L;
    const int len = pp_imin(L, n - a);
    const int steps = W + len;
    // Position of step s: forward a-W+s, backward a+len-1+W-s.
    const int p0 = BWD ? a + len - 1 + W : a - W;
    const int dir = BWD ? -1 : 1;

    double b0[NS], b1[NS], b2[NS], a1[NS], a2[NS];
    double x1[NS], x2[NS], y1[NS], y2[NS];
#pragma unroll
    for (int q = 0; q < NS; ++q) {
        b0[q] = coef[5 * q];
        b1[q] = coef[5 * q + 1];
        b2[q] = coef[5 * q + 2];
        a1[q] = coef[5 * q + 3];
        a2[q] = coef[5 * q + 4];
        x1[q] = x2[q] = y1[q] = y2[q] = 0.0;
    }
    for (int s0 = 0; s0 < steps; s0 += 32) {
        const int cnt = pp_imin(32, steps - s0);
        // Load: row m of the tile is channel 32*g+m, lane = step.
        {
            int p = p0 + dir * (s0 + lane);
            if (p < 0) p += n;
            if (p >= n) p -= n;
            for (int m = 0; m < 32; ++m) {
                const int c = 32 * g + m;
                float v = 0.0f;
                if (c < C && lane < cnt) v = src[(long long)c * n + p];
                tile[m][lane] = v;
            }
        }
        __syncwarp();
        // Run: lane = channel, along its row of the tile.
        for (int k = 0; k < cnt; ++k) {
            double v = (double)tile[lane][k];
#pragma unroll
            for (int q = 0; q < NS; ++q) {
                const double t = b0[q] * v + b1[q] * x1[q] + b2[q] * x2[q] - a2[q] * y2[q];
                const double y = t - a1[q] * y1[q];
                x2[q] = x1[q];
                x1[q] = v;
                y2[q] = y1[q];
                y1[q] = y;
                v = y;
            }
            tile[lane][k] = BWD ? (float)(gain * v) : (float)v;
        }
        __syncwarp();
        // Store the steps past the warm-up.
        {
            const int s = s0 + lane;
            if (lane < cnt && s >= W) {
                const int p = p0 + dir * s; // in [a, a+len)
                for (int m = 0; m < 32; ++m) {
                    const int c = 32 * g + m;
                    if (c < C) dst[(long long)c * n + p] = tile[m][lane];
                }
            }
        }
        __syncwarp();
    }
}

#define HP_ENTRY(NS)                                                                                         \
    extern "C" __global__ void hp_fwd_##NS(float* dst, const float* src, const double* coef, int C, int n,   \
                                           int L, int W, int nchunk, int ngroup, double gain) {              \
        hp_pass<NS, false>(dst, src, coef, C, n, L, W, nchunk, ngroup, gain);                                \
    }                                                                                                        \
    extern "C" __global__ void hp_bwd_##NS(float* dst, const float* src, const double* coef, int C, int n,   \
                                           int L, int W, int nchunk, int ngroup, double gain) {              \
        hp_pass<NS, true>(dst, src, coef, C, n, L, W, nchunk, ngroup, gain);                                 \
    }
HP_ENTRY(1)
HP_ENTRY(2)
HP_ENTRY(3)
HP_ENTRY(4)
HP_ENTRY(5)
HP_ENTRY(6)
HP_ENTRY(7)
HP_ENTRY(8)

// ---------------------------------------------------------------------------
// High-pass, direct path (short windows, where Kilosort4's cropped taps
// matter): the circular correlation written out,
//
//   dst[c*n + m] = sum_i h[i] * src[c*n + (m + i - n/2) mod n],
//
// accumulated in float64 in the order i = 0, 1, …. One block of threads
// per (range of outputs, channel); the row is staged in dynamic shared
// memory (n floats). Grid (ceil(n/blockDim.x), C).
extern "C" __global__ void hp_direct(float* __restrict__ dst, const float* __restrict__ src,
                                     const double* __restrict__ h, int n) {
    extern __shared__ float smem[];
    float* row = smem;
    const long long c = blockIdx.y;
    for (int i = threadIdx.x; i < n; i += blockDim.x) row[i] = src[c * n + i];
    __syncthreads();
    const int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= n) return;
    int idx = m - n / 2;
    if (idx < 0) idx += n;
    double acc = 0.0;
    for (int i = 0; i < n; ++i) {
        acc += h[i] * (double)row[idx];
        if (++idx == n) idx = 0;
    }
    dst[c * n + m] = (float)acc;
}

// ---------------------------------------------------------------------------
// Whitening with a sparse operator of K entries per row:
//
//   dst[c*T + t] = sum_k val[c*K+k] * src[idx[c*K+k]*T + t]
//
// in float32, each product rounded and then added in the order k = 0, 1, …
// (no fused multiply-add), exactly as linalg.Whitening.Apply. One block per
// WHITE_TILE columns: the columns of every channel are staged in dynamic
// shared memory [C][WHITE_TILE], then warp w forms output rows w, w+nw, …,
// lane = column. Block: any multiple of 32 threads; dynamic shared
// C*WHITE_TILE*4 bytes.
#define WHITE_TILE 32

extern "C" __global__ void whiten(float* __restrict__ dst, const float* __restrict__ src,
                                  const int* __restrict__ idx, const float* __restrict__ val, int C, int K, int T) {
    extern __shared__ float smem[];
    float* tile = smem; // [C][WHITE_TILE]
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const int t = blockIdx.x * WHITE_TILE + lane;
    const bool ok = t < T;
    for (int i = warp; i < C; i += nw) tile[i * WHITE_TILE + lane] = ok ? src[(long long)i * T + t] : 0.0f;
    __syncthreads();
    for (int c = warp; c < C; c += nw) {
        const int* ix = idx + (long long)c * K;
        const float* w = val + (long long)c * K;
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc = __fadd_rn(acc, __fmul_rn(__ldg(w + k), tile[__ldg(ix + k) * WHITE_TILE + lane]));
        if (ok) dst[(long long)c * T + t] = acc;
    }
}
