// Causal trailing mean on the GPU: for each row x of a row-major [rows, n]
// array,
//
//     y[t] = (x[max(0, t-cf+1)] + ... + x[t]) / min(t+1, cf)
//
// for float32, binary16 and bfloat16 storage (the 16-bit types travel as
// unsigned short bit patterns), any n >= 1 and any cf >= 1. Also the
// materialised multi-pass "eager" formulation (cast -> cumsum -> pad ->
// subtract -> divide -> cast), as the baseline, and a test-data generator.
//
// NUMERICS. Samples are widened exactly to float64; the window sum is carried
// in float64 from the differences x[t] - x[t-cf] (exact for samples within a
// factor 2^29 of each other), so its error grows like sqrt(n)*2^-53 of the
// window sums and never loses float32 digits, whatever the row length or
// offset. Each mean is rounded to the storage type once: float32 by
// cvt.rn.f32.f64; the 16-bit types by round-to-odd to float32 (truncate,
// then set the last bit when inexact) followed by round-to-nearest-even to
// 16 bits, which equals one correct rounding. This is the numerics of the
// CPU implementation in package ops: the two agree up to the float64
// association of the sums. (On the H200 float64 runs at half the float32
// rate, so this costs less than compensated float32 arithmetic would.)
//
// LAYOUT. 256 threads per block, 8 consecutive samples per thread: a chunk
// is CTM_CHUNK = 2048 samples of one row; chunks = ceil(n/2048) per row,
// total = rows*chunks, so long rows spread over the whole GPU. A block
// handles G consecutive chunks (flat index row*chunks + c; G = CTM_GROUP_F32
// = 1 for float32, CTM_GROUP_16 = 2 for the 16-bit types) and issues the
// loads of all of them before processing them in order, so that enough
// bytes are in flight; grid = ceil(total/G) blocks. For each chunk, thread
// i loads samples 8i..8i+7 and the lagged samples x[t-cf] of the same
// positions with 16-byte vector loads (two per thread for float32, one for
// 16-bit types); when the chunk, or its lagged range, is not 16-byte
// aligned, each thread loads the aligned vectors that cover its 8 samples
// and shifts by the (block-uniform) misalignment. Lagged samples come from
// L1/L2 (a neighbouring block read them moments before) unless cf is very
// long. Chunks at the start of a row (t0 < cf) and the short last chunk of
// a row take a guarded scalar path. Outputs are stored with 16-byte vectors
// when aligned, otherwise staged through shared memory and stored
// coalesced. Per thread: 8 running float64 sums; per chunk: one
// warp-shuffle scan and one __syncthreads.
//
// CARRIED-IN WINDOW SUM. Position t0 of a chunk needs s_in = x[t0-cf] + ...
// + x[t0-1]:
//
//   * ctm_direct_<type> (cf <= CTM_CHUNK): s_in is the sum of the lagged
//     samples of the chunk's first cf positions, which the block loads
//     anyway: no extra traffic, no communication between blocks.
//         ctm_direct_<type><<<ceil(total/G), 256>>>(y, x, n, cf, 1.0/cf,
//                                                   chunks, total)
//
//   * ctm_lookback_<type> (any cf): single-pass chained scan with decoupled
//     look-back. Each block takes the next G chunks from a ticket counter
//     (so a block only ever waits on blocks that started before it); for
//     each chunk it publishes the float64 sum D of (x[t] - x[t-cf]) over
//     the chunk, then sums the published values of the chunks before it in
//     its row (warp 0, 32 at a time, back to the first one that has
//     published its inclusive prefix), publishes its own inclusive prefix,
//     and writes its means.
//         ctm_lookback_<type><<<ceil(total/G), 256>>>(y, x, n, cf, 1.0/cf,
//                                                     chunks, total, state,
//                                                     epoch)
//     state: 16 + 20*total bytes, zeroed once when allocated: a ticket
//     counter (reset to 0 by the last block), then per chunk two doubles
//     and a flag word. Flags carry the launch's epoch in their
//     upper 30 bits (epoch in [1, 2^30), a new one per launch), so the state
//     needs no clearing between launches.
//
// y must not alias x: blocks read samples of chunks other blocks write. For
// in place the caller copies x to a scratch buffer first. Pointers must be
// aligned to the element size.
//
// Entry points (extern "C"; n, cf, chunks, total and counts are long long,
// inv = 1.0/cf a double, epoch an unsigned):
//   ctm_direct_{f32,f16,bf16}(y, x, n, cf, inv, chunks, total)
//   ctm_lookback_{f32,f16,bf16}(y, x, n, cf, inv, chunks, total, state, epoch)
//   ctm_eager_widen_{f16,bf16}(a, x, N)           a = float(x)
//   ctm_eager_cumsum(c, a, n)                     one block per row, float32
//   ctm_eager_pad(p, c, rows, n, cf)              p[t] = t < cf ? 0 : c[t-cf]
//   ctm_eager_sub(w, c, p, N)                     w = c - p
//   ctm_eager_count(count, n, cf)                 count[t] = min(t+1, cf)
//   ctm_eager_div(m, w, count, rows, n)           m = w / count (broadcast)
//   ctm_eager_narrow_{f16,bf16}(y, m, N)          y = T(m), nearest even
//   ctm_fill_{f32,f16,bf16}(y, N, seed, mean, sd) pseudo-normal test data

