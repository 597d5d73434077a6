// Kernels of preprocess's GPU path (gpu_preprocess.go): Kilosort4's per-window
// preprocessing (kilosort4.md §4). Compiled at run time by NVRTC; entry
// points are extern "C". No headers: NVRTC provides the device builtins.
//
// Layouts. The raw window is int16 interleaved as stored, raw[t*cf + r]
// for t in [0, T) and file row r in [0, cf). Everything after the
// reference stage is float32 channel-major, x[c*T + t] for the C mapped
// channels. Deterministic: integer sums are exact whatever the order, and
// every float sum runs in a fixed order.
//
// The shape-dependent kernels are instantiated for one configuration per
// module, chosen with -D options:
//   CAR_Q, CAR_CPW, CAR_BITS  the CAR kernel "car" (see car below), and
//   CAR_THREADS, CAR_MINB     its block size and the blocks per SM its
//                             registers must allow;
//   HP_NB, HP_ODD             the high-pass kernels "hp_fwd", "hp_bwd";
//   WHITE_NCOL                the whitening kernel "whiten".

#define FULL_MASK 0xffffffffu

__device__ __forceinline__ int pp_imin(int a, int b) { return a < b ? a : b; }

// ---------------------------------------------------------------------------
// Channel sums and means.
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

// chan_means writes mean[i] = float32(±sum[i]/T), the sign flipped if
// invert, in float64 as the CPU does. Any 1-D launch covering C threads.
extern "C" __global__ void chan_means(float* __restrict__ mean, const unsigned long long* __restrict__ sum, int C,
                                      int T, int invert) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= C) return;
    double m = (double)(long long)sum[i] / (double)T;
    if (invert) m = -m;
    mean[i] = (float)m;
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

// count_below returns how many of the Q keys are below cand, summed in
// four independent partial counts.
template <int Q>
__device__ __forceinline__ unsigned count_below(const unsigned (&key)[Q], unsigned cand) {
    unsigned c[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int q = 0; q < Q; ++q) c[q & 3] += key[q] < cand ? 1u : 0u;
    return (c[0] + c[1]) + (c[2] + c[3]);
}

// count_below3 returns, packed in 10-bit fields (the last 12 bits), how
// many of the Q keys are below base+1·step, base+2·step and base+3·step.
template <int Q>
__device__ __forceinline__ unsigned count_below3(const unsigned (&key)[Q], unsigned c1, unsigned c2, unsigned c3) {
    unsigned c[2] = {0u, 0u};
#pragma unroll
    for (int q = 0; q < Q; ++q) {
        const unsigned k = key[q];
        c[q & 1] += (k < c1 ? 1u : 0u) + (k < c2 ? 1024u : 0u) + (k < c3 ? 1048576u : 0u);
    }
    return c[0] + c[1];
}

// CAR_TILE is the number of time columns of one block of car.
#define CAR_TILE 32

