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
// NUMERICS: float32 arithmetic, compensated where errors would otherwise
// accumulate along the row. Within a chunk of 2048 samples the differences
// x[t] - x[t-cf] and their running sums are plain float32 (8 or 16 per
// thread, then a warp-shuffle scan and a block scan: at most 27 roundings
// deep). The chunk's carried-in window sum s_in is exact to about 2^-42 of
// the magnitudes it sums: the direct and warp kernels recompute it from
// the chunk's own cf lagged samples, summed in float64 (the only float64
// arithmetic of the common path: at most ITEMS conversions per thread, in
// the threads that hold positions k < cf); the look-back kernels add, in
// float64, the published sums of the chunks before, each the compensated
// sum of the exact differences (TwoSum per pair). The 16-bit warp kernels
// sum s_in in float32 instead (CtmSin32; at most ITEMS/4 + 6 = 10
// roundings deep, so within 10 float32 units of the magnitudes summed, far
// below half a unit of the 8 or 11 bits their means keep): no float64
// conversions, half the shuffles, 0.86 against 0.82 of copy bandwidth for
// bfloat16 on the H200. Either way the error does not grow with the row.
//
// A row's first chunk has no lagged samples. In the direct and warp kernels its
// positions k < cf put x[k] into s_in (compensated) instead of into the
// running sums, so that positions k >= cf see s_in = x[0] + ... + x[cf-1]
// plus true differences, as in every other chunk, whatever the data; the
// positions k < cf themselves are compensated prefix sums (a pair scan in
// the warps that hold them) divided by k + 1. Except in the 16-bit warp
// kernels: there a row's first warp takes the common path (its lagged
// samples before the row are zero, so s_in = 0 and the running sums are
// plain float32 prefix sums) and rescales its means at k < cf by
// cf/(k + 1); the compensated path, taken by one warp in 16, held its
// block and made the kernel spill: 0.86 against 0.93-0.98 of copy
// bandwidth on the H200. Each other mean is q0 +
// v/cf by one FMA: q0 = (s_in + the running sums before the thread's)/cf,
// computed once per thread as the product with 1/cf corrected by its FMA
// residual (ctm_direct_means). The look-back kernels carry the running
// sums of a row's first chunks and of short last chunks as TwoSum pairs
// ("guarded" chunks), add s_in last as a float32 pair and correct each
// quotient (ctm_chunk32). Every mean is rounded once to the storage type
// (cvt.rn). So the error of a mean is a few float32 units of the
// magnitudes summed within its own chunk and does not grow with the row
// length: on samples of mean 1000 and SD 1 it stays within one float32
// unit of the mean (1.0 measured; fp32Tolerance in the tests states the
// bound).
//
// Why not float64 as on the CPU: float32<->float64 conversions issue at a
// low rate on the H200. A float64 version of this kernel (samples widened,
// sums carried in float64, round-to-odd stores) ran at 0.33 G samples/ms:
// 62 % of copy bandwidth for float32 and 26 % for bfloat16, limited by its
// three conversions per sample; the float32 version needs none.
//
// LAYOUT. A chunk is CTM_CHUNK = 2048 samples of one row (the warp
// kernels: 32*I samples, a warp's; see below); chunks =
// ceil(n/2048) per row, total = rows*chunks, so long rows spread over the
// whole GPU. A block has CTM_CHUNK/I threads of I consecutive samples each
// (I = CTM_ITEMS_F32 = 8 for float32: 256 threads; CTM_ITEMS_16 = 16 for
// the 16-bit types: 128 threads, so that a thread's samples are two 16-byte
// vectors and the per-chunk work is spread over twice the samples). A
// direct block handles one chunk on a 2D grid (chunk along x, row along y
// and z: no division to locate it). As options for benchmarks, a direct
// block can handle G consecutive chunks (flat index row*chunks + c; G =
// CTM_GROUP_F32 for float32, CTM_GROUP_16 for the 16-bit types), issuing
// the loads of all of them before processing them in order, on a 1D grid
// of ceil(total/G) blocks, or be persistent (CTM_PERSIST: a few blocks per
// multiprocessor, looping); both were slower on the H200. A look-back
// block handles one chunk (grid = total). For each full chunk, thread i
// loads samples I*i..I*i+I-1 and the lagged samples x[t-cf] of the same
// positions with 16-byte vector loads; when the chunk, or its lagged range,
// is not 16-byte aligned, each thread loads the aligned vectors that cover
// its samples and shifts by the (block-uniform) misalignment (8-byte loads
// where that misalignment is half a vector). Threads whose lagged samples
// start before the row (the first cf/I threads of a row's first chunk)
// load those one by one, zero before the row; the short last chunk of a row
// loads sample by sample with bound checks. Lagged samples come from L1/L2
// (a neighbouring block read them moments before) unless cf is very long.
// Outputs of full chunks are stored with 16-byte vectors when aligned,
// otherwise staged through shared memory and stored coalesced. Per chunk:
// one warp-shuffle scan and one __syncthreads (two with look-back, none in
// the warp kernels).
//
// CARRIED-IN WINDOW SUM. Position t0 of a chunk needs s_in = x[t0-cf] + ...
// + x[t0-1]:
//
//   * ctm_warp_<type> (cf <= 32*I, I = CTM_WARP_ITEMS_F32 = 8 for float32,
//     CTM_WARP_ITEMS_16 = 16 for the 16-bit types: 256 and 512 samples):
//     the direct kernel's grid and loads, but every warp's 32*I positions
//     are a chunk of their own, whose s_in is the sum of the lagged samples
//     of the warp's first cf positions (held by its own lanes): no shared
//     memory, no barrier, each warp stores as soon as its samples have
//     arrived (ctm_warp_means).
//         ctm_warp_<type><<<(chunks, min(rows, 65535), ceil(rows/65535)),
//                           2048/I>>>(y, x, n, cf, 1.0/cf, chunks, total)
//
//   * ctm_direct_<type> (cf <= CTM_CHUNK): s_in is the sum of the lagged
//     samples of the chunk's first cf positions, which the block loads
//     anyway: no extra traffic, no communication between blocks; one
//     barrier hands it to the block's other warps (ctm_direct_means).
//         ctm_direct_<type><<<(chunks, min(rows, 65535), ceil(rows/65535)),
//                             2048/I>>>(y, x, n, cf, 1.0/cf, chunks, total)
//     (with CTM_GROUP_* > 1 or CTM_PERSIST: a 1D grid, see LAYOUT.)
//
//   * ctm_lookback_<type> (any cf): single-pass chained scan with decoupled
//     look-back. Each block takes the next chunk from a ticket counter (so
//     a block only ever waits on blocks that started before it), publishes
//     the float64 sum D of (x[t] - x[t-cf]) over the chunk, then sums the
//     published values of the chunks before it in its row (warp 0, 32 at a
//     time, back to the first one that has published its inclusive prefix),
//     publishes its own inclusive prefix, and writes its means. (With
//     several chunks per block a chunk's sum would wait for its block's
//     earlier chunks' look-backs: the chain would serialise.)
//         ctm_lookback_<type><<<total, 2048/I>>>(y, x, n, cf, 1.0/cf,
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
// inv = 1/cf rounded to float, epoch an unsigned):
//   ctm_warp_{f32,f16,bf16}(y, x, n, cf, inv, chunks, total)
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
#define CTM_CHUNK 2048
#define CTM_WARPS (CTM_THREADS / 32)
#define CTM_FULL 0xffffffffu

