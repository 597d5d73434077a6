// Causal trailing mean on the GPU: for each row x of a row-major [rows, n]
// array,
//
//     y[t] = (x[max(0, t-cf+1)] + ... + x[t]) / min(t+1, cf)
//
// for float32, binary16 and bfloat16 storage (the 16-bit types travel as
// unsigned short bit patterns), any n >= 1 and any cf >= 1. The host
// (ops/cuda.go) launches, for each shape, the first kernel that takes its
// window (I samples per thread: 8 for float32, 16 for the 16-bit types;
// n, cf, chunks, total are long long, inv = 1/cf rounded to float):
//
//   ctm_warp_<type>     cf <= 32*I    grid (chunks, min(rows, 65535),
//   ctm_direct_<type>   cf <= 2048         ceil(rows/65535)), 2048/I threads;
//                                          (y, x, n, cf, inv, chunks, total)
//   ctm_lookback_<type> any cf        grid total, 2048/I threads;
//                                     (y, x, n, cf, inv, chunks, total,
//                                      state, epoch)
//
// A block owns a chunk of CTM_CHUNK = 2048 samples of one row (chunks =
// ceil(n/2048) per row, total = rows*chunks). Arithmetic is float32,
// compensated where errors would otherwise accumulate along the row, so
// that a mean is within a few float32 units of the magnitudes summed in its
// own chunk whatever the row length (fp32Tolerance in the tests states the
// bound); every mean is rounded once to the storage type. The carried-in
// window sum s_in of a chunk comes from its own lagged samples (warp
// kernels: per warp, no barrier; direct kernels: per block) or, for longer
// windows, from a decoupled look-back over the chunks before it.
// docs/perf-gpu-ops.md ("Design") describes the layout and the numerics.
//
// Look-back state: 16 + 20*total bytes, zeroed once when allocated: a
// ticket counter (reset to 0 by the last block), then per chunk two doubles
// and a flag word. Flags carry the launch's epoch in their upper 30 bits
// (epoch in [1, 2^30), a new one per launch), so the state needs no
// clearing between launches.
//
// y must not alias x: blocks read samples of chunks other blocks write (the
// host copies x to a scratch buffer for in place). Pointers must be aligned
// to the element size.

#define CTM_CHUNK 2048
#define CTM_WARPS 8  // the most warps of a block (256 threads)
#define CTM_FULL 0xffffffffu

// Samples per thread: more spread the per-chunk work (index arithmetic, the
// scans, the barrier) over more samples and put more bytes in flight per
// thread; 16 for the 16-bit types makes a thread's samples two 16-byte
// vectors.
#define CTM_ITEMS_F32 8
#define CTM_ITEMS_16 16
#define CTM_THREADS_F32 (CTM_CHUNK / CTM_ITEMS_F32)
#define CTM_THREADS_16 (CTM_CHUNK / CTM_ITEMS_16)

// Register budgets: the resident blocks per multiprocessor asked of the
// compiler (__launch_bounds__), the fastest measured on the H200 without
// spills (docs/perf-gpu-ops.md): direct and look-back kernels 7 blocks of
// 256 threads for float32 (32 registers), 10 of 128 for the 16-bit types
// (48); warp kernels 6 of 256 and 12 of 128 (40).
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

// CtmSin32<S>::value: whether the warp kernels sum the carried-in window
// sum s_in in float32 (the 16-bit types) rather than in float64 (float32).
template <class S> struct CtmSin32 {
    static constexpr bool value = true;
};
template <> struct CtmSin32<CtmF32> {
    static constexpr bool value = false;
};

// ---------------------------------------------------------------------------
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

// ctm_scan_warp returns the inclusive sum of v over lanes 0..lane (plain
// float32 adds, a warp-shuffle scan) and sets *excl to the exclusive one
// (0 in lane 0).
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

// ctm_scan_warp2 is ctm_scan_warp for TwoSum pairs (h, l): the inclusive
// sum in place, the exclusive one in (*eh, *el).
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

