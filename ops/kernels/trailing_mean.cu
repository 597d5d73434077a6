// Causal trailing mean on the GPU: for each row x of a row-major [rows, n]
// array,
//
//     y[t] = (x[max(0, t-cf+1)] + ... + x[t]) / min(t+1, cf)
//
// for float32, binary16 and bfloat16 storage (the 16-bit types travel as
// unsigned short bit patterns). Sums are carried in float64 from exact
// float64 differences x[t] - x[t-cf]; each output is rounded to the storage
// type once (float32: round to nearest; 16-bit types: round-to-odd to float32,
// then to nearest even, which equals one correct rounding). Same numerics as
// the CPU implementation in package ops (trailing.go); the CPU and GPU
// results agree up to the float64 association of the sums.
//
// Needs no header: compile with NVRTC as is (any sm_53 or newer; the H200 is
// sm_90).
//
// LAUNCH GEOMETRY (the Go side mirrors it in ops.TrailingMeanLaunch)
//
//   CTM_THREADS = 256 threads per block, CTM_ITEMS = 8 consecutive samples
//   per thread, so one block owns a chunk of CTM_CHUNK = 2048 samples of one
//   row. chunks = ceil(n / CTM_CHUNK); grid = rows * chunks blocks (1-D,
//   block b handles row b / chunks, chunk b % chunks), so long rows spread
//   over the whole GPU. Static shared memory: 21 KB (16-bit types) to 25 KB
//   (float32) per block; ask for the largest shared-memory carveout
//   (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 100) so that eight
//   blocks fit on an SM.
//
//   Every block needs the carried-in window sum s_in = x[t0-cf] + ... +
//   x[t0-1] (clipped at 0) for its first position t0:
//
//   * cf <= CTM_CHUNK (one launch, "direct"): the block reads the cf samples
//     before its chunk along with the chunk itself (at most twice the
//     chunk) and sums them; the lagged samples x[t-cf] come from the same
//     shared-memory tile.
//         ctm_<type><<<rows*chunks, 256>>>(y, x, n, cf, chunks, NULL)
//
//   * cf > CTM_CHUNK (three launches, "two-level"): a first pass writes, per
//     chunk, D = sum over the chunk of (x[t] - x[t-cf]) in float64; one block
//     per row turns D in place into its exclusive prefix sums, which are
//     exactly the s_in of every chunk; then the main kernel runs with them.
//         ctm_delta_<type><<<rows*chunks, 256>>>(D, x, n, cf, chunks)
//         ctm_carry_scan<<<rows, 256>>>(D, chunks)
//         ctm_<type><<<rows*chunks, 256>>>(y, x, n, cf, chunks, D)
//     D is a float64 device buffer of rows*chunks elements. Reads: x twice
//     per pass (x[t] and x[t-cf]), so about 4 reads + 1 write of the array.
//
//   y must not alias x (a block reads samples before its chunk that another
//   block may already have overwritten); in place needs a scratch copy.
//   Global loads and stores are coalesced (thread i of the block touches
//   element i, i+256, ...) and use 16-byte vectors over the 16-byte aligned
//   part of each range, scalars for the unaligned head and tail.
//
// Kernel entry points (extern "C"):
//   ctm_f32, ctm_f16, ctm_bf16                (y, x, n, cf, chunks, carry)
//   ctm_delta_f32, ctm_delta_f16, ctm_delta_bf16 (D, x, n, cf, chunks)
//   ctm_carry_scan                            (D, chunks)
// n, cf and chunks are long long (int64); carry may be NULL when cf <= 2048.

#define CTM_THREADS 256
#define CTM_ITEMS 8
#define CTM_CHUNK (CTM_THREADS * CTM_ITEMS)
#define CTM_WARPS (CTM_THREADS / 32)

// One padding word every 32 keeps the blocked accesses to the float tile
// (thread i touching elements 8i ... 8i+7, or 4 or 8 consecutive ones in
// the vector loads) free of shared-memory bank conflicts. The staged 16-bit
// outputs need one padding word every 64 elements (CTM_PAD16).
#define CTM_PAD(i) ((i) + ((i) >> 5))
#define CTM_PAD16(i) ((i) + 2 * ((i) >> 6))

typedef unsigned short ctm_u16;
typedef long long ctm_i64;

// ---------------------------------------------------------------------------
// Storage types: load to float (exact) and store from double (one rounding).

// ctm_odd32 rounds v to float32 with round-to-odd and returns the bits.
__device__ __forceinline__ unsigned ctm_odd32(double v)
{
    float f = (float)v;  // round to nearest even
    double e = v - (double)f;  // exact residual
    unsigned b = __float_as_uint(f);
    if (e != 0.0 && (b & 1u) == 0u) {
        // Step towards v: up in magnitude if e has the sign of f.
        bool same = (e > 0.0) == ((b >> 31) == 0u);
        b = same ? b + 1u : b - 1u;
    }
    return b;
}