// Samples per thread of the fused kernels (CTM_ITEMS_F32 for float32,
// CTM_ITEMS_16 for the 16-bit types): 8 or 16. A chunk is always CTM_CHUNK
// samples, so a fused block has CTM_CHUNK / items threads (256 or 128).
// More samples per thread spread the per-chunk work (index arithmetic, the
// scans, the barrier) over more samples and put more bytes in flight per
// thread.
#ifndef CTM_ITEMS_F32
#define CTM_ITEMS_F32 8
#endif
#ifndef CTM_ITEMS_16
#define CTM_ITEMS_16 16
#endif
#define CTM_THREADS_F32 (CTM_CHUNK / CTM_ITEMS_F32)
#define CTM_THREADS_16 (CTM_CHUNK / CTM_ITEMS_16)
static_assert((CTM_ITEMS_F32 == 8 || CTM_ITEMS_F32 == 16) && (CTM_ITEMS_16 == 8 || CTM_ITEMS_16 == 16),
              "trailing_mean.cu: CTM_ITEMS_F32 and CTM_ITEMS_16 must be 8 or 16");

// Minimum resident threads per multiprocessor asked of the compiler for the
// fused kernels, in units of 256 threads (CTM_MIN_BLOCKS_F32 for float32,
// CTM_MIN_BLOCKS_16 for the 16-bit types; CTM_MIN_BLOCKS sets both): a
// register budget (7 and 8: 32 registers per thread, 6: 40, 5: 48); 1
// leaves it to the compiler. The defaults are the fastest measured on the
// H200 without spills (float32 7, 16-bit 5). CTM_MINB_F32 and CTM_MINB_16
// are the same budgets in blocks.
#ifdef CTM_MIN_BLOCKS
#define CTM_MIN_BLOCKS_F32 CTM_MIN_BLOCKS
#define CTM_MIN_BLOCKS_16 CTM_MIN_BLOCKS
#endif
#ifndef CTM_MIN_BLOCKS_F32
#define CTM_MIN_BLOCKS_F32 7
#endif
#ifndef CTM_MIN_BLOCKS_16
#define CTM_MIN_BLOCKS_16 5
#endif
#define CTM_MINB_F32 (CTM_MIN_BLOCKS_F32 * CTM_THREADS / CTM_THREADS_F32)
#define CTM_MINB_16 (CTM_MIN_BLOCKS_16 * CTM_THREADS / CTM_THREADS_16)

// The warp kernels' samples per thread (CTM_WARP_ITEMS_F32, 8 or 16;
// CTM_WARP_ITEMS_16, 8, 16 or 32: a block has CTM_CHUNK / items threads,
// a warp 32 * items samples, the longest window the kernel takes) and
// register budgets (CTM_WARP_MIN_BLOCKS_*, in units of 256 threads as
// CTM_MIN_BLOCKS_*; 6 by default for both, 40 registers: measured fastest
// on the H200 (the 16-bit kernels spill a few bytes there, and are still
// 1-2 % faster than at 5, 47 registers, no spills); CTM_MIN_BLOCKS sets
// both).
#ifndef CTM_WARP_ITEMS_F32
#define CTM_WARP_ITEMS_F32 CTM_ITEMS_F32
#endif
#ifndef CTM_WARP_ITEMS_16
#define CTM_WARP_ITEMS_16 CTM_ITEMS_16
#endif
#ifndef CTM_WARP_MIN_BLOCKS_F32
#ifdef CTM_MIN_BLOCKS
#define CTM_WARP_MIN_BLOCKS_F32 CTM_MIN_BLOCKS
#else
#define CTM_WARP_MIN_BLOCKS_F32 6  // 40 registers: the fastest measured on the H200
#endif
#endif
#ifndef CTM_WARP_MIN_BLOCKS_16
#ifdef CTM_MIN_BLOCKS
#define CTM_WARP_MIN_BLOCKS_16 CTM_MIN_BLOCKS
#else
#define CTM_WARP_MIN_BLOCKS_16 6
#endif
#endif
static_assert((CTM_WARP_ITEMS_F32 == 8 || CTM_WARP_ITEMS_F32 == 16) &&
                  (CTM_WARP_ITEMS_16 == 8 || CTM_WARP_ITEMS_16 == 16 || CTM_WARP_ITEMS_16 == 32),
              "trailing_mean.cu: CTM_WARP_ITEMS_F32 must be 8 or 16, CTM_WARP_ITEMS_16 8, 16 or 32");
#define CTM_WARP_THREADS_F32 (CTM_CHUNK / CTM_WARP_ITEMS_F32)
#define CTM_WARP_THREADS_16 (CTM_CHUNK / CTM_WARP_ITEMS_16)
#define CTM_WARP_MINB_F32 (CTM_WARP_MIN_BLOCKS_F32 * CTM_THREADS / CTM_WARP_THREADS_F32)
#define CTM_WARP_MINB_16 (CTM_WARP_MIN_BLOCKS_16 * CTM_THREADS / CTM_WARP_THREADS_16)

