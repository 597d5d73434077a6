// Causal trailing mean on the GPU: for each row x of a row-major [rows, n] array, y[t] =
// (x[max(0, t-cf+1)] + ... + x[t]) / min(t+1, cf), for float32, binary16 and bfloat16 storage
// (16-bit types as unsigned short bits), any n, cf >= 1. The host (ops/cuda.go) launches the
// first kernel that takes cf (I samples per thread: 8 for float32, 16 for 16-bit; 2048/I threads):
//
//   ctm_warp_<type>     cf <= 32*I   } grid (chunks, min(rows, 65535), ceil(rows/65535));
//   ctm_direct_<type>   cf <= 2048   }   (y, x, n, cf, inv, chunks, total)
//   ctm_lookback_<type> any cf       grid total; (y, x, n, cf, inv, chunks, total, state, epoch)
//
// n, cf, chunks, total are long long, inv = 1/cf rounded to float. A block owns a chunk of
// CTM_CHUNK = 2048 samples of one row (chunks = ceil(n/2048), total = rows*chunks). Arithmetic is
// compensated float32, each mean rounded once. Look-back state: 16 + 20*total bytes, zeroed once:
// a ticket counter, then per chunk two doubles and a flag word tagged with the launch's epoch (in
// [1, 2^30), new per launch: no clearing). y must not alias x (blocks read other chunks' samples);
// pointers are aligned to the element size. Design: docs/perf-gpu-ops.md.

#define CTM_CHUNK 2048
#define CTM_WARPS 8  // the most warps of a block (256 threads)
#define CTM_FULL 0xffffffffu

// Samples per thread (16-bit types: two 16-byte vectors) and resident blocks per multiprocessor
// asked of the compiler: the fastest without spills on the H200 (docs/perf-gpu-ops.md).
#define CTM_ITEMS_F32 8
#define CTM_ITEMS_16 16
#define CTM_THREADS_F32 (CTM_CHUNK / CTM_ITEMS_F32)
#define CTM_THREADS_16 (CTM_CHUNK / CTM_ITEMS_16)

#define CTM_MINB_F32 7
#define CTM_MINB_16 10
#define CTM_WARP_MINB_F32 6
#define CTM_WARP_MINB_16 12

typedef unsigned short ctm_u16;
typedef long long ctm_i64;
typedef unsigned long long ctm_u64;

#include "trailing_mean_io.cuh"

// CtmItems<S>: samples per thread of the kernels for S.
template <class S> struct CtmItems {
    enum { N = CTM_ITEMS_16 };
};
template <> struct CtmItems<CtmF32> {
    enum { N = CTM_ITEMS_F32 };
};

// CtmSin32<S>::value: the warp kernels sum s_in in float32 (not float64).
template <class S> struct CtmSin32 {
    static constexpr bool value = true;
};
template <> struct CtmSin32<CtmF32> {
    static constexpr bool value = false;
};

// Warp-level primitives (all 32 lanes must call them).

__device__ __forceinline__ double ctm_warp_sum(double v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(CTM_FULL, v, o);
    return v;
}

// ctm_two_sum returns a + b rounded and sets *e to its exact error.
__device__ __forceinline__ float ctm_two_sum(float a, float b, float* e)
{
    const float s = a + b;
    const float bb = s - a;
    *e = (a - (s - bb)) + (b - bb);
    return s;
}

// ctm_scan_warp returns the inclusive sum of v over lanes 0..lane, the exclusive one in *excl.
__device__ __forceinline__ float ctm_scan_warp(float v, float* excl)
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const float u = __shfl_up_sync(CTM_FULL, v, o);
        if (lane >= o) v += u;
    }
    const float e = __shfl_up_sync(CTM_FULL, v, 1);
    *excl = lane == 0 ? 0.0f : e;
    return v;
}

