// Memory access of the trailing-mean kernels (included by trailing_mean.cu): types, loads, stores.

// Memory-model and conversion primitives (inline PTX; CTM_EMULATE provides its own).
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

// Storage types: load widens an element to float (exactly); pack rounds two means into a word.

// ctm_bits returns an element's bits.
__device__ __forceinline__ unsigned ctm_bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned ctm_bits(ctm_u16 v) { return v; }

struct alignas(16) ctm_v4 {
    unsigned x, y, z, w;
};

// ctm_ldx loads a 16-byte vector of samples.
__device__ __forceinline__ ctm_v4 ctm_ldx(const ctm_v4* __restrict__ p) { return *p; }

struct CtmF32 {
    typedef float T;
    enum { VEC = 4 };
    static __device__ __forceinline__ float load(float v) { return v; }
};

struct CtmF16 {
    typedef ctm_u16 T;
    enum { VEC = 8 };
    static __device__ __forceinline__ float load(ctm_u16 v) { return ctm_h2f(v); }
    static __device__ __forceinline__ unsigned pack(float lo, float hi) { return ctm_pack_f16(lo, hi); }
};

struct CtmBF16 {
    typedef ctm_u16 T;
    enum { VEC = 8 };
    static __device__ __forceinline__ float load(ctm_u16 v) { return __uint_as_float((unsigned)v << 16); }
    static __device__ __forceinline__ unsigned pack(float lo, float hi) { return ctm_pack_bf16(lo, hi); }
};

// CtmRound<S>::run<N> rounds the N means m to S into words as they lie in memory.
template <class S> struct CtmRound;

template <> struct CtmRound<CtmF32> {
    enum { WORDS8 = 8 };
    template <int N> static __device__ __forceinline__ void run(unsigned* w, const float* m)
    {
#pragma unroll
        for (int j = 0; j < N; j++) w[j] = __float_as_uint(m[j]);
    }
};

template <class S> struct CtmRound16 {
    enum { WORDS8 = 4 };
    template <int N> static __device__ __forceinline__ void run(unsigned* w, const float* m)
    {
#pragma unroll
        for (int i = 0; i < N / 2; i++) w[i] = S::pack(m[2 * i], m[2 * i + 1]);
    }
};
template <> struct CtmRound<CtmF16> : CtmRound16<CtmF16> {};
template <> struct CtmRound<CtmBF16> : CtmRound16<CtmBF16> {};

// ctm_ldn_*<M, N> load p[0..N-1] as the 32-bit words they occupy (16-bit element 2i in bits 0-15
// of word i) from the 16-byte vectors covering them; q = p - M is aligned. ctm_ldn8: 8-byte loads.
template <int N2> __device__ __forceinline__ void ctm_ldn8(const void* __restrict__ p, unsigned* o)
{
    const uint2* v = (const uint2*)p;
#pragma unroll
    for (int i = 0; i < N2; i++) {
        const uint2 a = v[i];
        o[2 * i] = a.x, o[2 * i + 1] = a.y;
    }
}

template <int M, int N>
__device__ __forceinline__ void ctm_ldn_f32(const float* __restrict__ q, unsigned* o)
{
    if constexpr (M == 2) {  // 8-byte aligned
        ctm_ldn8<N / 2>(q + 2, o);
        return;
    }
    enum { NV = N / 4 + (M != 0) };
    const ctm_v4* v = (const ctm_v4*)q;
    unsigned w[4 * NV];
#pragma unroll
    for (int i = 0; i < NV; i++) {
        const ctm_v4 a = ctm_ldx(v + i);
        w[4 * i] = a.x, w[4 * i + 1] = a.y, w[4 * i + 2] = a.z, w[4 * i + 3] = a.w;
    }
#pragma unroll
    for (int j = 0; j < N; j++) o[j] = w[M + j];
}

