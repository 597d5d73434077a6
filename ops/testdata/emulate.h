// emulate.h lets ../kernels/trailing_mean.cu compile as host C++ (g++
// -std=c++20) for ops' tests on machines without a GPU: CUDA's builtins are
// defined here, a block's threads (up to 256) run as fibers (ucontext) on
// one OS thread, switching at barriers (__syncthreads, and warp shuffles, which exchange values
// through per-warp slots), and blocks run one after another in block order.
// That checks the kernels' indexing, arithmetic, rounding and look-back
// protocol (with predecessors always finished), not their concurrency or
// speed. Used by emulate.cc.

#pragma once

#include <ucontext.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#define CTM_EMULATE 1
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

struct ctm_dim3 {
    unsigned x = 1, y = 1, z = 1;
};

inline thread_local ctm_dim3 threadIdx, blockIdx;

struct alignas(8) uint2 {
    unsigned x, y;
};
inline ctm_dim3 gridDim, blockDim;

// Emulated blocks: up to 256 threads (8 warps), as fibers; 256 by default.
inline constexpr int kThreads = 256;

// EmuBarrier is a barrier of count fibers: arriving fibers yield to the
// scheduler until the last one arrives.
struct EmuBarrier {
    int count, arrived = 0;
    unsigned long gen = 0;
    explicit EmuBarrier(int n) : count(n) {}
    void arrive_and_wait();
};

struct EmuWarp {
    EmuBarrier bar{32};
    uint64_t slot[32];
};

inline ucontext_t emuScheduler;
inline ucontext_t* emuFiberCtx;  // the running fiber's context
inline EmuBarrier* emuBlockBarrier;
inline EmuWarp* emuWarps;

inline void emuYield() { swapcontext(emuFiberCtx, &emuScheduler); }

inline void EmuBarrier::arrive_and_wait()
{
    const unsigned long g = gen;
    if (++arrived == count) {
        arrived = 0;
        gen++;
        return;
    }
    while (gen == g) emuYield();
}

inline void __syncthreads() { emuBlockBarrier->arrive_and_wait(); }

inline EmuWarp& emuWarp() { return emuWarps[threadIdx.x / 32]; }

inline void __syncwarp(unsigned = 0xffffffffu) { emuWarp().bar.arrive_and_wait(); }

template <class T> T emuShfl(T v, int src)
{
    static_assert(sizeof(T) <= 8);
    EmuWarp& w = emuWarp();
    const int lane = threadIdx.x % 32;
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    w.slot[lane] = bits;
    w.bar.arrive_and_wait();
    T r;
    std::memcpy(&r, &w.slot[src], sizeof(T));
    w.bar.arrive_and_wait();
    return r;
}

template <class T> T __shfl_up_sync(unsigned, T v, int o)
{
    const int lane = threadIdx.x % 32;
    return emuShfl(v, lane >= o ? lane - o : lane);
}

template <class T> T __shfl_xor_sync(unsigned, T v, int o) { return emuShfl(v, (int)(threadIdx.x % 32) ^ o); }

template <class T> T __shfl_sync(unsigned, T v, int src) { return emuShfl(v, src & 31); }

// The correctly rounded reciprocal (as IEEE float division is).
inline float __frcp_rn(float x) { return 1.0f / x; }

// The device's approximate quotient (within 2 units); here the exact one.
inline float __fdividef(float a, float b) { return a / b; }

inline unsigned __ballot_sync(unsigned, bool p)
{
    EmuWarp& w = emuWarp();
    const int lane = threadIdx.x % 32;
    w.slot[lane] = p;
    w.bar.arrive_and_wait();
    unsigned m = 0;
    for (int i = 0; i < 32; i++) m |= (unsigned)(w.slot[i] != 0) << i;
    w.bar.arrive_and_wait();
    return m;
}

inline int __ffs(unsigned x) { return x ? __builtin_ctz(x) + 1 : 0; }

inline unsigned __float_as_uint(float f)
{
    unsigned u;
    std::memcpy(&u, &f, 4);
    return u;
}

inline float __uint_as_float(unsigned u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    const uint64_t v = (uint64_t)y << 32 | x;
    unsigned r = 0;
    for (int i = 0; i < 4; i++) {
        const unsigned sel = (s >> (4 * i)) & 7u;
        r |= (unsigned)((v >> (8 * sel)) & 0xffu) << (8 * i);
    }
    return r;
}

inline unsigned atomicAdd(unsigned* p, unsigned v) { return std::atomic_ref<unsigned>(*p).fetch_add(v); }

inline unsigned atomicExch(unsigned* p, unsigned v) { return std::atomic_ref<unsigned>(*p).exchange(v); }