// Chunks per block of the direct kernels (CTM_GROUP_F32 for float32,
// CTM_GROUP_16 for the 16-bit types): a block loads the samples of all its
// chunks before processing them one by one, so that more bytes are in
// flight per block.
#ifndef CTM_GROUP_F32
#define CTM_GROUP_F32 1
#endif
#ifndef CTM_GROUP_16
#define CTM_GROUP_16 1
#endif

// CTM_PERSIST 1 makes the direct kernels persistent: launched with fewer
// blocks than groups of chunks (a few per multiprocessor), each block
// takes every gridDim.x-th group and loads the next group's samples before
// it processes the current one (software pipelining), so that loads stay
// in flight while it computes. 0: one group per block.
#ifndef CTM_PERSIST
#define CTM_PERSIST 0
#endif

// Memory-access variants of the direct kernels' full chunks (benchmarks):
//   CTM_LAG_AFTER 1: the lagged samples are loaded only once the thread's
//     own samples have arrived (a false dependency), so that those within
//     the chunk are L1 hits rather than a second request to L2.
//   CTM_XLOAD_WARP 1: each warp loads its 32 threads' samples coalesced
//     (lane l the 16-byte vectors l, l + 32, ... of the warp's range) and
//     hands them to their threads through shared memory (__syncwarp only).
//   CTM_STORE_WARP 1: the same for the stores (rounded outputs staged in
//     shared memory by thread, stored coalesced by lane).
//   CTM_ST_CS 1: vector stores with the streaming (evict-first) hint.
//   CTM_LDX_HINT 1 / 2: the samples' vector loads with an L2 fetch-size
//     hint of 256 / 128 bytes.
#ifndef CTM_LAG_AFTER
#define CTM_LAG_AFTER 0
#endif
#ifndef CTM_XLOAD_WARP
#define CTM_XLOAD_WARP 0
#endif
#ifndef CTM_STORE_WARP
#define CTM_STORE_WARP 0
#endif
#ifndef CTM_ST_CS
#define CTM_ST_CS 0
#endif
#ifndef CTM_LDX_HINT
#define CTM_LDX_HINT 0
#endif

// Ablations (benchmarks only; the results are wrong in general): what the
// direct kernels' parts cost. CTM_ABL_XALIGNED 1: the samples loaded as if
// 16-byte aligned; CTM_ABL_LAGMIS m >= 0: the lagged samples loaded as if
// misaligned by m elements (m = (-cf) mod VEC is right for aligned rows);
// CTM_ABL_COMPUTE 1: outputs x[t] - x[t-cf] (no scan, no barrier), 2:
// outputs x[t] (a copy with the kernel's loads and stores).
// CTM_SIN64_16 (benchmarks): the 16-bit warp kernels sum s_in in float64,
// as the float32 one does (the default until 2026-11-29: 0.82 of copy
// against 0.86 at [4096, 8192] bfloat16).
#ifndef CTM_SIN64_16
#define CTM_SIN64_16 0
#endif
// CTM_LOAD_SEQ (benchmarks): rows of whole vectors load their samples,
// then switch on the lagged samples' misalignment (before 2026-11-29).
#ifndef CTM_LOAD_SEQ
#define CTM_LOAD_SEQ 0
#endif
#ifndef CTM_ABL_XALIGNED
#define CTM_ABL_XALIGNED 0
#endif
#ifndef CTM_ABL_LAGMIS
#define CTM_ABL_LAGMIS -1
#endif
#ifndef CTM_ABL_COMPUTE
#define CTM_ABL_COMPUTE 0
#endif
// CTM_ABL_PART (the warp kernels' common path): 1 no carried-in sum (s_in
// = 0), 2 no warp scan, 3 neither, 4 no in-lane running sums (each
// output its own difference), 5 a row's first warp takes the common path.
#ifndef CTM_ABL_PART
#define CTM_ABL_PART 0
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

// CTM_TRACE (benchmarks only, never in the emulator): every direct block of
// one chunk records, from lane 0 of each warp, the SM's cycle counter at
// entry (point 0), once the warp's samples have arrived (1), after the
// block's barrier (2) and after its stores are issued (3); thread 0 then
// writes CTM_TRACE_WORDS words per block to ctm_trace_buf (set by
// ctm_trace_set), at the chunk's flat index: the SM id, warp 0's points,
// the last warp's points, the earliest and latest point 1 of any warp, and
// the global timer (ns) at entry and at the end.
#ifdef CTM_TRACE
#define CTM_TRACE_WORDS 16
__device__ ctm_u64* ctm_trace_buf;
__shared__ ctm_u64 ctm_tp[CTM_WARPS][4];
__shared__ float ctm_tsink[CTM_WARPS];

// ctm_trace_point records point i of this warp after v is computed.
__device__ __forceinline__ void ctm_trace_point(int i, float v)
{
    if ((threadIdx.x & 31) == 0) {
        ((volatile float*)ctm_tsink)[threadIdx.x >> 5] = v;
        ctm_u64 t;
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
        ctm_tp[threadIdx.x >> 5][i] = t;
    }
}

__device__ __forceinline__ ctm_u64 ctm_globaltimer()
{
    ctm_u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

// ctm_trace_end writes the block's record (all threads call it).
__device__ __forceinline__ void ctm_trace_end(ctm_i64 blk, ctm_u64 g0)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        const int warps = blockDim.x / 32;
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        ctm_u64* r = ctm_trace_buf + blk * CTM_TRACE_WORDS;
        ctm_u64 lo = ~0ull, hi = 0;
        for (int w = 0; w < warps; w++) {
            lo = ctm_tp[w][1] < lo ? ctm_tp[w][1] : lo;
            hi = ctm_tp[w][1] > hi ? ctm_tp[w][1] : hi;
        }
        r[0] = smid;
        for (int i = 0; i < 4; i++) r[1 + i] = ctm_tp[0][i], r[5 + i] = ctm_tp[warps - 1][i];
        r[9] = lo, r[10] = hi, r[11] = g0, r[12] = ctm_globaltimer();
    }
}
#define CTM_TP(i, v) ctm_trace_point(i, v)
#else
#define CTM_TP(i, v) ((void)0)
#endif