template <int M, int N>
__device__ __forceinline__ void ctm_ldn_u16(const ctm_u16* __restrict__ q, unsigned* o)
{
    if constexpr (M == 4) {  // 8-byte aligned
        ctm_ldn8<N / 4>(q + 4, o);
        return;
    }
    enum { NV = N / 8 + (M != 0) };
    const ctm_v4* v = (const ctm_v4*)q;
    unsigned w[4 * NV];
#pragma unroll
    for (int i = 0; i < NV; i++) {
        const ctm_v4 a = ctm_ldx(v + i);
        w[4 * i] = a.x, w[4 * i + 1] = a.y, w[4 * i + 2] = a.z, w[4 * i + 3] = a.w;
    }
#pragma unroll
    for (int i = 0; i < N / 2; i++) {
        if (M % 2 == 0) {
            o[i] = w[M / 2 + i];
        } else {
            o[i] = __byte_perm(w[M / 2 + i], w[M / 2 + i + 1], 0x5432);
        }
    }
}

// CtmWords<S>: WORDS8 words hold 8 elements; load<N> loads p[0..N-1]; get returns element j.
template <class S> struct CtmWords;

template <> struct CtmWords<CtmF32> {
    enum { WORDS8 = 8 };
    template <int N> static __device__ __forceinline__ void load(const float* __restrict__ p, unsigned* o)
    {
        const int m = (int)(((ctm_u64)p >> 2) & 3u);
        const float* q = p - m;
        switch (m) {
        case 0: ctm_ldn_f32<0, N>(q, o); break;
        case 1: ctm_ldn_f32<1, N>(q, o); break;
        case 2: ctm_ldn_f32<2, N>(q, o); break;
        default: ctm_ldn_f32<3, N>(q, o); break;
        }
    }
    // loadA is load for a 16-byte aligned p.
    template <int N> static __device__ __forceinline__ void loadA(const float* __restrict__ p, unsigned* o)
    {
        ctm_ldn_f32<0, N>(p, o);
    }
    static __device__ __forceinline__ float get(const unsigned* w, int j) { return __uint_as_float(w[j]); }
};