// ---------------------------------------------------------------------------
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

// ctm_lookback returns the sum of the aggregates of chunks c-1, c-2, ... of
// the row starting at flat chunk index row0, back to the nearest chunk that
// has published its inclusive prefix (whose prefix it adds instead). Called
// by all lanes of one warp; the result is valid in every lane.
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
        // Lanes past the nearest inclusive prefix (lane = distance - 1) do
        // not count.
        const int first = incl ? __ffs(incl) - 1 : 32;
        acc += ctm_warp_sum(lane <= first ? val : 0.0);
        if (incl) return acc;
    }
}

// ---------------------------------------------------------------------------
// The means.

// ctm_div returns s / k to within about half a float32 unit: the product
// with the reciprocal, corrected once with its fused-multiply-add residual.
__device__ __forceinline__ float ctm_div(float s, float k, float invk)
{
    const float q = s * invk;
    return fmaf(fmaf(-q, k, s), invk, q);
}

// ctm_div2 returns (sh + sl) / k likewise, sl (|sl| <= ulp(sh)) folded into
// the residual.
__device__ __forceinline__ float ctm_div2(float sh, float sl, float k, float invk)
{
    const float q = sh * invk;
    return fmaf(fmaf(-q, k, sh) + sl, invk, q);
}

// ctm_chunk32 computes and stores the means of one chunk of a look-back
// kernel: publishes the chunk's compensated sum of differences, looks back
// for s_in, adds it last as a float32 pair and divides (ctm_div2). xw and
// lw hold, for a full chunk, this thread's samples and lagged samples
// (ctm_load_chunk); a short last chunk loads here. All threads of the
// block call it with the same chunk.
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

    // v[j]: running sum of the differences over this thread's samples 0..j;
    // (ph, pl): compensated sum of the exact differences. Guarded chunks
    // (not fast: row starts, short last chunks) carry the running sums
    // compensated, vl[j] the low part of v[j].
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
            // A full chunk has its samples in xw and lw (ctm_load_chunk).
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

    // Block scan of the thread sums (float32 pairs in guarded chunks, the
    // branch is block-uniform); compensated block sum of (ph, pl).
    // (runL is zero in fast chunks.)
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
    // Warp 0: publish the chunk's sum of differences (float64), add the
    // published sums before it, publish the inclusive prefix.
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
        // Window sum at position j: ch + ((before + excl + cl) + v[j]), so
        // that the large carried-in part is added last, with one rounding.
        const float base = (before + excl) + cl;
        const float k = (float)cf;