// ctm_scan_warp2 is ctm_scan_warp for TwoSum pairs (h, l), in place; exclusive in (*eh, *el).
__device__ __forceinline__ void ctm_scan_warp2(float& h, float& l, float* eh, float* el)
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const float uh = __shfl_up_sync(CTM_FULL, h, o), ul = __shfl_up_sync(CTM_FULL, l, o);
        if (lane >= o) {
            float e;
            h = ctm_two_sum(uh, h, &e);
            l += ul + e;
        }
    }
    const float xh = __shfl_up_sync(CTM_FULL, h, 1), xl = __shfl_up_sync(CTM_FULL, l, 1);
    *eh = lane == 0 ? 0.0f : xh;
    *el = lane == 0 ? 0.0f : xl;
}

// Look-back state.
struct CtmState {
    unsigned* counter;
    unsigned* flags;
    double* agg;
    double* incl;
};

__device__ __forceinline__ CtmState ctm_state(unsigned char* base, ctm_i64 blocks)
{
    CtmState s;
    s.counter = (unsigned*)base;
    s.agg = (double*)(base + 16);
    s.incl = s.agg + blocks;
    s.flags = (unsigned*)(s.incl + blocks);
    return s;
}

// ctm_lookback (one whole warp) sums the aggregates of chunks c-1, c-2, ... of the row at row0 back
// to the nearest published inclusive prefix (added instead).
__device__ double ctm_lookback(const CtmState& st, ctm_i64 row0, ctm_i64 c, unsigned tag)
{
    const int lane = threadIdx.x & 31;
    double acc = 0.0;
    for (ctm_i64 p = c - 1 - lane;; p -= 32) {
        unsigned kind = 2u;  // before the row start: an inclusive prefix of 0
        double val = 0.0;
        if (p >= 0) {
            const ctm_i64 i = row0 + p;
            unsigned f;
            do {
                f = ctm_ld_acquire(st.flags + i);
            } while ((f >> 2) != tag);
            kind = f & 3u;
            val = ctm_ld_relaxed(kind == 2u ? st.incl + i : st.agg + i);
        }
        const unsigned incl = __ballot_sync(CTM_FULL, kind == 2u);
        // Lanes past the nearest inclusive prefix (lane = distance - 1) do not count.
        const int first = incl ? __ffs(incl) - 1 : 32;
        acc += ctm_warp_sum(lane <= first ? val : 0.0);
        if (incl) return acc;
    }
}

// ctm_div returns s / k within about half a unit: s * invk corrected by its FMA residual.
__device__ __forceinline__ float ctm_div(float s, float k, float invk)
{
    const float q = s * invk;
    return fmaf(fmaf(-q, k, s), invk, q);
}

// ctm_div2 returns (sh + sl) / k likewise, sl (|sl| <= ulp(sh)) in the residual.
__device__ __forceinline__ float ctm_div2(float sh, float sl, float k, float invk)
{
    const float q = sh * invk;
    return fmaf(fmaf(-q, k, sh) + sl, invk, q);
}