// car converts, centres and (if doCAR) references the CAR_TILE time
// columns [blockIdx.x*CAR_TILE, +CAR_TILE) of the window into
// out[c*T + t]:
//
//   v_c = sign*raw[t*cf + map[c]] - mean[c]   (float32)
//   out = v_c - median_c'(v_c')               (lower median, rank (C-1)/2)
//
// A warp takes CPW columns at a time; lane l holds channels l, l+32, …
// (Q of them, C <= 32*Q). The lower median is found exactly by building
// its order-preserving key from the top, BITS bits per warp reduction:
// with BITS = 1, bit b is set when at most rank keys lie below the prefix
// with bit b set; with BITS = 2 the next two bits are the number of the
// three candidates prefix+1,2,3·2^b with at most rank keys below (the
// three counts packed in one reduction: C <= 1023). The block's columns
// are staged in dynamic shared memory [C][CAR_TILE+1] and written out row
// by row (coalesced). Block: a multiple of 32 threads; dynamic shared
// C*(CAR_TILE+1)*4 bytes.
template <int Q, int CPW, int BITS>
__device__ void car(float* __restrict__ out, const short* __restrict__ raw, const int* __restrict__ map,
                    const float* __restrict__ means, int C, int cf, int T, int invert, int doCAR) {
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
        row[q] = i < C ? map[i] : 0;
        mean[q] = i < C ? means[i] : 0.0f;
    }
    const unsigned rank = (unsigned)(C - 1) / 2;
    for (int col0 = warp * CPW; col0 < CAR_TILE; col0 += nw * CPW) {
        if (t0 + col0 >= T) break; // the same for the whole warp
        unsigned key[CPW][Q]; // the values' keys; funkey gives each value back

#pragma unroll
        for (int j = 0; j < CPW; ++j) {
            const int t = pp_imin(t0 + col0 + j, T - 1); // a column past T is computed, not stored
            const short* src = raw + (long long)t * cf;
#pragma unroll
            for (int q = 0; q < Q; ++q) {
                const int i = lane + 32 * q;
                key[j][q] = 0xffffffffu; // above every finite key: never counted
                if (i < C) key[j][q] = fkey(sign * (float)src[row[q]] - mean[q]);
            }
        }
        float med[CPW];
#pragma unroll
        for (int j = 0; j < CPW; ++j) med[j] = 0.0f;
        if (doCAR) {
            unsigned P[CPW];
#pragma unroll
            for (int j = 0; j < CPW; ++j) P[j] = 0u;
            if constexpr (BITS == 1) {
                for (int b = 31; b >= 0; --b) {
#pragma unroll
                    for (int j = 0; j < CPW; ++j) {
                        const unsigned cand = P[j] | (1u << b);
                        if (__reduce_add_sync(FULL_MASK, count_below<Q>(key[j], cand)) <= rank) P[j] = cand;
                    }
                }
            } else {
                for (int b = 30; b >= 0; b -= 2) {
#pragma unroll
                    for (int j = 0; j < CPW; ++j) {
                        const unsigned s = 1u << b;
                        const unsigned n = __reduce_add_sync(FULL_MASK, count_below3<Q>(key[j], P[j] | s, P[j] | (2u * s), P[j] | (3u * s)));
                        const unsigned d = ((n & 1023u) <= rank ? 1u : 0u) + (((n >> 10) & 1023u) <= rank ? 1u : 0u) +
                                           ((n >> 20) <= rank ? 1u : 0u);
                        P[j] |= d << b;
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < CPW; ++j) med[j] = funkey(P[j]);
        }
#pragma unroll
        for (int j = 0; j < CPW; ++j) {
            const int col = col0 + j;
            if (t0 + col < T) {
#pragma unroll
                for (int q = 0; q < Q; ++q) {
                    const int i = lane + 32 * q;
                    if (i < C) tile[i * (CAR_TILE + 1) + col] = funkey(key[j][q]) - med[j];
                }
            }
        }
    }
    __syncthreads();
    const int t = t0 + lane;
    if (t < T) {
        for (int i = warp; i < C; i += nw) out[(long long)i * T + t] = tile[i * (CAR_TILE + 1) + lane];
    }
}

#ifdef CAR_Q
extern "C" __global__ void __launch_bounds__(CAR_THREADS, CAR_MINB) car_entry(float* out, const short* raw, const int* map, const float* means, int C, int cf,
                                     int T, int invert, int doCAR) {
    car<CAR_Q, CAR_CPW, CAR_BITS>(out, raw, map, means, C, cf, T, invert, doCAR);
}
#endif

// ---------------------------------------------------------------------------
// High-pass, fast path: the Butterworth cascade run forward, then backward,
// over each row taken as periodic, in float64, in chunks with a warm-up.
//
// A row of n samples is cut into chunks of L (the last one shorter). For
// chunk j, owning positions [a, a+len) with a = j*L, one pass runs the
// cascade from zero state over W + len steps: forward over positions
// a-W … a+len-1, backward over a+len-1+W … a, positions taken modulo n
// (W <= n), and writes the last len outputs. The neglected start-up
// transient is below the impulse response's tail beyond W
// (cuda.go picks W for gpuTailTol = 1e-8 of its absolute sum). The forward pass writes float32 into
// a scratch row; the backward pass reads it and writes gain*y.
//
// One warp per (chunk, group of 32 channels): lane l runs channel
// 32*group + l, so the warp walks 32 rows in step. Inputs and outputs go
// through a per-warp shared tile [32][33] so that global accesses are
// whole rows of 32 consecutive samples; the next tile's inputs are loaded
// into registers while the current one is filtered. The cascade has NB
// biquads then, if ODD, one first-order section; coef holds each section
// as (b0, b1, b2, a1, a2), a first-order one with b2 = a2 = 0.
#define HP_WARPS 4

template <int NB, bool ODD>
struct Cascade {
    static constexpr int NS = NB + (ODD ? 1 : 0);
    double b0[NS], b1[NS], b2[NS], a1[NS], a2[NS];
    double x1[NS], x2[NS], y1[NS], y2[NS];

    __device__ __forceinline__ void init(const double* __restrict__ coef) {
#pragma unroll
        for (int q = 0; q < NS; ++q) {
            b0[q] = coef[5 * q];
            b1[q] = coef[5 * q + 1];
            b2[q] = coef[5 * q + 2];
            a1[q] = coef[5 * q + 3];
            a2[q] = coef[5 * q + 4];
            x1[q] = x2[q] = y1[q] = y2[q] = 0.0;
        }
    }

    // step feeds one sample through the cascade. The terms that do not
    // depend on the new input or the last output are formed first, so
    // the recurrence costs one fused multiply-add per section.
    __device__ __forceinline__ double step(double v) {
#pragma unroll
        for (int q = 0; q < NB; ++q) {
            const double u = __fma_rn(b2[q], x2[q], __fma_rn(b1[q], x1[q], -a2[q] * y2[q]));
            const double y = __fma_rn(-a1[q], y1[q], __fma_rn(b0[q], v, u));
            x2[q] = x1[q];
            x1[q] = v;
            y2[q] = y1[q];
            y1[q] = y;
            v = y;
        }
        if constexpr (ODD) {
            const double y = __fma_rn(-a1[NB], y1[NB], __fma_rn(b0[NB], v, b1[NB] * x1[NB]));
            x1[NB] = v;
            y1[NB] = y;
            v = y;
        }
        return v;
    }
};

// hp_fetch loads the inputs of steps [s0, s0+cnt) of the warp's 32 rows
// into pre[m] (row m, lane = step).
__device__ __forceinline__ void hp_fetch(float (&pre)[32], const float* __restrict__ src, int C, int n, int g,
                                         int lane, int p0, int dir, int s0, int cnt) {
    int p = p0 + dir * (s0 + lane);
    if (p < 0) p += n;
    if (p >= n) p -= n;
    const bool ok = lane < cnt;
#pragma unroll
    for (int m = 0; m < 32; ++m) {
        const int c = 32 * g + m;
        pre[m] = (ok && c < C) ? src[(long long)c * n + p] : 0.0f;
    }
}

template <int NB, bool ODD, bool BWD>
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

    Cascade<NB, ODD> cs;
    cs.init(coef);
    float pre[32];
    hp_fetch(pre, src, C, n, g, lane, p0, dir, 0, pp_imin(32, steps));
    for (int s0 = 0; s0 < steps; s0 += 32) {
        const int cnt = pp_imin(32, steps - s0);
#pragma unroll
        for (int m = 0; m < 32; ++m) tile[m][lane] = pre[m];
        __syncwarp();
        if (s0 + 32 < steps) hp_fetch(pre, src, C, n, g, lane, p0, dir, s0 + 32, pp_imin(32, steps - s0 - 32));
        // Run: lane = channel, along its row of the tile.
        if (cnt == 32) {
#pragma unroll
            for (int k = 0; k < 32; ++k) {
                const double y = cs.step((double)tile[lane][k]);
                tile[lane][k] = BWD ? (float)(gain * y) : (float)y;
            }
        } else {
            for (int k = 0; k < cnt; ++k) {
                const double y = cs.step((double)tile[lane][k]);
                tile[lane][k] = BWD ? (float)(gain * y) : (float)y;
            }
        }
        __syncwarp();
        // Store the steps past the warm-up.
        {
            const int s = s0 + lane;
            if (lane < cnt && s >= W) {
                const int p = p0 + dir * s; // in [a, a+len)
#pragma unroll 8
                for (int m = 0; m < 32; ++m) {
                    const int c = 32 * g + m;
                    if (c < C) dst[(long long)c * n + p] = tile[m][lane];
                }
            }
        }
        __syncwarp();
    }
}