#define CTM_THREADS 256
#define CTM_ITEMS 8
#define CTM_CHUNK (CTM_THREADS * CTM_ITEMS)
#define CTM_WARPS (CTM_THREADS / 32)
#define CTM_FULL 0xffffffffu

// Minimum resident blocks per multiprocessor asked of the compiler for the
// fused kernels (a register budget); 1 leaves the choice to the compiler.
#ifndef CTM_MIN_BLOCKS
#define CTM_MIN_BLOCKS 1
#endif

// Chunks per block of the fused kernels (CTM_GROUP_F32 for float32,
// CTM_GROUP_16 for the 16-bit types): a block loads the samples of all its
// chunks before processing them one by one, so that more bytes are in
// flight per block.
#ifndef CTM_GROUP_F32
#define CTM_GROUP_F32 1
#endif
#ifndef CTM_GROUP_16
#define CTM_GROUP_16 2
#endif

typedef unsigned short ctm_u16;
typedef long long ctm_i64;
typedef unsigned long long ctm_u64;

// ---------------------------------------------------------------------------
// Memory-model and conversion primitives (inline PTX on the device; the
// CTM_EMULATE build for host tests provides its own definitions).

#ifndef CTM_EMULATE

__device__ __forceinline__ unsigned ctm_ld_acquire(const unsigned* p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void ctm_st_release(unsigned* p, unsigned v)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ double ctm_ld_relaxed(const double* p)
{
    double v;
    asm volatile("ld.relaxed.gpu.global.f64 %0, [%1];" : "=d"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ float ctm_h2f(ctm_u16 h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

// Packs two float32 values rounded to nearest even: lo in bits 0-15.
__device__ __forceinline__ unsigned ctm_pack_bf16(float lo, float hi)
{
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

__device__ __forceinline__ unsigned ctm_pack_f16(float lo, float hi)
{
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

#endif  // CTM_EMULATE

// ctm_odd rounds v to float32 with round-to-odd: truncate, then set the last
// bit when the truncation was inexact. In float32's normal range v is exact
// in float32 iff its 29 low fraction bits are zero; below it (|v| < 2^-126)
// the truncated value is compared with v.
__device__ __forceinline__ float ctm_odd(double v)
{
    const float f = __double2float_rz(v);
    unsigned sticky = ((unsigned)__double2loint(v) & 0x1fffffffu) != 0u;
    if (fabsf(f) < 1.17549435e-38f) {  // |v| < 2^-126 (truncation never crosses it)
        sticky = (double)f != v;
    }
    return __uint_as_float(__float_as_uint(f) | sticky);
}

// ---------------------------------------------------------------------------
// Storage types. VEC is the number of elements in 16 bytes; load widens one
// element to float (exactly); pack8 rounds 8 means and packs them into a
// 16-byte vector (16-bit types) or two (float32).

struct alignas(16) ctm_v4 {
    unsigned x, y, z, w;
};

struct CtmF32 {
    typedef float T;
    enum { VEC = 4 };
    static __device__ __forceinline__ float load(float v) { return v; }
    static __device__ __forceinline__ float round1(double v) { return __double2float_rn(v); }
};

struct CtmF16 {
    typedef ctm_u16 T;
    enum { VEC = 8 };
    static __device__ __forceinline__ float load(ctm_u16 v) { return ctm_h2f(v); }
    static __device__ __forceinline__ unsigned pack(double lo, double hi)
    {
        return ctm_pack_f16(ctm_odd(lo), ctm_odd(hi));
    }
};

struct CtmBF16 {
    typedef ctm_u16 T;
    enum { VEC = 8 };
    static __device__ __forceinline__ float load(ctm_u16 v) { return __uint_as_float((unsigned)v << 16); }
    static __device__ __forceinline__ unsigned pack(double lo, double hi)
    {
        return ctm_pack_bf16(ctm_odd(lo), ctm_odd(hi));
    }
};

// CtmRound<S>::run rounds the 8 means m to the storage type and packs them
// into WORDS 32-bit words as they lie in memory (element 2i of a 16-bit
// type in bits 0-15 of word i).
template <class S> struct CtmRound;

template <> struct CtmRound<CtmF32> {
    enum { WORDS = 8 };
    static __device__ __forceinline__ void run(unsigned* w, const double* m)
    {
#pragma unroll
        for (int j = 0; j < 8; j++) w[j] = __float_as_uint(__double2float_rn(m[j]));
    }
};

template <class S> struct CtmRound16 {
    enum { WORDS = 4 };
    static __device__ __forceinline__ void run(unsigned* w, const double* m)
    {
#pragma unroll
        for (int i = 0; i < 4; i++) w[i] = S::pack(m[2 * i], m[2 * i + 1]);
    }
};
template <> struct CtmRound<CtmF16> : CtmRound16<CtmF16> {};
template <> struct CtmRound<CtmBF16> : CtmRound16<CtmBF16> {};

// ---------------------------------------------------------------------------
// Loading 8 consecutive elements p[0..7] with 16-byte vector loads, as the
// 32-bit words they occupy (CtmWords<S>::N of them: 8 for float32, 4 for the
// 16-bit types, element 2i in bits 0-15 of word i). M (0 <= M < VEC) is p's
// misalignment in elements: q = p - M is 16-byte aligned, and the aligned
// vectors covering p[0..7] are loaded (each holds at least one of the 8, so
// none reaches past the memory the 8 live in).

template <int M>
__device__ __forceinline__ void ctm_ld8_f32(const float* __restrict__ q, unsigned* o)
{
    const ctm_v4* v = (const ctm_v4*)q;
    const ctm_v4 a = v[0], b = v[1];
    if (M == 0) {
        o[0] = a.x, o[1] = a.y, o[2] = a.z, o[3] = a.w;
        o[4] = b.x, o[5] = b.y, o[6] = b.z, o[7] = b.w;
    } else {
        const ctm_v4 c = v[2];
        const unsigned w[12] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w};
#pragma unroll
        for (int j = 0; j < 8; j++) o[j] = w[M + j];
    }
}

template <int M>
__device__ __forceinline__ void ctm_ld8_u16(const ctm_u16* __restrict__ q, unsigned* o)
{
    const ctm_v4* v = (const ctm_v4*)q;
    const ctm_v4 a = v[0];
    if (M == 0) {
        o[0] = a.x, o[1] = a.y, o[2] = a.z, o[3] = a.w;
    } else {
        const ctm_v4 b = v[1];
        const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            if (M % 2 == 0) {
                o[i] = w[M / 2 + i];
            } else {
                o[i] = __byte_perm(w[M / 2 + i], w[M / 2 + i + 1], 0x5432);
            }
        }
    }
}

template <class S> struct CtmWords;

template <> struct CtmWords<CtmF32> {
    enum { N = 8 };
    static __device__ __forceinline__ void load(const float* __restrict__ p, unsigned* o)
    {
        const int m = (int)(((ctm_u64)p >> 2) & 3u);
        const float* q = p - m;
        switch (m) {
        case 0: ctm_ld8_f32<0>(q, o); break;
        case 1: ctm_ld8_f32<1>(q, o); break;
        case 2: ctm_ld8_f32<2>(q, o); break;
        default: ctm_ld8_f32<3>(q, o); break;
        }
    }
    // Element j of the 8 as a float.
    static __device__ __forceinline__ float get(const unsigned* w, int j) { return __uint_as_float(w[j]); }
};

template <class S> struct CtmWords16 {
    enum { N = 4 };
    static __device__ __forceinline__ void load(const ctm_u16* __restrict__ p, unsigned* o)
    {
        const int m = (int)(((ctm_u64)p >> 1) & 7u);
        const ctm_u16* q = p - m;
        switch (m) {
        case 0: ctm_ld8_u16<0>(q, o); break;
        case 1: ctm_ld8_u16<1>(q, o); break;
        case 2: ctm_ld8_u16<2>(q, o); break;
        case 3: ctm_ld8_u16<3>(q, o); break;
        case 4: ctm_ld8_u16<4>(q, o); break;
        case 5: ctm_ld8_u16<5>(q, o); break;
        case 6: ctm_ld8_u16<6>(q, o); break;
        default: ctm_ld8_u16<7>(q, o); break;
        }
    }
    static __device__ __forceinline__ float get(const unsigned* w, int j)
    {
        return S::load((ctm_u16)(j % 2 ? w[j / 2] >> 16 : w[j / 2] & 0xffffu));
    }
};
template <> struct CtmWords<CtmF16> : CtmWords16<CtmF16> {};

// bfloat16 is the top half of a float32: no conversion instruction needed.
template <> struct CtmWords<CtmBF16> : CtmWords16<CtmBF16> {
    static __device__ __forceinline__ float get(const unsigned* w, int j)
    {
        return __uint_as_float(j % 2 ? w[j / 2] & 0xffff0000u : w[j / 2] << 16);
    }
};

// ---------------------------------------------------------------------------
// Warp-level float64 primitives (all 32 lanes must call them).

__device__ __forceinline__ double ctm_warp_sum(double v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(CTM_FULL, v, o);
    return v;
}

// ---------------------------------------------------------------------------
// The fused pass.

// Shared memory of one block.
template <class S> struct CtmShared {
    double warpRun[CTM_WARPS];  // per-warp sums of the differences
    double warpPre[CTM_WARPS];  // per-warp sums of the carried-in samples
    double prefix;              // look-back: the chunk's carried-in sum
    ctm_i64 blk;                // look-back: the block's ticket
    // Outputs as they lie in memory, when not stored as vectors.
    alignas(16) unsigned stage[CTM_CHUNK * sizeof(typename S::T) / 4];
};

// Per-chunk look-back record.
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

// Where a chunk lies: flat index blk = row * chunks + c.
struct CtmChunk {
    ctm_i64 blk, r, c, t0;
    int len;
    bool fast;  // full, and every lagged sample in the row: no bound checks
};

__device__ __forceinline__ CtmChunk ctm_chunk(ctm_i64 blk, ctm_i64 n, ctm_i64 cf, ctm_i64 chunks)
{
    CtmChunk k;
    k.blk = blk;
    k.r = blk / chunks;
    k.c = blk - k.r * chunks;
    k.t0 = k.c * CTM_CHUNK;
    k.len = (int)(n - k.t0 < CTM_CHUNK ? n - k.t0 : CTM_CHUNK);
    k.fast = k.len == CTM_CHUNK && k.t0 >= cf;
    return k;
}

// ctm_one computes the means of one chunk. xw and lw hold, for a fast
// chunk, this thread's 8 samples and their 8 lagged samples as loaded by
// CtmWords<S>::load; other chunks load with bound checks here. All threads
// of the block call it with the same chunk.
template <class S, bool LOOKBACK>
__device__ __forceinline__ void ctm_one(CtmShared<S>& sh, typename S::T* __restrict__ y,
                                        const typename S::T* __restrict__ x, ctm_i64 n, ctm_i64 cf,
                                        double inv, const CtmChunk& ck, const unsigned* xw,
                                        const unsigned* lw, const CtmState& st, unsigned epoch)
{
    typedef typename S::T T;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const ctm_i64 t0 = ck.t0;
    const int len = ck.len;
    const T* xr = x + ck.r * n;
    const int k0 = tid * CTM_ITEMS;

    // v[j]: running sum of the differences over this thread's samples 0..j;
    // pre: sum of the lagged samples of positions k < cf (direct mode's
    // carried-in sum).
    double v[CTM_ITEMS];
    double run = 0.0, pre = 0.0;
    if (ck.fast) {
#pragma unroll
        for (int j = 0; j < CTM_ITEMS; j++) {
            run += (double)CtmWords<S>::get(xw, j) - (double)CtmWords<S>::get(lw, j);
            v[j] = run;
        }
        if (!LOOKBACK && k0 < cf) {
#pragma unroll
            for (int j = 0; j < CTM_ITEMS; j++) {
                if (k0 + j < cf) pre += (double)CtmWords<S>::get(lw, j);
            }
        }
    } else {
#pragma unroll
        for (int j = 0; j < CTM_ITEMS; j++) {
            const int k = k0 + j;
            const ctm_i64 t = t0 + k, tl = t - cf;
            // Lagged samples are needed for k < len and, in direct mode, for
            // the carried-in sum (k < cf, inside the row since cf <= CHUNK).
            const bool inRow = k < len;
            const bool needLag = inRow || (!LOOKBACK && k < cf);
            const double xd = inRow ? (double)S::load(xr[t]) : 0.0;
            const double ld = (needLag && tl >= 0) ? (double)S::load(xr[tl]) : 0.0;
            if (inRow) run += xd - ld;
            v[j] = run;
            if (!LOOKBACK && k < cf) pre += ld;
        }
    }

    // Block scan: exclusive prefix of the thread sums (lanes, then warps),
    // and the block totals of the differences and of pre.
    double inc = run;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const double u = __shfl_up_sync(CTM_FULL, inc, o);
        if (lane >= o) inc += u;
    }
    double excl = __shfl_up_sync(CTM_FULL, inc, 1);
    if (lane == 0) excl = 0.0;
    if (!LOOKBACK && (ctm_i64)warp * 32 * CTM_ITEMS < cf) {  // warp-uniform
        pre = ctm_warp_sum(pre);
    }
    if (lane == 31) sh.warpRun[warp] = inc;
    if (lane == 0) sh.warpPre[warp] = pre;
    __syncthreads();
    // Sums over the warps before this one, and (direct mode) over the warps
    // holding positions k < cf; loop bounds are warp-uniform.
    double before = 0.0, sIn = 0.0;
    for (int w = 0; w < warp; w++) before += sh.warpRun[w];
    if (!LOOKBACK) {
        const int preWarps = (int)(cf < CTM_CHUNK ? (cf + 32 * CTM_ITEMS - 1) / (32 * CTM_ITEMS) : CTM_WARPS);
        for (int w = 0; w < preWarps; w++) sIn += sh.warpPre[w];
    }

    if (LOOKBACK) {
        if (warp == 0) {
            double total = 0.0;
#pragma unroll
            for (int w = 0; w < CTM_WARPS; w++) total += sh.warpRun[w];
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
                sh.prefix = prefix;
            }
        }
        __syncthreads();
        sIn = sh.prefix;
    }
    const double base = sIn + (before + excl);

    // Means, rounded once.
    double m[CTM_ITEMS];
    if (ck.fast) {
#pragma unroll
        for (int j = 0; j < CTM_ITEMS; j++) m[j] = (base + v[j]) * inv;
    } else {
#pragma unroll
        for (int j = 0; j < CTM_ITEMS; j++) {
            const ctm_i64 t = t0 + k0 + j;
            const double s = base + v[j];
            m[j] = t < cf ? s / (double)(t + 1) : s * inv;
        }
    }
    enum { WORDS = CtmRound<S>::WORDS };
    unsigned ow[WORDS];
    CtmRound<S>::run(ow, m);

    T* yc = y + ck.r * n + t0;
    if (ck.fast && (((ctm_u64)(yc + k0)) & 15u) == 0u) {  // block-uniform
        ctm_v4* pv = (ctm_v4*)(yc + k0);
        pv[0] = ctm_v4{ow[0], ow[1], ow[2], ow[3]};
        if (WORDS == 8) pv[1] = ctm_v4{ow[WORDS - 4], ow[WORDS - 3], ow[WORDS - 2], ow[WORDS - 1]};
    } else {
        ctm_v4* sv = (ctm_v4*)sh.stage + tid * (WORDS / 4);
        sv[0] = ctm_v4{ow[0], ow[1], ow[2], ow[3]};
        if (WORDS == 8) sv[1] = ctm_v4{ow[WORDS - 4], ow[WORDS - 3], ow[WORDS - 2], ow[WORDS - 1]};
        __syncthreads();
        const T* stage = (const T*)sh.stage;
        for (int k = tid; k < len; k += CTM_THREADS) yc[k] = stage[k];
    }
}

// ctm_pass is the fused pass of one block: G consecutive chunks (flat
// indices G*b ... G*b+G-1, b the block index or, in look-back mode, the
// block's ticket), whose samples are all loaded first so that G chunks'
// loads are in flight at once, then processed one after another. inv is
// 1/cf (rounded to float64), total is rows*chunks.
template <class S, bool LOOKBACK, int G>
__device__ __forceinline__ void ctm_pass(typename S::T* __restrict__ y, const typename S::T* __restrict__ x,
                                         ctm_i64 n, ctm_i64 cf, double inv, ctm_i64 chunks, ctm_i64 total,
                                         unsigned char* state, unsigned epoch)
{
    __shared__ CtmShared<S> sh;
    const int tid = threadIdx.x;

    const CtmState st = ctm_state(state, total);  // unused in direct mode
    ctm_i64 b;
    if (LOOKBACK) {
        if (tid == 0) {
            const unsigned t = atomicAdd(st.counter, 1u);
            if (t == gridDim.x - 1) atomicExch(st.counter, 0u);  // every block has its ticket
            sh.blk = t;
        }
        __syncthreads();
        b = sh.blk;
    } else {
        b = blockIdx.x;
    }
    enum { W = CtmWords<S>::N };
    unsigned xw[G][W], lw[G][W];
    CtmChunk ck[G];
#pragma unroll
    for (int g = 0; g < G; g++) {
        ck[g] = ctm_chunk(b * G + g, n, cf, chunks);
        if (ck[g].blk < total && ck[g].fast) {
            const typename S::T* p = x + ck[g].r * n + ck[g].t0 + tid * CTM_ITEMS;
            CtmWords<S>::load(p, xw[g]);
            CtmWords<S>::load(p - cf, lw[g]);
        }
    }
#pragma unroll
    for (int g = 0; g < G; g++) {
        if (ck[g].blk >= total) break;
        if (g > 0) __syncthreads();  // shared memory of the previous chunk is free
        ctm_one<S, LOOKBACK>(sh, y, x, n, cf, inv, ck[g], xw[g], lw[g], st, epoch);
    }
}

// ---------------------------------------------------------------------------
// The eager formulation: one materialised pass per step, float32
// intermediates, as an eager tensor library runs it.

// CTM_FOR loops i over [0, N), grid-stride along x; CTM_FOR_ROWS loops r
// over [0, rows) along the grid's y.
#define CTM_FOR(i, N) \
    for (ctm_i64 i = (ctm_i64)blockIdx.x * blockDim.x + threadIdx.x; i < (N); i += (ctm_i64)gridDim.x * blockDim.x)
#define CTM_FOR_ROWS(r, rows) for (ctm_i64 r = blockIdx.y; r < (rows); r += gridDim.y)

// ctm_cumsum_row scans one row of n float32 in float32: tiles of 2048, each
// thread sums its 8 elements sequentially, a warp-shuffle and a shared
// memory scan combine the threads, and a running float32 total carries
// from tile to tile.
__device__ void ctm_cumsum_row(float* __restrict__ c, const float* __restrict__ a, ctm_i64 n)
{
    __shared__ float warpSum[CTM_WARPS];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float carry = 0.0f;
    for (ctm_i64 t0 = 0; t0 < n; t0 += CTM_CHUNK) {
        float v[CTM_ITEMS];
        float run = 0.0f;
#pragma unroll
        for (int j = 0; j < CTM_ITEMS; j++) {
            const ctm_i64 t = t0 + tid * CTM_ITEMS + j;
            run += t < n ? a[t] : 0.0f;
            v[j] = run;
        }
        float inc = run;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const float u = __shfl_up_sync(CTM_FULL, inc, o);
            if (lane >= o) inc += u;
        }
        float excl = __shfl_up_sync(CTM_FULL, inc, 1);
        if (lane == 0) excl = 0.0f;
        if (lane == 31) warpSum[warp] = inc;
        __syncthreads();
        float before = 0.0f, total = 0.0f;
#pragma unroll
        for (int w = 0; w < CTM_WARPS; w++) {
            if (w < warp) before += warpSum[w];
            total += warpSum[w];
        }
        __syncthreads();
        const float base = carry + (before + excl);
#pragma unroll
        for (int j = 0; j < CTM_ITEMS; j++) {
            const ctm_i64 t = t0 + tid * CTM_ITEMS + j;
            if (t < n) c[t] = base + v[j];
        }
        carry += total;
    }
}

// ---------------------------------------------------------------------------
// Test data: y[i] = mean + sd * z, z an approximately standard normal value
// (sum of four uniforms, centred and scaled) drawn from a hash of (seed, i).

__device__ __forceinline__ ctm_u64 ctm_mix(ctm_u64 z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__device__ __forceinline__ float ctm_normalish(ctm_u64 seed, ctm_i64 i)
{
    const ctm_u64 a = ctm_mix(seed * 0x9e3779b97f4a7c15ull + (ctm_u64)i);
    const ctm_u64 b = ctm_mix(a + 0x9e3779b97f4a7c15ull);
    const float u = (float)(a & 0xffffffffu) + (float)(a >> 32) + (float)(b & 0xffffffffu) + (float)(b >> 32);
    // Four uniforms on [0, 2^32): mean 2^33, SD 2^32/sqrt(3).
    return (u - 8589934592.0f) * (1.7320508f / 4294967296.0f);
}

extern "C" {

// --- fused pass -------------------------------------------------------------

__global__ void __launch_bounds__(CTM_THREADS, CTM_MIN_BLOCKS)
ctm_direct_f32(float* y, const float* x, ctm_i64 n, ctm_i64 cf, double inv, ctm_i64 chunks, ctm_i64 total)
{
    ctm_pass<CtmF32, false, CTM_GROUP_F32>(y, x, n, cf, inv, chunks, total, 0, 0);
}

__global__ void __launch_bounds__(CTM_THREADS, CTM_MIN_BLOCKS)
ctm_direct_f16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, double inv, ctm_i64 chunks, ctm_i64 total)
{
    ctm_pass<CtmF16, false, CTM_GROUP_16>(y, x, n, cf, inv, chunks, total, 0, 0);
}

__global__ void __launch_bounds__(CTM_THREADS, CTM_MIN_BLOCKS)
ctm_direct_bf16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, double inv, ctm_i64 chunks, ctm_i64 total)
{
    ctm_pass<CtmBF16, false, CTM_GROUP_16>(y, x, n, cf, inv, chunks, total, 0, 0);
}

__global__ void __launch_bounds__(CTM_THREADS, CTM_MIN_BLOCKS)
ctm_lookback_f32(float* y, const float* x, ctm_i64 n, ctm_i64 cf, double inv, ctm_i64 chunks,
                 ctm_i64 total, unsigned char* state, unsigned epoch)
{
    ctm_pass<CtmF32, true, CTM_GROUP_F32>(y, x, n, cf, inv, chunks, total, state, epoch);
}

__global__ void __launch_bounds__(CTM_THREADS, CTM_MIN_BLOCKS)
ctm_lookback_f16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, double inv, ctm_i64 chunks,
                 ctm_i64 total, unsigned char* state, unsigned epoch)
{
    ctm_pass<CtmF16, true, CTM_GROUP_16>(y, x, n, cf, inv, chunks, total, state, epoch);
}