// ctm_chunk32 computes one chunk of a look-back kernel: publishes its compensated sum, looks back
// for s_in, adds it last. xw, lw: a full chunk's samples (a short one loads here). Whole block.
template <class S, int ITEMS>
__device__ __forceinline__ void ctm_chunk32(CtmShared<S>& sh, typename S::T* __restrict__ y,
                                            const typename S::T* __restrict__ x, ctm_i64 n, ctm_i64 cf,
                                            float invf, const CtmChunk& ck, const unsigned* xw,
                                            const unsigned* lw, const CtmState& st, unsigned epoch)
{
    typedef typename S::T T;
    enum { WARPS = CTM_CHUNK / ITEMS / 32 };
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const ctm_i64 t0 = ck.t0;
    const int len = ck.len;
    const int k0 = tid * ITEMS;

    // v[j]: running sum of differences 0..j; (ph, pl): compensated sum; guarded: low parts in vl.
    float v[ITEMS], vl[ITEMS];
    float run = 0.0f, runL = 0.0f, ph = 0.0f, pl = 0.0f;
    if (ck.fast) {
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const float xs = CtmWords<S>::get(xw, j), ls = CtmWords<S>::get(lw, j);
            float de;
            const float d = ctm_two_sum(xs, -ls, &de);
            run += d;
            v[j] = run;
            float e;
            ph = ctm_two_sum(ph, d, &e);
            pl += e + de;
        }
    } else {
        const T* xr = x + ck.r * n;
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const int k = k0 + j;
            const ctm_i64 t = t0 + k, tl = t - cf;
            const bool inRow = k < len;
            float xs, ls;
            if (ck.full) {  // block-uniform
                xs = CtmWords<S>::get(xw, j);
                ls = CtmWords<S>::get(lw, j);
            } else {
                xs = inRow ? S::load(xr[t]) : 0.0f;
                ls = (inRow && tl >= 0) ? S::load(xr[tl]) : 0.0f;
            }
            if (inRow) {
                float de, e;
                const float d = ctm_two_sum(xs, -ls, &de);
                run = ctm_two_sum(run, d, &e);
                runL += e + de;
                ph = ctm_two_sum(ph, d, &e);
                pl += e + de;
            }
            v[j] = run;
            vl[j] = runL;
        }
    }

    // Block scan of the thread sums (pairs if guarded); compensated block sum of (ph, pl).
    float inc = run, incL = runL, excl, exclL = 0.0f;
    if (ck.fast) {
        inc = ctm_scan_warp(run, &excl);
    } else {
        ctm_scan_warp2(inc, incL, &excl, &exclL);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float oh = __shfl_xor_sync(CTM_FULL, ph, o), ol = __shfl_xor_sync(CTM_FULL, pl, o);
        float e;
        ph = ctm_two_sum(ph, oh, &e);
        pl += ol + e;
    }
    if (lane == 31) {
        sh.warpRunF[warp] = inc;
        sh.warpRunL[warp] = incL;
    }
    if (lane == 0) {
        sh.warpPreH[warp] = ph;
        sh.warpPreL[warp] = pl;
    }
    __syncthreads();
    float before = 0.0f, beforeL = 0.0f;
    if (ck.fast) {
        for (int w = 0; w < warp; w++) before += sh.warpRunF[w];
    } else {
        for (int w = 0; w < warp; w++) {
            float e;
            before = ctm_two_sum(before, sh.warpRunF[w], &e);
            beforeL += sh.warpRunL[w] + e;
        }
    }
    // Warp 0: publish the chunk's sum, look back, publish the inclusive prefix.
    if (warp == 0) {
        float th = 0.0f, tl = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            float e;
            th = ctm_two_sum(th, sh.warpPreH[w], &e);
            tl += sh.warpPreL[w] + e;
        }
        const double total = (double)th + (double)tl;
        const unsigned tag = epoch << 2;
        double prefix = 0.0;
        if (ck.c > 0) {
            if (lane == 0) {
                st.agg[ck.blk] = total;
                ctm_st_release(st.flags + ck.blk, tag | 1u);
            }
            prefix = ctm_lookback(st, ck.blk - ck.c, ck.c, epoch);
        }
        if (lane == 0) {
            st.incl[ck.blk] = prefix + total;
            ctm_st_release(st.flags + ck.blk, tag | 2u);
            const float h = (float)prefix;
            sh.prefixH = h;
            sh.prefixL = (float)(prefix - (double)h);
        }
    }
    __syncthreads();
    const float ch = sh.prefixH, cl = sh.prefixL;  // s_in as a float32 pair
    float m[ITEMS];
    if (ck.fast) {
        // ch + ((before + excl + cl) + v[j]): the large s_in added last.
        const float base = (before + excl) + cl;
        const float k = (float)cf;
#pragma unroll
        for (int j = 0; j < ITEMS; j++) m[j] = ctm_div(ch + (base + v[j]), k, invf);
    } else {
        // The same sum in float32 pairs, its low part in the division's residual.
        float e;
        const float bh = ctm_two_sum(before, excl, &e);
        const float bl = (beforeL + exclL) + e + cl;
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const ctm_i64 t = t0 + k0 + j;
            float e1, e2;
            const float a = ctm_two_sum(bh, v[j], &e1);
            const float sumH = ctm_two_sum(ch, a, &e2);
            const float sumL = ((bl + vl[j]) + e1) + e2;
            if (t < cf) {
                const float k = (float)(t + 1);
                m[j] = ctm_div2(sumH, sumL, k, 1.0f / k);
            } else {
                m[j] = ctm_div2(sumH, sumL, (float)cf, invf);
            }
        }
    }
    unsigned ow[ITEMS * (int)CtmRound<S>::WORDS8 / 8];
    CtmRound<S>::template run<ITEMS>(ow, m);
    ctm_store<S, ITEMS>(sh, y + ck.r * n + t0, ck.full, len, ow);
}