struct CtmF32 {
    typedef float T;
    enum { VEC = 4 };  // elements per 16-byte vector
    static __device__ __forceinline__ int opad(int i) { return CTM_PAD(i); }
    static __device__ __forceinline__ float load(float v) { return v; }
    static __device__ __forceinline__ float store(double v) { return (float)v; }
};

struct CtmF16 {
    typedef ctm_u16 T;
    enum { VEC = 8 };
    static __device__ __forceinline__ int opad(int i) { return CTM_PAD16(i); }
    static __device__ __forceinline__ float load(ctm_u16 v)
    {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
        return f;
    }
    static __device__ __forceinline__ ctm_u16 store(double v)
    {
        float f = __uint_as_float(ctm_odd32(v));
        ctm_u16 h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
        return h;
    }
};

struct CtmBF16 {
    typedef ctm_u16 T;
    enum { VEC = 8 };
    static __device__ __forceinline__ int opad(int i) { return CTM_PAD16(i); }
    static __device__ __forceinline__ float load(ctm_u16 v)
    {
        return __uint_as_float((unsigned)v << 16);
    }
    static __device__ __forceinline__ ctm_u16 store(double v)
    {
        unsigned b = ctm_odd32(v);
        if ((b & 0x7fffffffu) > 0x7f800000u) {
            return (ctm_u16)((b >> 16) | 0x40u);  // quiet NaN
        }
        return (ctm_u16)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
    }
};

// ---------------------------------------------------------------------------
// Vector access: a 16-byte vector holds VEC elements.

struct alignas(16) ctm_v4 {
    unsigned x, y, z, w;
};

template <class S> struct CtmVec;

template <> struct CtmVec<CtmF32> {
    static __device__ __forceinline__ void unpack(float* out, ctm_v4 v)
    {
        out[0] = __uint_as_float(v.x);
        out[1] = __uint_as_float(v.y);
        out[2] = __uint_as_float(v.z);
        out[3] = __uint_as_float(v.w);
    }
    static __device__ __forceinline__ ctm_v4 pack(const float* in)
    {
        ctm_v4 v;
        v.x = __float_as_uint(in[0]);
        v.y = __float_as_uint(in[1]);
        v.z = __float_as_uint(in[2]);
        v.w = __float_as_uint(in[3]);
        return v;
    }
};

// 16-bit storage: a 32-bit word holds two elements, the lower one first.
template <class S> struct CtmVec16 {
    static __device__ __forceinline__ void unpack(float* out, ctm_v4 v)
    {
        const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            out[2 * i] = S::load((ctm_u16)(w[i] & 0xffffu));
            out[2 * i + 1] = S::load((ctm_u16)(w[i] >> 16));
        }
    }
    static __device__ __forceinline__ ctm_v4 pack(const ctm_u16* in)
    {
        ctm_v4 v;
        v.x = (unsigned)in[0] | (unsigned)in[1] << 16;
        v.y = (unsigned)in[2] | (unsigned)in[3] << 16;
        v.z = (unsigned)in[4] | (unsigned)in[5] << 16;
        v.w = (unsigned)in[6] | (unsigned)in[7] << 16;
        return v;
    }
};
template <> struct CtmVec<CtmF16> : CtmVec16<CtmF16> {};
template <> struct CtmVec<CtmBF16> : CtmVec16<CtmBF16> {};

__device__ __forceinline__ ctm_i64 ctm_min(ctm_i64 a, ctm_i64 b) { return a < b ? a : b; }

// ctm_load copies row[g+i], i in [0, len), converted to float, into
// tile[CTM_PAD(o+i)]; positions g+i < 0 (before the row) read as zero.
// The 16-byte aligned middle of the range is read with vector loads.
template <class S>
__device__ void ctm_load(float* tile, int o, const typename S::T* __restrict__ row,
                         ctm_i64 g, int len)
{
    typedef typename S::T T;
    const int tid = threadIdx.x;
    int lo = 0;
    if (g < 0) {
        lo = (int)ctm_min(len, -g);
        for (int i = tid; i < lo; i += CTM_THREADS) {
            tile[CTM_PAD(o + i)] = 0.0f;
        }
    }
    const T* q = row + (g + lo);  // q[i - lo] is element i of the range
    // Elements before the first 16-byte boundary at or after q.
    unsigned mis = (unsigned)((unsigned long long)q & 15u);
    int head = mis ? (int)((16u - mis) / sizeof(T)) : 0;
    if (head > len - lo) head = len - lo;
    int vbeg = lo + head;
    int nvec = (len - vbeg) / S::VEC;
    int vend = vbeg + nvec * S::VEC;
    for (int i = lo + tid; i < vbeg; i += CTM_THREADS) {
        tile[CTM_PAD(o + i)] = S::load(q[i - lo]);
    }
    const ctm_v4* pv = (const ctm_v4*)(q + head);
    for (int v = tid; v < nvec; v += CTM_THREADS) {
        float f[S::VEC];
        CtmVec<S>::unpack(f, pv[v]);
        int i = vbeg + v * S::VEC;
#pragma unroll
        for (int j = 0; j < S::VEC; j++) {
            tile[CTM_PAD(o + i + j)] = f[j];
        }
    }
    for (int i = vend + tid; i < len; i += CTM_THREADS) {
        tile[CTM_PAD(o + i)] = S::load(q[i - lo]);
    }
}