inline unsigned ctm_ld_acquire(const unsigned* p)
{
    return std::atomic_ref<unsigned>(*const_cast<unsigned*>(p)).load(std::memory_order_acquire);
}

inline void ctm_st_release(unsigned* p, unsigned v)
{
    std::atomic_ref<unsigned>(*p).store(v, std::memory_order_release);
}

inline double ctm_ld_relaxed(const double* p) { return *p; }

// binary16 → float32, exact.
inline float ctm_h2f(unsigned short h)
{
    const unsigned s = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return __uint_as_float(s | 0x7f800000u | m << 13);
    if (e != 0) return __uint_as_float(s | (e + 112) << 23 | m << 13);
    const float v = std::ldexp((float)m, -24);
    return s ? -v : v;
}

// float32 → binary16 / bfloat16, nearest even, NaN → canonical quiet NaN
// (as cvt.rn.f16x2.f32 and cvt.rn.bf16x2.f32 do).
inline unsigned short emuF2H(float f)
{
    const unsigned b = __float_as_uint(f);
    const unsigned sign = (b >> 16) & 0x8000u, mant = b & 0x7fffffu;
    const int exp = (int)((b >> 23) & 0xffu);
    if (exp == 0xff) return mant ? 0x7fff : (unsigned short)(sign | 0x7c00u);
    const int e = exp - 127 + 15;
    if (e >= 0x1f) return (unsigned short)(sign | 0x7c00u);
    if (e <= 0) {
        if (exp == 0) return (unsigned short)sign;
        const unsigned shift = (unsigned)(14 - e);
        if (shift > 24) return (unsigned short)sign;
        const unsigned m = mant | 0x800000u;
        unsigned q = m >> shift;
        const unsigned rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) q++;
        return (unsigned short)(sign | q);
    }
    unsigned q = (unsigned)e << 10 | mant >> 13;
    const unsigned rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++;
    return (unsigned short)(sign | q);
}

inline unsigned short emuF2BF(float f)
{
    const unsigned b = __float_as_uint(f);
    if (std::isnan(f)) return 0x7fff;
    return (unsigned short)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

inline unsigned ctm_pack_bf16(float lo, float hi) { return emuF2BF(lo) | (unsigned)emuF2BF(hi) << 16; }

inline unsigned ctm_pack_f16(float lo, float hi) { return emuF2H(lo) | (unsigned)emuF2H(hi) << 16; }

// emuLaunch runs body on a grid of blocks of threads threads (a multiple of
// 32, at most kThreads), one block at a time in block order (x fastest),
// the threads of a block as fibers scheduled round-robin.
inline void emuLaunch(ctm_dim3 grid, const std::function<void()>& body, int threads = kThreads)
{
    gridDim = grid;
    blockDim = ctm_dim3{(unsigned)threads, 1, 1};
    constexpr size_t stackBytes = 256 << 10;
    struct Fiber {
        ucontext_t ctx;
        std::unique_ptr<char[]> stack;
        bool done;
        int tid;
    };
    static thread_local const std::function<void()>* emuBody;
    static thread_local Fiber* emuCur;
    std::vector<Fiber> fibers(threads);
    for (int t = 0; t < threads; t++) fibers[t].stack.reset(new char[stackBytes]);
    emuBody = &body;
    for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++) {
        for (unsigned bx = 0; bx < grid.x; bx++) {
            EmuBarrier blockBar(threads);
            std::vector<EmuWarp> warps(threads / 32);
            emuBlockBarrier = &blockBar;
            emuWarps = warps.data();
            blockIdx = ctm_dim3{bx, by, bz};
            for (int t = 0; t < threads; t++) {
                Fiber& f = fibers[t];
                f.done = false;
                f.tid = t;
                getcontext(&f.ctx);
                f.ctx.uc_stack.ss_sp = f.stack.get();
                f.ctx.uc_stack.ss_size = stackBytes;
                f.ctx.uc_link = &emuScheduler;
                makecontext(&f.ctx, (void (*)()) + [] {
                    (*emuBody)();
                    emuCur->done = true;
                }, 0);
            }
            for (int live = threads; live > 0;) {
                live = 0;
                for (int t = 0; t < threads; t++) {
                    Fiber& f = fibers[t];
                    if (f.done) continue;
                    emuCur = &f;
                    emuFiberCtx = &f.ctx;
                    threadIdx = ctm_dim3{(unsigned)t, 0, 0};
                    swapcontext(&emuScheduler, &f.ctx);
                    if (!f.done) live++;
                }
            }
        }
    }
}