// ctm_run_diffs sets v[j] to the running sum of x[t] - x[t-cf] over samples 0..j (< len).
template <class S, int ITEMS>
__device__ __forceinline__ float ctm_run_diffs(const unsigned* xw, const unsigned* lw, int k0, int len, float* v)
{
    float run = 0.0f;
    if (k0 + ITEMS <= len) {
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            run += CtmWords<S>::get(xw, j) - CtmWords<S>::get(lw, j);
            v[j] = run;
        }
    } else {
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            if (k0 + j < len) run += CtmWords<S>::get(xw, j) - CtmWords<S>::get(lw, j);
            v[j] = run;
        }
    }
    return run;
}

// ctm_run_first is ctm_run_diffs for a row's first chunk: at k < cf, samples go to s_in (*ph, *pl).
template <class S, int ITEMS>
__device__ __forceinline__ float ctm_run_first(const unsigned* xw, const unsigned* lw, int k0, int len, int cf,
                                               float* v, float* ph, float* pl)
{
    float run = 0.0f;
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const int k = k0 + j;
        const bool in = k < len;
        const float xs = in ? CtmWords<S>::get(xw, j) : 0.0f;
        float d = in ? xs - CtmWords<S>::get(lw, j) : 0.0f;
        run += k < cf ? 0.0f : d;
        if (k < cf) {
            float e;
            *ph = ctm_two_sum(*ph, xs, &e);
            *pl += e;
            v[j] = xs;
        } else {
            v[j] = run;
        }
    }
    return run;
}

// ctm_prefix_means sets m[j] at k < cf of a row's first chunk: the prefix sum from (eh, el) / (k + 1).
template <int ITEMS>
__device__ __forceinline__ void ctm_prefix_means(float eh, float el, int k0, int cf, const float* v, float* m)
{
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const int k = k0 + j;
        if (k < cf) {
            float e;
            eh = ctm_two_sum(eh, v[j], &e);
            el += e;
            const float kk = (float)(k + 1);
            m[j] = ctm_div2(eh, el, kk, __frcp_rn(kk));
        }
    }
}

// Block-scan totals of ctm_direct_means.
struct CtmDirectShared {
    double pre[CTM_WARPS];  // per-warp sums of the samples that make up s_in
    float run[CTM_WARPS];   // per-warp sums of the differences
};