#pragma unroll
        for (int j = 0; j < ITEMS; j++) m[j] = ctm_div(ch + (base + v[j]), k, invf);
    } else {
        // The same sum in float32 pairs, rounded once, divided with its low
        // part in the residual.
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

// ctm_run_diffs sets v[j] to the running sum of the differences x[t] -
// x[t-cf] over this thread's samples 0..j (plain float32; samples at
// positions k0 + j >= len count zero) and returns the last.
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

// ctm_run_first is ctm_run_diffs for the threads of a row's first chunk:
// its samples at positions k < cf count zero in the running sums and go
// into the compensated pair (*ph, *pl) instead (the chunk's s_in); v[j]
// keeps the sample itself there (zero at k >= len), for ctm_prefix_means.
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

// ctm_prefix_means sets the means m[j] of this thread's positions k = k0 +
// j < cf of a row's first chunk: the compensated prefix sum, continued
// from the pair (eh, el) of the positions before k0 over the thread's
// samples (v as ctm_run_first left it), divided by k + 1 with the
// correctly rounded reciprocal.
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

// ctm_direct_means computes the ITEMS float32 means m of this thread's
// positions in a chunk of a direct kernel (cf <= CTM_CHUNK): the chunk
// has len samples and is a row's first if first; xw and lw hold the
// thread's samples and their lagged samples x[t - cf] (CtmWords<S> words;
// samples past len, and lagged samples of a row's first chunk at
// positions k < cf, may be anything). s_in is summed in float64 (in a
// row's first chunk: the samples x[k], k < cf, as TwoSum pairs). All
// threads of the block call it; it has one barrier (__syncthreads).
template <class S, int ITEMS>
__device__ __forceinline__ void ctm_direct_means(CtmDirectShared& sh, const unsigned* xw, const unsigned* lw,
                                                 bool first, int len, int cf, float invf, float* m)
{
    enum { WARPS = CTM_CHUNK / ITEMS / 32 };
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, k0 = tid * ITEMS;
    // v[j]: running sum of the differences over this thread's samples
    // 0..j. First chunk: (ph, pl), the compensated sum of this thread's
    // samples at positions k < cf; other chunks: pd, the sum of its lagged
    // samples at positions k < cf.
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
    // Warp scan of the running sums (plain); in the warps holding positions
    // k < cf, the warp's part of s_in: a TwoSum pair scan in a first chunk
    // (its exclusive prefix is needed below), a float64 sum elsewhere.
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
    // The sums of the warps before this one; s_in (the sums of all warps
    // holding positions k < cf) as a float32 pair and, for a first chunk,
    // the sums of those before this one added to its exclusive prefix.
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
    // The window sum at a position is s_in + before + excl + v[j] (in a
    // first chunk for k >= cf; elsewhere everywhere).
    const float q0 = ctm_div2(ch, (before + excl) + cl, (float)cf, invf);
#pragma unroll
    for (int j = 0; j < ITEMS; j++) m[j] = fmaf(v[j], invf, q0);
    if (firstLow) ctm_prefix_means<ITEMS>(exH, exL, k0, cf, v, m);
}

// ctm_warp_means is ctm_direct_means for the warp kernels (cf <= 32 *
// ITEMS): every warp is a chunk of its own, with its own s_in, the lagged
// samples of the warp's first cf positions (which it holds): no shared
// memory, no barrier. first: the warp's positions start the row; len is
// the number of positions of the block's chunk left from the warp's first
// (<= 0: none).
template <class S, int ITEMS>
__device__ __forceinline__ void ctm_warp_means(const unsigned* xw, const unsigned* lw, bool first, int len, int cf,
                                               float invf, float* m)
{
    const int lane = threadIdx.x & 31, k0 = lane * ITEMS;
    float v[ITEMS];
    float run = 0.0f;
    // The 16-bit types take this path in a row's first warp too (s_in = 0,
    // plain prefix sums; positions k < cf rescaled below): a compensated
    // path for those few warps makes the kernel spill.
    if (CtmSin32<S>::value || !first) {  // warp-uniform: the common case
        run = ctm_run_diffs<S, ITEMS>(xw, lw, k0, len, v);
        // s_in: the lagged samples of the warp's first cf positions, a
        // warp sum of masked per-lane sums in four interleaved chains (no
        // branch); float64 for float32 storage, float32 for the 16-bit
        // types (CtmSin32<S>).
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
            // Positions k < cf of a row's first warp hold k + 1 samples:
            // their means are m * cf/(k + 1), from m alone (nothing more
            // kept in registers), within a few float32 units.
            if (first) {  // warp-uniform
#pragma unroll
                for (int j = 0; j < ITEMS; j++) {
                    if (k0 + j < cf) m[j] *= __fdividef((float)cf, (float)(k0 + j + 1));
                }
            }
        }
        return;
    }
    // The row's first positions: x[k], k < cf, go into s_in (a TwoSum pair
    // scan, whose exclusive prefix also gives the prefix means of those
    // positions) instead of into the running sums.
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

// ctm_direct_one is the pass of one block of a direct or warp kernel, one
// chunk on a 2D grid (chunk along x, row along y and z: no division), by
// ctm_direct_means (WARP false) or ctm_warp_means (WARP true).
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
    // Rows of whole 16-byte vectors (block-uniform): the samples load
    // without the misalignment switch.
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

// ctm_lookback_one is the pass of one block of a look-back kernel: one
// chunk, the block's ticket (several per block would serialise the chain).
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