__global__ void __launch_bounds__(CTM_THREADS, CTM_MIN_BLOCKS)
ctm_lookback_bf16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, double inv, ctm_i64 chunks,
                 ctm_i64 total, unsigned char* state, unsigned epoch)
{
    ctm_pass<CtmBF16, true, CTM_GROUP_16>(y, x, n, cf, inv, chunks, total, state, epoch);
}

// --- eager passes -------------------------------------------------------------

__global__ void __launch_bounds__(CTM_THREADS)
ctm_eager_widen_f16(float* a, const ctm_u16* x, ctm_i64 N)
{
    CTM_FOR(i, N) a[i] = CtmF16::load(x[i]);
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_eager_widen_bf16(float* a, const ctm_u16* x, ctm_i64 N)
{
    CTM_FOR(i, N) a[i] = CtmBF16::load(x[i]);
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_eager_cumsum(float* c, const float* a, ctm_i64 n)
{
    const ctm_i64 r = blockIdx.x;
    ctm_cumsum_row(c + r * n, a + r * n, n);
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_eager_pad(float* p, const float* c, ctm_i64 rows, ctm_i64 n, ctm_i64 cf)
{
    CTM_FOR_ROWS(r, rows)
    {
        float* pr = p + r * n;
        const float* cr = c + r * n;
        CTM_FOR(t, n) pr[t] = t < cf ? 0.0f : cr[t - cf];
    }
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_eager_sub(float* w, const float* c, const float* p, ctm_i64 N)
{
    CTM_FOR(i, N) w[i] = c[i] - p[i];
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_eager_count(float* count, ctm_i64 n, ctm_i64 cf)
{
    CTM_FOR(t, n) count[t] = (float)(t + 1 < cf ? t + 1 : cf);
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_eager_div(float* m, const float* w, const float* count, ctm_i64 rows, ctm_i64 n)
{
    CTM_FOR_ROWS(r, rows)
    {
        float* mr = m + r * n;
        const float* wr = w + r * n;
        CTM_FOR(t, n) mr[t] = wr[t] / count[t];
    }
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_eager_narrow_f16(ctm_u16* y, const float* m, ctm_i64 N)
{
    CTM_FOR(i, N) y[i] = (ctm_u16)(ctm_pack_f16(m[i], m[i]) & 0xffffu);
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_eager_narrow_bf16(ctm_u16* y, const float* m, ctm_i64 N)
{
    CTM_FOR(i, N) y[i] = (ctm_u16)(ctm_pack_bf16(m[i], m[i]) & 0xffffu);
}

// --- test data ------------------------------------------------------------------

__global__ void __launch_bounds__(CTM_THREADS)
ctm_fill_f32(float* y, ctm_i64 N, ctm_u64 seed, float mean, float sd)
{
    CTM_FOR(i, N) y[i] = mean + sd * ctm_normalish(seed, i);
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_fill_f16(ctm_u16* y, ctm_i64 N, ctm_u64 seed, float mean, float sd)
{
    CTM_FOR(i, N)
    {
        const float v = mean + sd * ctm_normalish(seed, i);
        y[i] = (ctm_u16)(ctm_pack_f16(v, v) & 0xffffu);
    }
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_fill_bf16(ctm_u16* y, ctm_i64 N, ctm_u64 seed, float mean, float sd)
{
    CTM_FOR(i, N)
    {
        const float v = mean + sd * ctm_normalish(seed, i);
        y[i] = (ctm_u16)(ctm_pack_bf16(v, v) & 0xffffu);
    }
}

}  // extern "C"