// ctm_direct_means computes this thread's means m in a direct kernel's chunk; one barrier.
template <class S, int ITEMS>
__device__ __forceinline__ void ctm_direct_means(CtmDirectShared& sh, const unsigned* xw, const unsigned* lw,
                                                 bool first, int len, int cf, float invf, float* m)
{
    enum { WARPS = CTM_CHUNK / ITEMS / 32 };
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, k0 = tid * ITEMS;
    // v[j]: running sums; at k < cf, (ph, pl) sums a first chunk's samples, pd others' lagged.
    float v[ITEMS];
    float run = 0.0f, ph = 0.0f, pl = 0.0f;
    double pd = 0.0;
    const bool firstLow = first && k0 < cf;
    if (!firstLow) {  // the common case
        run = ctm_run_diffs<S, ITEMS>(xw, lw, k0, len, v);
    } else {
        run = ctm_run_first<S, ITEMS>(xw, lw, k0, len, cf, v, &ph, &pl);
    }
    if (!first && k0 < cf) {
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            if (k0 + j < cf) pd += (double)CtmWords<S>::get(lw, j);
        }
    }
    // Warp scan; warps holding k < cf sum their part of s_in (first chunk: a TwoSum pair scan).
    float excl;
    const float inc = ctm_scan_warp(run, &excl);
    float exH = 0.0f, exL = 0.0f;
    if (warp * 32 * ITEMS < cf) {  // warp-uniform
        if (first) {               // block-uniform
            float ih = ph, il = pl;
            ctm_scan_warp2(ih, il, &exH, &exL);
            if (lane == 31) sh.pre[warp] = (double)ih + (double)il;
        } else {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) pd += __shfl_xor_sync(CTM_FULL, pd, o);
            if (lane == 0) sh.pre[warp] = pd;
        }
    }
    if (lane == 31) sh.run[warp] = inc;
    __syncthreads();
    // Sums of the warps before; s_in as a pair; first chunk: their s_in parts into the prefix.
    float before = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS - 1; w++) before += w < warp ? sh.run[w] : 0.0f;
    const int preWarps = (cf + 32 * ITEMS - 1) / (32 * ITEMS);
    double sd = 0.0;
    for (int w = 0; w < preWarps; w++) sd += sh.pre[w];
    const float ch = (float)sd, cl = (float)(sd - (double)ch);
    if (first) {  // block-uniform
        double ed = 0.0;
        for (int w = 0; w < preWarps && w < warp; w++) ed += sh.pre[w];
        const float eh = (float)ed, el = (float)(ed - (double)eh);
        float e;
        exH = ctm_two_sum(exH, eh, &e);
        exL += el + e;
    }
    // Window sum: s_in + before + excl + v[j] (first chunk: at k >= cf).
    const float q0 = ctm_div2(ch, (before + excl) + cl, (float)cf, invf);
#pragma unroll
    for (int j = 0; j < ITEMS; j++) m[j] = fmaf(v[j], invf, q0);
    if (firstLow) ctm_prefix_means<ITEMS>(exH, exL, k0, cf, v, m);
}

// ctm_warp_means is ctm_direct_means for warp kernels: each warp a chunk of its own, no barrier.
// first: the warp starts the row; len: the chunk's positions from the warp's first (<= 0: none).
template <class S, int ITEMS>
__device__ __forceinline__ void ctm_warp_means(const unsigned* xw, const unsigned* lw, bool first, int len, int cf,
                                               float invf, float* m)
{
    const int lane = threadIdx.x & 31, k0 = lane * ITEMS;
    float v[ITEMS];
    float run = 0.0f;
    // 16-bit: a row's first warp too (s_in = 0, k < cf rescaled): a compensated path spills.
    if (CtmSin32<S>::value || !first) {  // warp-uniform: the common case
        run = ctm_run_diffs<S, ITEMS>(xw, lw, k0, len, v);
        // s_in: warp sum of masked per-lane sums in four chains (no branch).
        float ch, cl;
        if constexpr (CtmSin32<S>::value) {
            float sp[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int j = 0; j < ITEMS; j++) sp[j % 4] += k0 + j < cf ? CtmWords<S>::get(lw, j) : 0.0f;
            float sf = (sp[0] + sp[1]) + (sp[2] + sp[3]);
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) sf += __shfl_xor_sync(CTM_FULL, sf, o);
            ch = sf, cl = 0.0f;
        } else {
            double sp[4] = {0.0, 0.0, 0.0, 0.0};
#pragma unroll
            for (int j = 0; j < ITEMS; j++) sp[j % 4] += (double)(k0 + j < cf ? CtmWords<S>::get(lw, j) : 0.0f);
            double sd = (sp[0] + sp[1]) + (sp[2] + sp[3]);
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) sd += __shfl_xor_sync(CTM_FULL, sd, o);
            ch = (float)sd, cl = (float)(sd - (double)ch);
        }
        float excl;
        ctm_scan_warp(run, &excl);
        const float q0 = ctm_div2(ch, excl + cl, (float)cf, invf);