#ifdef HP_NB
extern "C" __global__ void hp_fwd(float* dst, const float* src, const double* coef, int C, int n, int L, int W,
                                  int nchunk, int ngroup, double gain) {
    hp_pass<HP_NB, (HP_ODD != 0), false>(dst, src, coef, C, n, L, W, nchunk, ngroup, gain);
}
extern "C" __global__ void hp_bwd(float* dst, const float* src, const double* coef, int C, int n, int L, int W,
                                  int nchunk, int ngroup, double gain) {
    hp_pass<HP_NB, (HP_ODD != 0), true>(dst, src, coef, C, n, L, W, nchunk, ngroup, gain);
}
#endif

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
// Whitening with a sparse operator of K entries per row, given as pairs
// iw[c*K+k] = local column | float32 bits of the weight << 32:
//
//   dst[c*T + t] = sum_k w[c*K+k] * src[(lo_g + lcol[c*K+k])*T + t]
//
// in float32, each product rounded and then added in the order k = 0, 1, …
// (no fused multiply-add), exactly as linalg.Whitening.Apply. The output
// rows are cut into groups of RG rows; group g reads only the input rows
// [lo_g, lo_g + span_g) (grp[g] = (lo_g, span_g)), which its rows' columns
// are relative to — a local whitening (each channel against its nearest
// channels) reads a narrow band, one group of all C rows reads them all.
// Block (g, column tile) = (blockIdx.x, blockIdx.y), so that the groups of
// one tile, which read overlapping rows, run together: the group's input
// rows of 32*NCOL columns are staged in dynamic shared memory
// [span][32*NCOL], then warp w forms output rows w, w+nw, … of the group,
// lane l the columns l, l+32, …, so that each pair fetched serves NCOL
// products. Block: a multiple of 32 threads; dynamic shared
// max_g span_g*32*NCOL*4 bytes.
template <int NCOL>
__device__ void whiten_t(float* __restrict__ dst, const float* __restrict__ src, const unsigned long long* __restrict__ iw,
                         const int2* __restrict__ grp, int C, int K, int T, int RG) {
    extern __shared__ float smem[];
    constexpr int TW = 32 * NCOL;
    float* tile = smem; // [span][TW]
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const int g = blockIdx.x;
    const int tb = blockIdx.y * TW;
    const int2 gr = grp[g];
    for (int i = warp; i < gr.y; i += nw) {
        const float* row = src + (long long)(gr.x + i) * T;
#pragma unroll
        for (int u = 0; u < NCOL; ++u) {
            const int t = tb + lane + 32 * u;
            tile[i * TW + lane + 32 * u] = t < T ? row[t] : 0.0f;
        }
    }
    __syncthreads();
    const int c1 = pp_imin(C, (g + 1) * RG);
    for (int c = g * RG + warp; c < c1; c += nw) {
        const unsigned long long* e = iw + (long long)c * K;
        float acc[NCOL];
#pragma unroll
        for (int u = 0; u < NCOL; ++u) acc[u] = 0.0f;
#pragma unroll 4
        for (int k = 0; k < K; ++k) {
            const unsigned long long p = __ldg(e + k);
            const float w = __uint_as_float((unsigned)(p >> 32));
            const float* r = tile + (int)(unsigned)p * TW + lane;
#pragma unroll
            for (int u = 0; u < NCOL; ++u) acc[u] = __fadd_rn(acc[u], __fmul_rn(w, r[32 * u]));
        }
#pragma unroll
        for (int u = 0; u < NCOL; ++u) {
            const int t = tb + lane + 32 * u;
            if (t < T) dst[(long long)c * T + t] = acc[u];
        }
    }
}

#ifdef WHITE_NCOL
extern "C" __global__ void whiten(float* dst, const float* src, const unsigned long long* iw, const int2* grp, int C,
                                  int K, int T, int RG) {
    whiten_t<WHITE_NCOL>(dst, src, iw, grp, C, K, T, RG);
}
#endif