// ---------------------------------------------------------------------------
// Storage types. VEC is the number of elements in 16 bytes; load widens one
// element to float (exactly); pack8 rounds 8 means and packs them into a
// 16-byte vector (16-bit types) or two (float32).

// ctm_bits returns an element's bits.
__device__ __forceinline__ unsigned ctm_bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned ctm_bits(ctm_u16 v) { return v; }

struct alignas(16) ctm_v4 {
    unsigned x, y, z, w;
};

// ctm_ldx loads a 16-byte vector of samples (CTM_LDX_HINT: with an L2
// fetch-size hint).
__device__ __forceinline__ ctm_v4 ctm_ldx(const ctm_v4* __restrict__ p)
{
#if CTM_LDX_HINT && !defined(CTM_EMULATE)
    ctm_v4 v;
#if CTM_LDX_HINT == 1
    asm("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
#else
    asm("ld.global.nc.L2::128B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
#endif
    return v;
#else
    return *p;
#endif
}

// ctm_stv stores a 16-byte vector of outputs (CTM_ST_CS: streaming).
__device__ __forceinline__ void ctm_stv(ctm_v4* __restrict__ p, ctm_v4 v)
{
#if CTM_ST_CS && !defined(CTM_EMULATE)
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
#else
    *p = v;
#endif
}

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

// CtmRound<S>::run<N> rounds the N float32 means m to the storage type
// (nearest even) and packs them into N*WORDS8/8 32-bit words as they lie in
// memory (element 2i of a 16-bit type in bits 0-15 of word i).
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

// ---------------------------------------------------------------------------
// Loading N (8 or 16) consecutive elements p[0..N-1] with 16-byte vector
// loads, as the 32-bit words they occupy (N for float32, N/2 for the 16-bit
// types, element 2i in bits 0-15 of word i). M (0 <= M < VEC) is p's
// misalignment in elements: q = p - M is 16-byte aligned, and the aligned
// vectors covering p[0..N-1] are loaded (each holds at least one of the N,
// so none reaches past the memory the N live in).

// ctm_ldn8 loads the 2*N2 32-bit words at the 8-byte aligned p with 8-byte
// loads (fewer registers than the covering 16-byte vectors).
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

// CtmWords<S>: WORDS8 words hold 8 elements; load<N> loads p[0..N-1]
// (N*WORDS8/8 words); get returns element j of the loaded words as a float.
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

// ctm_load_pair loads N samples at the 16-byte aligned xa into xo and N at
// p (any alignment) into o (CtmWords<S> words): one switch on p's
// misalignment, each case issuing all the loads of both. (Loading xa
// first and switching after it made the compiler copy xa's registers
// before the switch, which waits for them: the loads at p went out only
// once xa's samples had arrived, two memory latencies per warp.)
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

// CtmItems<S>: samples per thread of the fused kernels for S.
template <class S> struct CtmItems {
    enum { N = CTM_ITEMS_16 };
};
template <> struct CtmItems<CtmF32> {
    enum { N = CTM_ITEMS_F32 };
};

// CtmSin32<S>::value: the warp kernels sum the carried-in window sum s_in
// in float32 (the 16-bit types, unless CTM_SIN64_16) rather than float64.
template <class S> struct CtmSin32 {
    static constexpr bool value = !CTM_SIN64_16;
};
template <> struct CtmSin32<CtmF32> {
    static constexpr bool value = false;
};

// ---------------------------------------------------------------------------
// Warp-level float64 primitives (all 32 lanes must call them).

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
// (0 in lane 0). All 32 lanes must call it.
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
// The fused pass.

// Shared memory of one block.
template <class S> struct CtmShared {
    float warpRunF[CTM_WARPS];  // per-warp sums of the differences
    float warpRunL[CTM_WARPS];  //   and their low parts (guarded chunks)
    float warpPreH[CTM_WARPS];  // per-warp compensated sums (s_in or the
    float warpPreL[CTM_WARPS];  //   chunk's exact sum), float32 pairs
                                // (CTM_WARPS: the most warps of a block)
    float prefixH, prefixL;     // look-back: the chunk's s_in as a pair
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

// ctm_load_chunk loads this thread's ITEMS samples of the full chunk ck
// and their lagged samples (zero before the row start) as the words
// CtmWords<S>::load gives: vector loads, except for the lagged samples of
// threads whose first lagged sample lies before the row start (the first
// threads of a row's first chunks), which load them one by one.
// XALIGNED: the caller knows the thread's samples to be 16-byte aligned
// (rows of whole vectors).
template <class S, int ITEMS, bool XALIGNED = false>
__device__ __forceinline__ void ctm_load_chunk(const typename S::T* __restrict__ x, ctm_i64 n, ctm_i64 cf,
                                               const CtmChunk& ck, unsigned* xw, unsigned* lw)
{
    typedef typename S::T T;
    const T* row = x + ck.r * n;
    const ctm_i64 ts = ck.t0 + threadIdx.x * ITEMS;
    if constexpr (XALIGNED && !CTM_LOAD_SEQ) {
        if (ts >= cf) {  // all loads issued in one straight run (ctm_load_pair)
            ctm_load_pair<S, ITEMS>(row + ts, row + ts - cf, xw, lw);
            return;
        }
        CtmWords<S>::template loadA<ITEMS>(row + ts, xw);
    } else if constexpr (XALIGNED) {
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

// ctm_load_direct is ctm_load_chunk for the direct kernels, with the
// memory-access variants CTM_XLOAD_WARP (the samples loaded coalesced by
// the warp and handed over through stage, the block's staging area of
// CTM_CHUNK elements) and CTM_LAG_AFTER (the lagged loads issued once the
// samples have arrived).
template <class S, int ITEMS>
__device__ __forceinline__ void ctm_load_direct(const typename S::T* __restrict__ x, ctm_i64 n, ctm_i64 cf,
                                                const CtmChunk& ck, unsigned* xw, unsigned* lw, unsigned* stage)
{
#if CTM_XLOAD_WARP || CTM_LAG_AFTER || CTM_ABL_XALIGNED || CTM_ABL_LAGMIS >= 0
    typedef typename S::T T;
    constexpr int W = ITEMS * (int)CtmWords<S>::WORDS8 / 8, VECS = W / 4;
    const T* row = x + ck.r * n;
    const ctm_i64 ts = ck.t0 + threadIdx.x * ITEMS;
#if CTM_XLOAD_WARP
    const T* wb = row + ck.t0 + (ctm_i64)(threadIdx.x & ~31u) * ITEMS;  // the warp's first sample
    if ((((ctm_u64)wb) & 15u) == 0u) {  // block-uniform
        const int lane = threadIdx.x & 31;
        ctm_v4* sw = (ctm_v4*)stage + (threadIdx.x >> 5) * 32 * VECS;
        ctm_v4 a[VECS];
#pragma unroll
        for (int k = 0; k < VECS; k++) a[k] = ctm_ldx((const ctm_v4*)wb + lane + 32 * k);
#pragma unroll
        for (int k = 0; k < VECS; k++) sw[lane + 32 * k] = a[k];
        __syncwarp();
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            const ctm_v4 b = sw[lane * VECS + k];
            xw[4 * k] = b.x, xw[4 * k + 1] = b.y, xw[4 * k + 2] = b.z, xw[4 * k + 3] = b.w;
        }
    } else {
        CtmWords<S>::template load<ITEMS>(row + ts, xw);
    }
#elif CTM_ABL_XALIGNED
    CtmWords<S>::template loadA<ITEMS>(row + ts, xw);
#else
    CtmWords<S>::template load<ITEMS>(row + ts, xw);
#endif
    if (ts >= cf) {
        ctm_i64 dep = 0;
#if CTM_LAG_AFTER
        // Zero at run time (n < 2^62), but only known once xw has arrived.
        dep = (ctm_i64)((xw[VECS > 1 ? 3 : 0] ^ xw[W - 1]) & (unsigned)((ctm_u64)n >> 62));
#endif
#if CTM_ABL_LAGMIS >= 0
        if constexpr (sizeof(T) == 4) {
            ctm_ldn_f32<CTM_ABL_LAGMIS % 4, ITEMS>((const float*)(row + ts - cf + dep - CTM_ABL_LAGMIS % 4), lw);
        } else {
            ctm_ldn_u16<CTM_ABL_LAGMIS, ITEMS>((const ctm_u16*)(row + ts - cf + dep - CTM_ABL_LAGMIS), lw);
        }
#else
        CtmWords<S>::template load<ITEMS>(row + ts - cf + dep, lw);
#endif
        return;
    }
#endif
    ctm_load_chunk<S, ITEMS>(x, n, cf, ck, xw, lw);
}

// ctm_load_short loads, for the short last chunk ck of a row, this
// thread's samples (zero past the row) and their lagged samples (zero
// before the row; positions past the row keep theirs while k < cf, which
// make up the carried-in sum) as the words CtmWords<S>::load gives, one
// sample at a time.
template <class S, int ITEMS, bool WARP = false>
__device__ __forceinline__ void ctm_load_short(const typename S::T* __restrict__ x, ctm_i64 n, ctm_i64 cf,
                                               const CtmChunk& ck, unsigned* xw, unsigned* lw)
{
    typedef typename S::T T;
    const T* row = x + ck.r * n;
    const int k0 = threadIdx.x * ITEMS;
    // WARP (the warp kernels): s_in is per warp, from the lagged samples
    // of the warp's first cf positions, needed if the warp has positions
    // in the row.
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

// ctm_store writes this thread's rounded outputs ow (words as they lie in
// memory) to its ITEMS positions of the chunk at yc: 16-byte vector stores
// for a full chunk that is 16-byte aligned, otherwise staged through shared
// memory and stored coalesced, len elements.
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
#if CTM_STORE_WARP
    if (direct) {  // staged by thread, stored coalesced by lane
        const int lane = tid & 31;
        ctm_v4* sw = (ctm_v4*)sh.stage + (tid >> 5) * 32 * VECS;
#pragma unroll
        for (int i = 0; i < VECS; i++) sw[lane * VECS + i] = ctm_v4{ow[4 * i], ow[4 * i + 1], ow[4 * i + 2], ow[4 * i + 3]};
        __syncwarp();
        ctm_v4* d = (ctm_v4*)(yc + (tid & ~31) * ITEMS);
#pragma unroll
        for (int i = 0; i < VECS; i++) ctm_stv(d + lane + 32 * i, sw[lane + 32 * i]);
        return;
    }
#endif
#pragma unroll
    for (int i = 0; i < VECS; i++) {
        const ctm_v4 v = ctm_v4{ow[4 * i], ow[4 * i + 1], ow[4 * i + 2], ow[4 * i + 3]};
        if (direct) {
            ctm_stv(dst + i, v);
        } else {
            dst[i] = v;
        }
    }
    if (!direct) {
        __syncthreads();
        const T* stage = (const T*)sh.stage;
        for (int k = tid; k < len; k += THREADS) yc[k] = stage[k];
    }
}

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

// ctm_chunk32 computes the means of one chunk in float32. The differences
// x[t] - x[t-cf] and their running sums within the chunk (8 per thread,
// then a warp-shuffle and a block scan) are plain float32. The chunk's
// carried-in window sum s_in is, in direct mode (cf <= CTM_CHUNK), the
// compensated (TwoSum) sum of the lagged samples of its first cf
// positions; in look-back mode, the float64 sum of the published sums of
// the chunks before it, each of which is computed compensated (the exact
// difference of each pair by TwoSum, summed by TwoSum in float32 pairs), so
// that no error accumulates along the row. s_in is added last, as a float32
// pair, and the mean s / k is the product with 1/k corrected once by an FMA
// residual, then rounded to the storage type. xw and lw hold, for a full
// chunk, this thread's samples and lagged samples as loaded by
// ctm_load_chunk; a short last chunk loads with bound checks here. All
// threads of the block call it with the same chunk. It serves the
// look-back kernels and the direct kernels' group and persistent options;
// the default direct kernel takes ctm_direct_means.
template <class S, bool LOOKBACK, int ITEMS>
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
    // Positions k < preLen carry s_in in direct mode (cf <= CTM_CHUNK).
    const int preLen = LOOKBACK ? 0 : (int)cf;

    // v[j]: running sum of the differences over this thread's samples 0..j.
    // (ph, pl): direct mode, compensated sum of the lagged samples of
    // positions k < cf; look-back mode, compensated sum of the exact
    // differences (the chunk's contribution to later chunks' s_in).
    // Guarded chunks (row starts, where the window sums grow from zero and
    // the running sums are as large as the means' sums; short last chunks)
    // carry the running sums compensated: vl[j] is the low part of v[j].
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
            if (LOOKBACK) {
                float e;
                ph = ctm_two_sum(ph, d, &e);
                pl += e + de;
            }
        }
        if (!LOOKBACK && k0 < preLen) {
#pragma unroll
            for (int j = 0; j < ITEMS; j++) {
                if (k0 + j < preLen) {
                    float e;
                    ph = ctm_two_sum(ph, CtmWords<S>::get(lw, j), &e);
                    pl += e;
                }
            }
        }
    } else {
        const T* xr = x + ck.r * n;
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const int k = k0 + j;
            const ctm_i64 t = t0 + k, tl = t - cf;
            // Lagged samples are needed for k < len and, in direct mode, for
            // s_in (k < cf, inside the row since cf <= CHUNK). A full chunk
            // has them in xw and lw (ctm_load_chunk).
            const bool inRow = k < len;
            const bool needLag = inRow || k < preLen;
            float xs, ls;
            if (ck.full) {  // block-uniform
                xs = CtmWords<S>::get(xw, j);
                ls = CtmWords<S>::get(lw, j);
            } else {
                xs = inRow ? S::load(xr[t]) : 0.0f;
                ls = (needLag && tl >= 0) ? S::load(xr[tl]) : 0.0f;
            }
            if (inRow) {
                float de, e;
                const float d = ctm_two_sum(xs, -ls, &de);
                run = ctm_two_sum(run, d, &e);
                runL += e + de;
                if (LOOKBACK) {
                    ph = ctm_two_sum(ph, d, &e);
                    pl += e + de;
                }
            }
            v[j] = run;
            vl[j] = runL;
            if (!LOOKBACK && k < preLen) {
                float e;
                ph = ctm_two_sum(ph, ls, &e);
                pl += e;
            }
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
    if (LOOKBACK || warp * 32 * ITEMS < preLen) {  // warp-uniform
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float oh = __shfl_xor_sync(CTM_FULL, ph, o), ol = __shfl_xor_sync(CTM_FULL, pl, o);
            float e;
            ph = ctm_two_sum(ph, oh, &e);
            pl += ol + e;
        }
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
    float ch = 0.0f, cl = 0.0f;  // s_in as a float32 pair
    if (LOOKBACK) {
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
        ch = sh.prefixH;
        cl = sh.prefixL;
    } else {
        const int preWarps = (preLen + 32 * ITEMS - 1) / (32 * ITEMS);
        for (int w = 0; w < preWarps; w++) {
            float e;
            ch = ctm_two_sum(ch, sh.warpPreH[w], &e);
            cl += sh.warpPreL[w] + e;
        }
    }
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
// positions k < cf, may be anything). All threads of the block call it;
// it has one barrier (__syncthreads).
//
// Arithmetic: plain float32 running sums of the differences within the
// chunk (ITEMS in a thread, then a warp-shuffle and a block scan); the
// carried-in window sum s_in is the sum of the lagged samples of positions
// k < cf, accumulated in float64 by the threads that hold them (exact for
// the 16-bit types up to 2^29 terms of one binade, within 2^-42 of the
// magnitudes for float32), reduced per warp and split once per thread into
// a float32 pair. A row's first chunk has no lagged samples: its positions
// k < cf contribute x[k] to s_in instead of to the running sums, so that
// positions k >= cf see s_in = x[0] + ... + x[cf-1] plus true differences
// (running sums as small as elsewhere, whatever the data), and positions
// k < cf are the compensated prefix sums of x (a TwoSum pair scan in the
// warps that hold them, continued over the thread's samples at the end)
// divided by k + 1. Every other mean is q0 + v/cf by one FMA, q0 = (s_in +
// the sums before the thread's)/cf computed once per thread (the product
// with 1/cf corrected by its FMA residual, the low parts folded in).
//
// Only the threads whose positions reach below cf (the first cf/ITEMS of
// the block) do more than the plain path, and in a chunk other than a
// row's first only a predicated float64 sum of their lagged samples: the
// warp holding them reaches the barrier about as early as the others.
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
    CTM_TP(1, run);
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
    CTM_TP(2, sh.run[0]);
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
// ITEMS): every warp is a chunk of its own, with its own carried-in sum
// s_in, the lagged samples of the warp's first cf positions (which it
// holds): no shared memory, no barrier, each warp finishes as soon as its
// own samples have arrived. first: the warp's positions start the row
// (warp 0 of a row's first chunk); k0 is the thread's first position in
// the warp's chunk, len the number of positions of the block's chunk
// left from the warp's first (<= 0: none). Arithmetic as in
// ctm_direct_means.
template <class S, int ITEMS>
__device__ __forceinline__ void ctm_warp_means(const unsigned* xw, const unsigned* lw, bool first, int len, int cf,
                                               float invf, float* m)
{
    const int lane = threadIdx.x & 31, k0 = lane * ITEMS;
    float v[ITEMS];
    float run = 0.0f;
    // The 16-bit types take this path in a row's first warp too: its
    // lagged samples before the row are zero (ctm_load_chunk,
    // ctm_load_short), so s_in = 0 and the running sums are the prefix
    // sums, plain float32 (within the tests' bound, far below half a unit
    // of their 8 or 11 bits); its positions k < cf are rescaled below.
    // A compensated path for those few warps (float32's, after this one)
    // cost the whole kernel 10 % on the H200: the slow warp held its block,
    // and its registers made the kernel spill (run 60).
    if (CtmSin32<S>::value || !first) {  // warp-uniform: the common case
#if CTM_ABL_PART == 4
#pragma unroll
        for (int j = 0; j < ITEMS; j++) v[j] = CtmWords<S>::get(xw, j) - CtmWords<S>::get(lw, j);
        run = v[ITEMS - 1];
#else
        run = ctm_run_diffs<S, ITEMS>(xw, lw, k0, len, v);
#endif
        // s_in: the lagged samples of the warp's first cf positions, a
        // warp sum. Every lane sums its samples, masked (zero at positions
        // k >= cf), in four interleaved chains: no branch, and short
        // dependency chains that the scheduler can interleave with the
        // running sums and the scan. float64 for float32 storage (s_in
        // within 2^-42 of the magnitudes); float32 for the 16-bit types
        // (CtmSin32<S>: at most ITEMS/4 + 6 roundings deep, see the header),
        // whose means keep 8 or 11 bits: no conversions, half the shuffles.
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
#if CTM_ABL_PART == 2 || CTM_ABL_PART == 3
        excl = run;
#else
        ctm_scan_warp(run, &excl);
#endif
#if CTM_ABL_PART == 1 || CTM_ABL_PART == 3
        ch = 0.0f, cl = 0.0f;
#endif
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

// ctm_load_group locates the G chunks of group b (flat indices G*b ...
// G*b+G-1) and loads this thread's samples and lagged samples of those that
// are full (ctm_load_chunk; a short last chunk of a row loads with bound
// checks in ctm_chunk32).
template <class S, int G, int ITEMS, int W>
__device__ __forceinline__ void ctm_load_group(const typename S::T* __restrict__ x, ctm_i64 n, ctm_i64 cf,
                                               ctm_i64 chunks, ctm_i64 total, ctm_i64 b, CtmChunk* ck,
                                               unsigned (*xw)[W], unsigned (*lw)[W])
{
#pragma unroll
    for (int g = 0; g < G; g++) {
        ck[g] = ctm_chunk(b * G + g, n, cf, chunks);
        if (ck[g].blk < total && ck[g].full) ctm_load_chunk<S, ITEMS>(x, n, cf, ck[g], xw[g], lw[g]);
    }
}

// ctm_direct_one is the direct pass of one block, one chunk on a 2D grid
// (chunk along x, row along y and z: no division to locate it), every
// chunk by ctm_direct_means (WARP false: the block's chunk, one barrier)
// or ctm_warp_means (WARP true, the warp kernels: each warp's 32 * ITEMS
// positions a chunk of their own); plain float32, a row's first and short
// last chunks included: no compensated path in the kernel, fewer
// registers.
template <class S, bool WARP, int ITEMS>
__device__ __forceinline__ void ctm_direct_one(CtmShared<S>& sh, typename S::T* __restrict__ y,
                                               const typename S::T* __restrict__ x, ctm_i64 n, ctm_i64 cf,
                                               float invf, ctm_i64 chunks, ctm_i64 total)
{
    constexpr int W = ITEMS * (int)CtmWords<S>::WORDS8 / 8;
    const unsigned r = blockIdx.z * gridDim.y + blockIdx.y;
    const CtmChunk ck = ctm_chunk_rc(r, blockIdx.x, n, cf, chunks);
    if (ck.blk >= total) return;  // block-uniform: past the last row
#ifdef CTM_TRACE
    const ctm_u64 g0 = ctm_globaltimer();
    CTM_TP(0, 0.0f);
#endif
    unsigned xw[W], lw[W];
    // Rows of whole 16-byte vectors (block-uniform): the samples load
    // without the misalignment switch.
    const bool xAligned = ((((ctm_u64)n * sizeof(typename S::T)) | (ctm_u64)x) & 15u) == 0u;
    if (ck.full && xAligned && !(CTM_XLOAD_WARP || CTM_LAG_AFTER || CTM_ABL_XALIGNED || CTM_ABL_LAGMIS >= 0)) {
        ctm_load_chunk<S, ITEMS, true>(x, n, cf, ck, xw, lw);
    } else if (ck.full) {
        ctm_load_direct<S, ITEMS>(x, n, cf, ck, xw, lw, sh.stage);
    } else {
        ctm_load_short<S, ITEMS, WARP>(x, n, cf, ck, xw, lw);
    }
    float m[ITEMS];
#if CTM_ABL_COMPUTE
#pragma unroll
    for (int j = 0; j < ITEMS; j++)
        m[j] = CtmWords<S>::get(xw, j) - (CTM_ABL_COMPUTE == 1 ? CtmWords<S>::get(lw, j) : 0.0f);
    if (false)
#endif
    if constexpr (WARP) {
        const int kb = (int)(threadIdx.x & ~31u) * ITEMS;  // the warp's first position
        ctm_warp_means<S, ITEMS>(xw, lw, CTM_ABL_PART != 5 && blockIdx.x == 0 && kb == 0, ck.len - kb, (int)cf, invf, m);
    } else {
        __shared__ CtmDirectShared dsh;
        ctm_direct_means<S, ITEMS>(dsh, xw, lw, blockIdx.x == 0, ck.len, (int)cf, invf, m);
    }
    unsigned ow[W];
    CtmRound<S>::template run<ITEMS>(ow, m);
    ctm_store<S, ITEMS>(sh, y + (ctm_i64)(blockIdx.z * gridDim.y + blockIdx.y) * n + (ctm_i64)blockIdx.x * CTM_CHUNK,
                        ck.full, ck.len, ow);
#ifdef CTM_TRACE
    CTM_TP(3, __uint_as_float(ow[0]));
    ctm_trace_end(ck.blk, g0);
#endif
}

// ctm_pass is the fused pass of one block. Direct mode: G consecutive
// chunks (flat indices G*b ... G*b+G-1, b the block index), whose samples
// are all loaded first so that G chunks' loads are in flight at once, then
// processed one after another. Look-back mode: one chunk, the block's
// ticket (with several, a chunk's published sum would wait for its block's
// earlier chunks' look-backs and the chain would serialise). invf is 1/cf
// rounded to float32, total is rows*chunks.
template <class S, bool LOOKBACK, int G>
__device__ __forceinline__ void ctm_pass(typename S::T* __restrict__ y, const typename S::T* __restrict__ x,
                                         ctm_i64 n, ctm_i64 cf, float invf, ctm_i64 chunks, ctm_i64 total,
                                         unsigned char* state, unsigned epoch)
{
    __shared__ CtmShared<S> sh;
    const int tid = threadIdx.x;
    constexpr int ITEMS = CtmItems<S>::N, W = ITEMS * (int)CtmWords<S>::WORDS8 / 8;
    const CtmState st = ctm_state(state, total);  // unused in direct mode
    if (LOOKBACK) {
        if (tid == 0) {
            const unsigned t = atomicAdd(st.counter, 1u);
            if (t == gridDim.x - 1) atomicExch(st.counter, 0u);  // every block has its ticket
            sh.blk = t;
        }
        __syncthreads();
        const CtmChunk ck = ctm_chunk(sh.blk, n, cf, chunks);
        unsigned xw[W], lw[W];
        if (ck.full) ctm_load_chunk<S, ITEMS>(x, n, cf, ck, xw, lw);
        ctm_chunk32<S, true, ITEMS>(sh, y, x, n, cf, invf, ck, xw, lw, st, epoch);
        return;
    }
    // Direct mode: group b (chunks G*b ... G*b+G-1). Persistent
    // (CTM_PERSIST): the block takes groups blockIdx.x, +gridDim.x, ...
    // and issues the loads of its next group before processing the
    // current one.
    if (G == 1 && !CTM_PERSIST) {
        ctm_direct_one<S, false, CtmItems<S>::N>(sh, y, x, n, cf, invf, chunks, total);
        return;
    }
    const ctm_i64 groups = (total + G - 1) / G;
    ctm_i64 b = blockIdx.x;
    unsigned xw[G][W], lw[G][W];
    CtmChunk ck[G];
    ctm_load_group<S, G, ITEMS>(x, n, cf, chunks, total, b, ck, xw, lw);
    for (;;) {
        const ctm_i64 nb = b + gridDim.x;
        const bool more = CTM_PERSIST && nb < groups;  // block-uniform
        unsigned nxw[G][W], nlw[G][W];
        CtmChunk nck[G];
        if (more) ctm_load_group<S, G, ITEMS>(x, n, cf, chunks, total, nb, nck, nxw, nlw);
#pragma unroll
        for (int g = 0; g < G; g++) {
            if (ck[g].blk >= total) break;
            if (g > 0) __syncthreads();  // shared memory of the previous chunk is free
            ctm_chunk32<S, false, ITEMS>(sh, y, x, n, cf, invf, ck[g], xw[g], lw[g], st, 0);
        }
        if (!more) break;
        __syncthreads();
        b = nb;
#pragma unroll
        for (int g = 0; g < G; g++) {
            ck[g] = nck[g];
#pragma unroll
            for (int i = 0; i < W; i++) xw[g][i] = nxw[g][i], lw[g][i] = nlw[g][i];
        }
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
        float excl;
        const float inc = ctm_scan_warp(run, &excl);
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

__global__ void __launch_bounds__(CTM_THREADS_F32, CTM_MINB_F32)
ctm_direct_f32(float* y, const float* x, ctm_i64 n, ctm_i64 cf, float inv, ctm_i64 chunks, ctm_i64 total)
{
    ctm_pass<CtmF32, false, CTM_GROUP_F32>(y, x, n, cf, inv, chunks, total, 0, 0);
}

__global__ void __launch_bounds__(CTM_THREADS_16, CTM_MINB_16)
ctm_direct_f16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, float inv, ctm_i64 chunks, ctm_i64 total)
{
    ctm_pass<CtmF16, false, CTM_GROUP_16>(y, x, n, cf, inv, chunks, total, 0, 0);
}

__global__ void __launch_bounds__(CTM_THREADS_16, CTM_MINB_16)
ctm_direct_bf16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, float inv, ctm_i64 chunks, ctm_i64 total)
{
    ctm_pass<CtmBF16, false, CTM_GROUP_16>(y, x, n, cf, inv, chunks, total, 0, 0);
}

__global__ void __launch_bounds__(CTM_WARP_THREADS_F32, CTM_WARP_MINB_F32)
ctm_warp_f32(float* y, const float* x, ctm_i64 n, ctm_i64 cf, float inv, ctm_i64 chunks, ctm_i64 total)
{
    __shared__ CtmShared<CtmF32> sh;
    ctm_direct_one<CtmF32, true, CTM_WARP_ITEMS_F32>(sh, y, x, n, cf, inv, chunks, total);
}

__global__ void __launch_bounds__(CTM_WARP_THREADS_16, CTM_WARP_MINB_16)
ctm_warp_f16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, float inv, ctm_i64 chunks, ctm_i64 total)
{
    __shared__ CtmShared<CtmF16> sh;
    ctm_direct_one<CtmF16, true, CTM_WARP_ITEMS_16>(sh, y, x, n, cf, inv, chunks, total);
}

__global__ void __launch_bounds__(CTM_WARP_THREADS_16, CTM_WARP_MINB_16)
ctm_warp_bf16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, float inv, ctm_i64 chunks, ctm_i64 total)
{
    __shared__ CtmShared<CtmBF16> sh;
    ctm_direct_one<CtmBF16, true, CTM_WARP_ITEMS_16>(sh, y, x, n, cf, inv, chunks, total);
}

__global__ void __launch_bounds__(CTM_THREADS_F32, CTM_MINB_F32)
ctm_lookback_f32(float* y, const float* x, ctm_i64 n, ctm_i64 cf, float inv, ctm_i64 chunks,
                 ctm_i64 total, unsigned char* state, unsigned epoch)
{
    ctm_pass<CtmF32, true, CTM_GROUP_F32>(y, x, n, cf, inv, chunks, total, state, epoch);
}

__global__ void __launch_bounds__(CTM_THREADS_16, CTM_MINB_16)
ctm_lookback_f16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, float inv, ctm_i64 chunks,
                 ctm_i64 total, unsigned char* state, unsigned epoch)
{
    ctm_pass<CtmF16, true, CTM_GROUP_16>(y, x, n, cf, inv, chunks, total, state, epoch);
}

__global__ void __launch_bounds__(CTM_THREADS_16, CTM_MINB_16)
ctm_lookback_bf16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, float inv, ctm_i64 chunks,
                 ctm_i64 total, unsigned char* state, unsigned epoch)
{
    ctm_pass<CtmBF16, true, CTM_GROUP_16>(y, x, n, cf, inv, chunks, total, state, epoch);
}

#ifdef CTM_TRACE
__global__ void ctm_trace_set(ctm_u64* p) { ctm_trace_buf = p; }
#endif

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