#pragma unroll
        for (int j = 0; j < ITEMS; j++) m[j] = fmaf(v[j], invf, q0);
        if constexpr (CtmSin32<S>::value) {
            // Positions k < cf of a row's first warp: m * cf/(k + 1).
            if (first) {  // warp-uniform
#pragma unroll
                for (int j = 0; j < ITEMS; j++) {
                    if (k0 + j < cf) m[j] *= __fdividef((float)cf, (float)(k0 + j + 1));
                }
            }
        }
        return;
    }
    // A row's first warp (float32): x[k], k < cf, go into s_in (TwoSum pair scan).
    float ph = 0.0f, pl = 0.0f;
    run = ctm_run_first<S, ITEMS>(xw, lw, k0, len, cf, v, &ph, &pl);
    float excl;
    ctm_scan_warp(run, &excl);
    float ih = ph, il = pl, exH, exL;
    ctm_scan_warp2(ih, il, &exH, &exL);
    const double sd = (double)__shfl_sync(CTM_FULL, ih, 31) + (double)__shfl_sync(CTM_FULL, il, 31);
    const float ch = (float)sd, cl = (float)(sd - (double)ch);
    const float q0 = ctm_div2(ch, excl + cl, (float)cf, invf);
#pragma unroll
    for (int j = 0; j < ITEMS; j++) m[j] = fmaf(v[j], invf, q0);
    if (k0 < cf) ctm_prefix_means<ITEMS>(exH, exL, k0, cf, v, m);
}

// ctm_direct_one is one block of a direct or warp kernel: a chunk on the 2D grid (no division).
template <class S, bool WARP, int ITEMS>
__device__ __forceinline__ void ctm_direct_one(CtmShared<S>& sh, typename S::T* __restrict__ y,
                                               const typename S::T* __restrict__ x, ctm_i64 n, ctm_i64 cf,
                                               float invf, ctm_i64 chunks, ctm_i64 total)
{
    constexpr int W = ITEMS * (int)CtmWords<S>::WORDS8 / 8;
    const unsigned r = blockIdx.z * gridDim.y + blockIdx.y;
    const CtmChunk ck = ctm_chunk_rc(r, blockIdx.x, n, cf, chunks);
    if (ck.blk >= total) return;  // block-uniform: past the last row
    unsigned xw[W], lw[W];
    // Rows of whole 16-byte vectors (block-uniform): no misalignment switch.
    const bool xAligned = ((((ctm_u64)n * sizeof(typename S::T)) | (ctm_u64)x) & 15u) == 0u;
    if (ck.full && xAligned) {
        ctm_load_chunk<S, ITEMS, true>(x, n, cf, ck, xw, lw);
    } else if (ck.full) {
        ctm_load_chunk<S, ITEMS>(x, n, cf, ck, xw, lw);
    } else {
        ctm_load_short<S, ITEMS, WARP>(x, n, cf, ck, xw, lw);
    }
    float m[ITEMS];
    if constexpr (WARP) {
        const int kb = (int)(threadIdx.x & ~31u) * ITEMS;  // the warp's first position
        ctm_warp_means<S, ITEMS>(xw, lw, blockIdx.x == 0 && kb == 0, ck.len - kb, (int)cf, invf, m);
    } else {
        __shared__ CtmDirectShared dsh;
        ctm_direct_means<S, ITEMS>(dsh, xw, lw, blockIdx.x == 0, ck.len, (int)cf, invf, m);
    }
    unsigned ow[W];
    CtmRound<S>::template run<ITEMS>(ow, m);
    ctm_store<S, ITEMS>(sh, y + (ctm_i64)(blockIdx.z * gridDim.y + blockIdx.y) * n + (ctm_i64)blockIdx.x * CTM_CHUNK,
                        ck.full, ck.len, ow);
}