// ctm_store writes outs[S::opad(i)], i in [0, len), to row[t0+i], with
// vector stores over the 16-byte aligned middle.
template <class S>
__device__ void ctm_store(typename S::T* __restrict__ row, ctm_i64 t0,
                          const typename S::T* outs, int len)
{
    typedef typename S::T T;
    const int tid = threadIdx.x;
    T* p = row + t0;
    unsigned mis = (unsigned)((unsigned long long)p & 15u);
    int head = mis ? (int)((16u - mis) / sizeof(T)) : 0;
    if (head > len) head = len;
    int nvec = (len - head) / S::VEC;
    int vend = head + nvec * S::VEC;
    for (int i = tid; i < head; i += CTM_THREADS) {
        p[i] = outs[S::opad(i)];
    }
    ctm_v4* pv = (ctm_v4*)(p + head);
    for (int v = tid; v < nvec; v += CTM_THREADS) {
        T e[S::VEC];
        int i = head + v * S::VEC;
#pragma unroll
        for (int j = 0; j < S::VEC; j++) {
            e[j] = outs[S::opad(i + j)];
        }
        pv[v] = CtmVec<S>::pack(e);
    }
    for (int i = vend + tid; i < len; i += CTM_THREADS) {
        p[i] = outs[S::opad(i)];
    }
}

// ---------------------------------------------------------------------------
// Block-wide float64 reductions and scans (all threads must call them).

__device__ __forceinline__ double ctm_warp_sum(double v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

// ctm_block_sum returns the sum of v over the block to every thread.
__device__ double ctm_block_sum(double v, double* warpBuf)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = ctm_warp_sum(v);
    if (lane == 0) warpBuf[warp] = v;
    __syncthreads();
    double s = 0.0;
#pragma unroll
    for (int w = 0; w < CTM_WARPS; w++) s += warpBuf[w];
    __syncthreads();  // warpBuf may be reused
    return s;
}

// ctm_block_exclusive returns the sum of v over the threads before this one
// and sets *total to the sum over the block.
__device__ double ctm_block_exclusive(double v, double* warpBuf, double* total)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double inc = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        double u = __shfl_up_sync(0xffffffffu, inc, o);
        if (lane >= o) inc += u;
    }
    if (lane == 31) warpBuf[warp] = inc;
    __syncthreads();
    double before = 0.0, all = 0.0;
#pragma unroll
    for (int w = 0; w < CTM_WARPS; w++) {
        double s = warpBuf[w];
        if (w < warp) before += s;
        all += s;
    }
    __syncthreads();
    *total = all;
    return before + inc - v;
}

// ---------------------------------------------------------------------------
// Kernels.

// Loads the tile of a block: direct mode, tile[i] = x[t0-cf+i] for
// i < cf+len (lag of position t0+k at k, sample at cf+k); two-level mode,
// lag at k and sample at CTM_CHUNK+k. Returns the offset of the samples.
template <class S>
__device__ int ctm_tile(float* tile, const typename S::T* __restrict__ row,
                        ctm_i64 t0, int len, ctm_i64 cf)
{
    if (cf <= CTM_CHUNK) {
        ctm_load<S>(tile, 0, row, t0 - cf, (int)cf + len);
        return (int)cf;
    }
    ctm_load<S>(tile, 0, row, t0 - cf, len);
    ctm_load<S>(tile, CTM_CHUNK, row, t0, len);
    return CTM_CHUNK;
}