template <class S> struct CtmWords16 {
    enum { WORDS8 = 4 };
    template <int N> static __device__ __forceinline__ void load(const ctm_u16* __restrict__ p, unsigned* o)
    {
        const int m = (int)(((ctm_u64)p >> 1) & 7u);
        const ctm_u16* q = p - m;
        switch (m) {
        case 0: ctm_ldn_u16<0, N>(q, o); break;
        case 1: ctm_ldn_u16<1, N>(q, o); break;
        case 2: ctm_ldn_u16<2, N>(q, o); break;
        case 3: ctm_ldn_u16<3, N>(q, o); break;
        case 4: ctm_ldn_u16<4, N>(q, o); break;
        case 5: ctm_ldn_u16<5, N>(q, o); break;
        case 6: ctm_ldn_u16<6, N>(q, o); break;
        default: ctm_ldn_u16<7, N>(q, o); break;
        }
    }
    template <int N> static __device__ __forceinline__ void loadA(const ctm_u16* __restrict__ p, unsigned* o)
    {
        ctm_ldn_u16<0, N>(p, o);
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

// ctm_load_pair loads N samples at the aligned xa into xo and N at p into o: each case of one
// switch on p's misalignment issues all loads of both, so those at p do not wait for xa's.
template <class S, int M, int N>
__device__ __forceinline__ void ctm_load_pair_m(const typename S::T* __restrict__ xa,
                                                const typename S::T* __restrict__ q, unsigned* xo, unsigned* o)
{
    CtmWords<S>::template loadA<N>(xa, xo);
    if constexpr (sizeof(typename S::T) == 4) {
        ctm_ldn_f32<M, N>(q, o);
    } else {
        ctm_ldn_u16<M, N>(q, o);
    }
}

template <class S, int N>
__device__ __forceinline__ void ctm_load_pair(const typename S::T* __restrict__ xa,
                                              const typename S::T* __restrict__ p, unsigned* xo, unsigned* o)
{
    typedef typename S::T T;
    constexpr int VEC = 16 / (int)sizeof(T);
    const int m = (int)(((ctm_u64)p / sizeof(T)) & (VEC - 1));
    const T* q = p - m;
    if constexpr (VEC == 4) {
        switch (m) {
        case 0: ctm_load_pair_m<S, 0, N>(xa, q, xo, o); break;
        case 1: ctm_load_pair_m<S, 1, N>(xa, q, xo, o); break;
        case 2: ctm_load_pair_m<S, 2, N>(xa, q, xo, o); break;
        default: ctm_load_pair_m<S, 3, N>(xa, q, xo, o); break;
        }
    } else {
        switch (m) {
        case 0: ctm_load_pair_m<S, 0, N>(xa, q, xo, o); break;
        case 1: ctm_load_pair_m<S, 1, N>(xa, q, xo, o); break;
        case 2: ctm_load_pair_m<S, 2, N>(xa, q, xo, o); break;
        case 3: ctm_load_pair_m<S, 3, N>(xa, q, xo, o); break;
        case 4: ctm_load_pair_m<S, 4, N>(xa, q, xo, o); break;
        case 5: ctm_load_pair_m<S, 5, N>(xa, q, xo, o); break;
        case 6: ctm_load_pair_m<S, 6, N>(xa, q, xo, o); break;
        default: ctm_load_pair_m<S, 7, N>(xa, q, xo, o); break;
        }
    }
}

// Shared memory of one block.
template <class S> struct CtmShared {
    float warpRunF[CTM_WARPS];  // look-back: per-warp sums of the differences
    float warpRunL[CTM_WARPS];  //   and their low parts (guarded chunks)
    float warpPreH[CTM_WARPS];  //   per-warp compensated sums of the exact
    float warpPreL[CTM_WARPS];  //   differences, float32 pairs
    float prefixH, prefixL;     //   the chunk's s_in as a pair
    ctm_i64 blk;                //   the block's ticket
    // Outputs as they lie in memory, when not stored as vectors.
    alignas(16) unsigned stage[CTM_CHUNK * sizeof(typename S::T) / 4];
};

// Where a chunk lies: flat index blk = row * chunks + c.
struct CtmChunk {
    ctm_i64 blk, r, c, t0;
    int len;
    bool full;  // CTM_CHUNK samples: vector loads and stores
    bool fast;  // full, and every lagged sample in the row: no bound checks
};

// ctm_chunk_rc locates chunk c of row r.
__device__ __forceinline__ CtmChunk ctm_chunk_rc(unsigned r, unsigned c, ctm_i64 n, ctm_i64 cf, ctm_i64 chunks)
{
    CtmChunk k;
    k.blk = (ctm_i64)r * chunks + c;
    k.r = r;
    k.c = c;
    k.t0 = k.c * CTM_CHUNK;
    k.len = (int)(n - k.t0 < CTM_CHUNK ? n - k.t0 : CTM_CHUNK);
    k.full = k.len == CTM_CHUNK;
    k.fast = k.full && k.t0 >= cf;
    return k;
}

// ctm_chunk locates the chunk of flat index blk.
__device__ __forceinline__ CtmChunk ctm_chunk(ctm_i64 blk, ctm_i64 n, ctm_i64 cf, ctm_i64 chunks)
{
    // blk < rows*chunks < 2^31 (checked by the host): 32-bit division.
    const unsigned r = (unsigned)blk / (unsigned)chunks;
    return ctm_chunk_rc(r, (unsigned)blk - r * (unsigned)chunks, n, cf, chunks);
}

// ctm_load_chunk loads this thread's samples of the full chunk ck and lagged ones (zero before the
// row). XALIGNED: the samples are 16-byte aligned.
template <class S, int ITEMS, bool XALIGNED = false>
__device__ __forceinline__ void ctm_load_chunk(const typename S::T* __restrict__ x, ctm_i64 n, ctm_i64 cf,
                                               const CtmChunk& ck, unsigned* xw, unsigned* lw)
{
    typedef typename S::T T;
    const T* row = x + ck.r * n;
    const ctm_i64 ts = ck.t0 + threadIdx.x * ITEMS;
    if constexpr (XALIGNED) {
        if (ts >= cf) {
            ctm_load_pair<S, ITEMS>(row + ts, row + ts - cf, xw, lw);
            return;
        }
        CtmWords<S>::template loadA<ITEMS>(row + ts, xw);
    } else {
        CtmWords<S>::template load<ITEMS>(row + ts, xw);
    }
    if (ts >= cf) {
        CtmWords<S>::template load<ITEMS>(row + ts - cf, lw);
    } else if constexpr (sizeof(T) == 4) {
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const ctm_i64 i = ts + j - cf;
            lw[j] = i >= 0 ? __float_as_uint(row[i]) : 0u;
        }
    } else {
#pragma unroll
        for (int j = 0; j < ITEMS / 2; j++) {
            const ctm_i64 i = ts + 2 * j - cf;
            lw[j] = (i >= 0 ? (unsigned)row[i] : 0u) | (i + 1 >= 0 ? (unsigned)row[i + 1] << 16 : 0u);
        }
    }
}

// ctm_load_short loads, one at a time, this thread's samples of a short last chunk (zero past the
// row) and lagged samples (zero before the row; kept past it at k < cf, for s_in).
template <class S, int ITEMS, bool WARP = false>
__device__ __forceinline__ void ctm_load_short(const typename S::T* __restrict__ x, ctm_i64 n, ctm_i64 cf,
                                               const CtmChunk& ck, unsigned* xw, unsigned* lw)
{
    typedef typename S::T T;
    const T* row = x + ck.r * n;
    const int k0 = threadIdx.x * ITEMS;
    // WARP: s_in is per warp (lagged samples of its first cf positions).
    const int kb = WARP ? (int)(threadIdx.x & ~31u) * ITEMS : 0;
    const bool live = kb < ck.len;
    unsigned xb[ITEMS], lb[ITEMS];  // element bits
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const int k = k0 + j;
        const ctm_i64 t = ck.t0 + k;
        xb[j] = k < ck.len ? (unsigned)ctm_bits(row[t]) : 0u;
        lb[j] = (k < ck.len || (k - kb < cf && live)) && t >= cf ? (unsigned)ctm_bits(row[t - cf]) : 0u;
    }
#pragma unroll
    for (int i = 0; i < ITEMS * (int)CtmWords<S>::WORDS8 / 8; i++) {
        if (sizeof(T) == 4) {
            xw[i] = xb[i], lw[i] = lb[i];
        } else {
            xw[i] = xb[2 * i] | xb[2 * i + 1] << 16, lw[i] = lb[2 * i] | lb[2 * i + 1] << 16;
        }
    }
}

// ctm_store writes the words ow at yc: vector stores if fast and aligned, else through shared memory.
template <class S, int ITEMS>
__device__ __forceinline__ void ctm_store(CtmShared<S>& sh, typename S::T* __restrict__ yc, bool fast, int len,
                                          const unsigned* ow)
{
    typedef typename S::T T;
    constexpr int VECS = ITEMS * (int)CtmRound<S>::WORDS8 / 32, THREADS = CTM_CHUNK / ITEMS;
    const int tid = threadIdx.x, k0 = tid * ITEMS;
    ctm_v4* dst;
    const bool direct = fast && (((ctm_u64)(yc + k0)) & 15u) == 0u;  // block-uniform
    if (direct) {
        dst = (ctm_v4*)(yc + k0);
    } else {
        dst = (ctm_v4*)sh.stage + tid * VECS;
    }
#pragma unroll
    for (int i = 0; i < VECS; i++) dst[i] = ctm_v4{ow[4 * i], ow[4 * i + 1], ow[4 * i + 2], ow[4 * i + 3]};
    if (!direct) {
        __syncthreads();
        const T* stage = (const T*)sh.stage;
        for (int k = tid; k < len; k += THREADS) yc[k] = stage[k];
    }
}