// ctm_lookback_one is one block of a look-back kernel: the chunk of its ticket.
template <class S>
__device__ __forceinline__ void ctm_lookback_one(CtmShared<S>& sh, typename S::T* __restrict__ y,
                                                 const typename S::T* __restrict__ x, ctm_i64 n, ctm_i64 cf,
                                                 float invf, ctm_i64 chunks, ctm_i64 total, unsigned char* state,
                                                 unsigned epoch)
{
    constexpr int ITEMS = CtmItems<S>::N, W = ITEMS * (int)CtmWords<S>::WORDS8 / 8;
    const CtmState st = ctm_state(state, total);
    if (threadIdx.x == 0) {
        const unsigned t = atomicAdd(st.counter, 1u);
        if (t == gridDim.x - 1) atomicExch(st.counter, 0u);  // every block has its ticket
        sh.blk = t;
    }
    __syncthreads();
    const CtmChunk ck = ctm_chunk(sh.blk, n, cf, chunks);
    unsigned xw[W], lw[W];
    if (ck.full) ctm_load_chunk<S, ITEMS>(x, n, cf, ck, xw, lw);
    ctm_chunk32<S, ITEMS>(sh, y, x, n, cf, invf, ck, xw, lw, st, epoch);
}

// The kernels (arguments and launches: see the top of this file).
#define CTM_DIRECT(name, S, WARP, ITEMS, THREADS, MINB)                                                   \
    __global__ void __launch_bounds__(THREADS, MINB)                                                      \
        name(S::T* y, const S::T* x, ctm_i64 n, ctm_i64 cf, float inv, ctm_i64 chunks, ctm_i64 total)     \
    {                                                                                                     \
        __shared__ CtmShared<S> sh;                                                                       \
        ctm_direct_one<S, WARP, ITEMS>(sh, y, x, n, cf, inv, chunks, total);                              \
    }
#define CTM_LOOKBACK(name, S, THREADS, MINB)                                                              \
    __global__ void __launch_bounds__(THREADS, MINB)                                                      \
        name(S::T* y, const S::T* x, ctm_i64 n, ctm_i64 cf, float inv, ctm_i64 chunks, ctm_i64 total,     \
             unsigned char* state, unsigned epoch)                                                        \
    {                                                                                                     \
        __shared__ CtmShared<S> sh;                                                                       \
        ctm_lookback_one<S>(sh, y, x, n, cf, inv, chunks, total, state, epoch);                           \
    }

extern "C" {
CTM_DIRECT(ctm_warp_f32, CtmF32, true, CTM_ITEMS_F32, CTM_THREADS_F32, CTM_WARP_MINB_F32)
CTM_DIRECT(ctm_warp_f16, CtmF16, true, CTM_ITEMS_16, CTM_THREADS_16, CTM_WARP_MINB_16)
CTM_DIRECT(ctm_warp_bf16, CtmBF16, true, CTM_ITEMS_16, CTM_THREADS_16, CTM_WARP_MINB_16)
CTM_DIRECT(ctm_direct_f32, CtmF32, false, CTM_ITEMS_F32, CTM_THREADS_F32, CTM_MINB_F32)
CTM_DIRECT(ctm_direct_f16, CtmF16, false, CTM_ITEMS_16, CTM_THREADS_16, CTM_MINB_16)
CTM_DIRECT(ctm_direct_bf16, CtmBF16, false, CTM_ITEMS_16, CTM_THREADS_16, CTM_MINB_16)
CTM_LOOKBACK(ctm_lookback_f32, CtmF32, CTM_THREADS_F32, CTM_MINB_F32)
CTM_LOOKBACK(ctm_lookback_f16, CtmF16, CTM_THREADS_16, CTM_MINB_16)
CTM_LOOKBACK(ctm_lookback_bf16, CtmBF16, CTM_THREADS_16, CTM_MINB_16)
}  // extern "C"