template <class S>
__device__ void ctm_main(typename S::T* __restrict__ y, const typename S::T* __restrict__ x,
                         ctm_i64 n, ctm_i64 cf, ctm_i64 chunks, const double* __restrict__ carry)
{
    typedef typename S::T T;
    __shared__ float tile[CTM_PAD(2 * CTM_CHUNK)];
    __shared__ T outs[CTM_PAD(CTM_CHUNK)];
    __shared__ double warpBuf[CTM_WARPS];

    const ctm_i64 blk = blockIdx.x;
    const ctm_i64 r = blk / chunks, c = blk % chunks;
    const ctm_i64 t0 = c * CTM_CHUNK;
    const int len = (int)ctm_min(CTM_CHUNK, n - t0);
    const T* xr = x + r * n;
    T* yr = y + r * n;

    const int cur = ctm_tile<S>(tile, xr, t0, len, cf);
    __syncthreads();

    // Window sum ending just before t0.
    double sIn;
    if (carry == 0) {
        if (cf > CTM_CHUNK) __trap();  // launcher bug: two-level needs carry
        double acc = 0.0;
        for (int i = threadIdx.x; i < (int)cf; i += CTM_THREADS) acc += (double)tile[CTM_PAD(i)];
        sIn = ctm_block_sum(acc, warpBuf);
    } else {
        sIn = carry[blk];
    }

    // Running sums of the differences over this thread's 8 samples.
    const int k0 = threadIdx.x * CTM_ITEMS;
    double v[CTM_ITEMS];
    double run = 0.0;
#pragma unroll
    for (int j = 0; j < CTM_ITEMS; j++) {
        const int k = k0 + j;
        if (k < len) {
            run += (double)tile[CTM_PAD(cur + k)] - (double)tile[CTM_PAD(k)];
        }
        v[j] = run;
    }
    double total;
    const double base = sIn + ctm_block_exclusive(run, warpBuf, &total);

    const double inv = 1.0 / (double)cf;
#pragma unroll
    for (int j = 0; j < CTM_ITEMS; j++) {
        const int k = k0 + j;
        if (k < len) {
            const ctm_i64 t = t0 + k;
            const double s = base + v[j];
            const double m = t < cf ? s / (double)(t + 1) : s * inv;
            outs[S::opad(k)] = S::store(m);
        }
    }
    __syncthreads();
    ctm_store<S>(yr, t0, outs, len);
}

template <class S>
__device__ void ctm_delta(double* __restrict__ D, const typename S::T* __restrict__ x,
                          ctm_i64 n, ctm_i64 cf, ctm_i64 chunks)
{
    __shared__ float tile[CTM_PAD(2 * CTM_CHUNK)];
    __shared__ double warpBuf[CTM_WARPS];
    const ctm_i64 blk = blockIdx.x;
    const ctm_i64 r = blk / chunks, c = blk % chunks;
    const ctm_i64 t0 = c * CTM_CHUNK;
    const int len = (int)ctm_min(CTM_CHUNK, n - t0);
    const int cur = ctm_tile<S>(tile, x + r * n, t0, len, cf);
    __syncthreads();
    double acc = 0.0;
    for (int k = threadIdx.x; k < len; k += CTM_THREADS) {
        acc += (double)tile[CTM_PAD(cur + k)] - (double)tile[CTM_PAD(k)];
    }
    const double s = ctm_block_sum(acc, warpBuf);
    if (threadIdx.x == 0) D[blk] = s;
}

extern "C" {

__global__ void __launch_bounds__(CTM_THREADS)
ctm_f32(float* y, const float* x, ctm_i64 n, ctm_i64 cf, ctm_i64 chunks, const double* carry)
{
    ctm_main<CtmF32>(y, x, n, cf, chunks, carry);
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_f16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, ctm_i64 chunks, const double* carry)
{
    ctm_main<CtmF16>(y, x, n, cf, chunks, carry);
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_bf16(ctm_u16* y, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, ctm_i64 chunks, const double* carry)
{
    ctm_main<CtmBF16>(y, x, n, cf, chunks, carry);
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_delta_f32(double* D, const float* x, ctm_i64 n, ctm_i64 cf, ctm_i64 chunks)
{
    ctm_delta<CtmF32>(D, x, n, cf, chunks);
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_delta_f16(double* D, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, ctm_i64 chunks)
{
    ctm_delta<CtmF16>(D, x, n, cf, chunks);
}

__global__ void __launch_bounds__(CTM_THREADS)
ctm_delta_bf16(double* D, const ctm_u16* x, ctm_i64 n, ctm_i64 cf, ctm_i64 chunks)
{
    ctm_delta<CtmBF16>(D, x, n, cf, chunks);
}

// ctm_carry_scan replaces D[row*chunks + c] by the sum of D over the chunks
// before c of the same row (exclusive prefix sum, float64); one block per row.
__global__ void __launch_bounds__(CTM_THREADS)
ctm_carry_scan(double* D, ctm_i64 chunks)
{
    __shared__ double warpBuf[CTM_WARPS];
    double* d = D + (ctm_i64)blockIdx.x * chunks;
    double running = 0.0;
    for (ctm_i64 b = 0; b < chunks; b += CTM_THREADS) {
        const ctm_i64 i = b + threadIdx.x;
        const double v = i < chunks ? d[i] : 0.0;
        double total;
        const double before = ctm_block_exclusive(v, warpBuf, &total);
        if (i < chunks) d[i] = running + before;
        running += total;
    }
}

}  // extern "C"
