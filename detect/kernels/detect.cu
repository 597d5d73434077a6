// Kernels of detect's GPU path (cuda.go): Kilosort4's universal-template
// detection of one whitened window (kilosort4.md §9–§10), with the CPU
// detector (detector.go) as the reference. Compiled at run time by NVRTC;
// entry points are extern "C". No headers: NVRTC provides the builtins.
//
// Variants (every one computes the same; cuda.go picks one per GPU):
// the filter bank on the FP64 tensor cores (tconv_mma, TC_MMA = 16 from
// sm_90, 8 from sm_80) or on the FMA units (tconv, TC_R outputs per
// thread).
//
// Sizes are compile-time constants given with -D options:
//   DK   templates K          DNT  template length nt (odd)
//   DS   footprint sizes S    DNC  channels per centre nC
//   DNC2 centres per neighbourhood nC2
//   DP   PCA components P     DR   suppression radius nt0min
//
// Layouts. x is the whitened window, float32 channel-major x[c*T + t].
// Only the inner columns t = nt + t', t' in [0, Ti), Ti = T − 2·nt, can
// hold detections (Kilosort4 zeroes the rest), so everything after x is
// indexed by t':
//   B[(c*Ti + t')*DK + k]  temporal correlation, as the CPU's chunk b;
//   M[c*Ti + t']           max_k B², the Cauchy–Schwarz bound's terms;
//   P[f*Ti + t']           the strong map: the float bits of centre f's
//                          strong response at t' (0 where t' is not
//                          strong), cleared after every window;
//   Q[f*NBK + t'>>SUP_SHIFT] the largest of those bits in each bucket of
//                          SUP_W columns (NBK = ⌈Ti/SUP_W⌉), cleared too.
//
// Exactness. B is computed in float64 and rounded once to float32, as the
// CPU's float64 FFT is: the two differ only where the exact value lies
// within ~1e-15 of a float32 rounding boundary. Every later float32 or
// float64 operation is written with _rn intrinsics in the CPU's order, so
// that no multiply-add is contracted and results are bit for bit the
// CPU's for bit-equal inputs.

#ifndef DK
#define DK 6
#endif
#ifndef DNT
#define DNT 61
#endif
#ifndef DS
#define DS 5
#endif
#ifndef DNC
#define DNC 10
#endif
#ifndef DNC2
#define DNC2 100
#endif
#ifndef DP
#define DP 6
#endif
#ifndef DR
#define DR 20
#endif
#define DHALF (DNT / 2)
// SUP_SHIFT gives the bucket width SUP_W of the coarse map Q: a power of
// two wider than 2·DR, so that any ±DR range meets at most two buckets.
#ifndef SUP_SHIFT
#define SUP_SHIFT 6
#endif
#define SUP_W (1 << SUP_SHIFT)
#define FULL_MASK 0xffffffffu

// ---------------------------------------------------------------------------
// Temporal filter bank.
//
// tconv computes B and M for the TC_TILE columns [blockIdx.x*TC_TILE, +TC_TILE)
// of channel blockIdx.y. The block holds its stretch of x plus the nt−1
// columns of context, and the K×nt templates, in shared memory as float64;
// each thread keeps TC_R consecutive outputs of every template in registers,
// so each step of j loads TC_R x values and K template values (broadcast)
// for K·TC_R fused multiply-adds.
// Shared x is padded by one double every 16 so that the threads' strided
// reads (TC_R doubles apart) hit distinct banks.
#define TC_THREADS 128
#ifndef TC_R
#define TC_R 4
#endif
#define TC_TILE (TC_THREADS * TC_R)
#define TC_PAD(i) ((i) + ((i) >> 4))
#define TC_SX (TC_PAD(TC_TILE + DNT - 1) + 1)

extern "C" __global__ void __launch_bounds__(TC_THREADS) tconv(float* __restrict__ B, float* __restrict__ M,
                                                               const float* __restrict__ x,
                                                               const double* __restrict__ wt, int T, int Ti) {
    __shared__ double sw[DK * DNT];
    __shared__ double sx[TC_SX];
    const int c = blockIdx.y;
    const int t0 = blockIdx.x * TC_TILE;
    for (int i = threadIdx.x; i < DK * DNT; i += TC_THREADS) sw[i] = wt[i];
    // sx[i] holds x[c, nt + t0 − half + i]; output t' reads sx[t'−t0 + j].
    const float* row = x + (size_t)c * T + DNT + t0 - DHALF;
    const int nload = min(TC_TILE + DNT - 1, Ti - t0 + DNT - 1);
    for (int i = threadIdx.x; i < TC_TILE + DNT - 1; i += TC_THREADS)
        sx[TC_PAD(i)] = i < nload ? (double)__ldg(row + i) : 0.0;
    __syncthreads();

    const int base = threadIdx.x * TC_R;
    double acc[DK][TC_R];
#pragma unroll
    for (int k = 0; k < DK; ++k)
#pragma unroll
        for (int r = 0; r < TC_R; ++r) acc[k][r] = 0.0;
#pragma unroll 4
    for (int j = 0; j < DNT; ++j) {
        double xr[TC_R];
#pragma unroll
        for (int r = 0; r < TC_R; ++r) xr[r] = sx[TC_PAD(base + r + j)];
#pragma unroll
        for (int k = 0; k < DK; ++k) {
            const double w = sw[k * DNT + j];
#pragma unroll
            for (int r = 0; r < TC_R; ++r) acc[k][r] = fma(xr[r], w, acc[k][r]);
        }
    }
#pragma unroll
    for (int r = 0; r < TC_R; ++r) {
        const int tp = t0 + base + r;
        if (tp >= Ti) break;
        float mx = 0.0f;
        float* b = B + ((size_t)c * Ti + tp) * DK;
#pragma unroll
        for (int k = 0; k < DK; ++k) {
            const float v = (float)acc[k][r];
            b[k] = v;
            mx = fmaxf(mx, __fmul_rn(v, v));
        }
        M[(size_t)c * Ti + tp] = mx;
    }
}

// tconv_mma computes the same B and M on the FP64 tensor cores
// (mma.sync m8n8k4 or, with TC_MMA = 16, m16n8k4, both .f64): per channel
// the window is a Toeplitz matrix X[t', j] = x[c, nt + t' − half + j]
// times the templates W[j, k] (taps padded with zeros to KS·4, templates
// to NTILE·8). Fragment layouts (PTX ISA, m8n8k4 f64): A row g = lane/4,
// col i = lane%4; B row i, col g; D row g, cols 2i, 2i+1 (m16n8k4: A and
// D rows g and g+8). Because X is Toeplitz, the A fragment of rows
// [r, r+8) and taps [4s, 4s+4) is x[r + 4s + g + i]: a function of r/4 + s
// alone, so a warp loads the TC_SIG distinct fragments of its TC_WROWS
// rows once into registers (from the block's stretch of x in shared
// memory, as float64) and reuses each for up to KS products.
#ifndef TC_MMA
#define TC_MMA 8
#endif
#define TC_KS ((DNT + 3) / 4)          // k-steps of 4 taps
#define TC_NTILE ((DK + 7) / 8)        // n-tiles of 8 templates
#define TC_MROWS TC_MMA                // rows of one product
#define TC_MG (64 / TC_MROWS)          // products per warp and k-step
#define TC_WROWS 64                    // rows of a warp
#define TC_WARPS 4
#ifndef TC_NG
#define TC_NG 1                        // groups of TC_WROWS rows per warp
#endif
#define TC_BROWS (TC_WROWS * TC_NG * TC_WARPS) // rows of a block
#define TC_SIG (TC_WROWS / 4 + TC_KS)  // distinct A fragments of a warp
#define TC_MSX (TC_BROWS + 4 * TC_KS + 8)

__device__ __forceinline__ void dmma8(double& d0, double& d1, double a, double b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
}

__device__ __forceinline__ void dmma16(double& d0, double& d1, double& d2, double& d3, double a0, double a1,
                                       double b) {
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+d"(d0), "+d"(d1), "+d"(d2), "+d"(d3)
                 : "d"(a0), "d"(a1), "d"(b));
}

// tcStore writes row tp's values v0, v1 of templates n, n+1 (those
// below DK) as float32 and returns mx raised by their squares.
__device__ __forceinline__ float tcStore(float* __restrict__ B, int c, int Ti, int tp, int n, double v0, double v1,
                                         float mx) {
    const float f0 = (float)v0, f1 = (float)v1;
    float* b = B + ((size_t)c * Ti + tp) * DK + n;
    if (n + 1 < DK) {
        if (tp < Ti) {
#if DK % 2 == 0
            *reinterpret_cast<float2*>(b) = make_float2(f0, f1);
#else
            b[0] = f0;
            b[1] = f1;
#endif
        }
        return fmaxf(fmaxf(mx, __fmul_rn(f0, f0)), __fmul_rn(f1, f1));
    }
    if (n < DK) {
        if (tp < Ti) b[0] = f0;
        return fmaxf(mx, __fmul_rn(f0, f0));
    }
    return mx;
}

extern "C" __global__ void __launch_bounds__(32 * TC_WARPS) tconv_mma(float* __restrict__ B, float* __restrict__ M,
                                                                      const float* __restrict__ x,
                                                                      const double* __restrict__ wt, int T,
                                                                      int Ti) {
    __shared__ double sx[TC_MSX];
    const int c = blockIdx.y;
    const int t0 = blockIdx.x * TC_BROWS;
    const float* row = x + (size_t)c * T + DNT + t0 - DHALF;
    const int nload = min(TC_MSX, Ti - t0 + DNT - 1);
    for (int i = threadIdx.x; i < TC_MSX; i += 32 * TC_WARPS) sx[i] = i < nload ? (double)__ldg(row + i) : 0.0;

    const unsigned lane = threadIdx.x & 31, g = lane >> 2, qi = lane & 3;
    const int warp = threadIdx.x >> 5;
    // B fragments: template n = nt·8 + g at tap 4s + qi.
    double wf[TC_NTILE][TC_KS];
#pragma unroll
    for (int nt = 0; nt < TC_NTILE; ++nt)
#pragma unroll
        for (int s = 0; s < TC_KS; ++s) {
            const int n = nt * 8 + g, j = 4 * s + qi;
            wf[nt][s] = n < DK && j < DNT ? __ldg(wt + n * DNT + j) : 0.0;
        }
    __syncthreads();
#pragma unroll 1
    for (int gi = 0; gi < TC_NG; ++gi) {
        // The warp's gi-th group of rows, from row w0 of the block.
        const int w0 = (warp * TC_NG + gi) * TC_WROWS;
        if (t0 + w0 >= Ti) break;
        double a[TC_SIG];
#pragma unroll
        for (int q = 0; q < TC_SIG; ++q) a[q] = sx[w0 + 4 * q + g + qi];

        constexpr int H = TC_MROWS / 8; // row groups of 8 per product
        float mx[TC_MG][H];
#pragma unroll
        for (int m = 0; m < TC_MG; ++m)
#pragma unroll
            for (int h = 0; h < H; ++h) mx[m][h] = 0.0f;
#pragma unroll
        for (int nt = 0; nt < TC_NTILE; ++nt) {
            const int n = nt * 8 + 2 * qi;
            double d[TC_MG][2 * H];
#pragma unroll
            for (int m = 0; m < TC_MG; ++m)
#pragma unroll
                for (int e = 0; e < 2 * H; ++e) d[m][e] = 0.0;
#pragma unroll
            for (int s = 0; s < TC_KS; ++s)
#pragma unroll
                for (int m = 0; m < TC_MG; ++m) {
#if TC_MMA == 16
                    dmma16(d[m][0], d[m][1], d[m][2], d[m][3], a[4 * m + s], a[4 * m + s + 2], wf[nt][s]);
#else
                    dmma8(d[m][0], d[m][1], a[2 * m + s], wf[nt][s]);
#endif
                }
#pragma unroll
            for (int m = 0; m < TC_MG; ++m)
#pragma unroll
                for (int h = 0; h < H; ++h)
                    mx[m][h] = tcStore(B, c, Ti, t0 + w0 + TC_MROWS * m + 8 * h + g, n, d[m][2 * h], d[m][2 * h + 1],
                                       mx[m][h]);
        }
        // M of each row: the maximum over the quad's lanes, which hold its
        // templates.
#pragma unroll
        for (int m = 0; m < TC_MG; ++m)
#pragma unroll
            for (int h = 0; h < H; ++h) {
                float v = mx[m][h];
                v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, 1));
                v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, 2));
                const int tp = t0 + w0 + TC_MROWS * m + 8 * h + g;
                if (qi == 0 && tp < Ti) M[(size_t)c * Ti + tp] = v;
            }
    }
}

// ---------------------------------------------------------------------------
// Per-centre combination.

// evaluate returns the best |A| of the S·K responses of centre f (channels
// ic, weights wf[s*DNC + j]) at column tp, and its template q = s·K + k and
// sign, exactly as the CPU's Detector.evaluate: float32 sums in channel
// order, the lowest q on ties; a shape k with Σ_j B² ≤ thr2 is skipped
// (its responses are at most Th).
__device__ __forceinline__ float evaluate(const float* __restrict__ B, const int (&ic)[DNC],
                                          const float* __restrict__ wf, int Ti, int tp, float thr2, int& bq,
                                          int& sg) {
    float best = -1.0f;
    bq = 0;
    sg = 0;
#pragma unroll 1
    for (int k = 0; k < DK; ++k) {
        float v[DNC];
#pragma unroll
        for (int j = 0; j < DNC; ++j) v[j] = __ldg(B + ((size_t)ic[j] * Ti + tp) * DK + k);
        float uk = 0.0f;
#pragma unroll
        for (int j = 0; j < DNC; ++j) uk = __fadd_rn(uk, __fmul_rn(v[j], v[j]));
        if (!(uk > thr2)) continue;
#pragma unroll
        for (int s = 0; s < DS; ++s) {
            float a = 0.0f;
#pragma unroll
            for (int j = 0; j < DNC; ++j) a = __fadd_rn(a, __fmul_rn(__ldg(wf + s * DNC + j), v[j]));
            const float aa = fabsf(a);
            const int q = s * DK + k;
            if (aa > best || (aa == best && q < bq)) {
                best = aa;
                bq = q;
                sg = a < 0.0f ? -1 : 1;
            }
        }
    }
    return best;
}

// bounds lists the (centre, column) pairs worth evaluating among the
// CG_F centres [blockIdx.x*CG_F, +CG_F) and the 32·VEC columns
// [blockIdx.y*32*VEC, +32*VEC) (the centre groups of a column range run
// together and share its rows of M in L2): those whose bound
// U = Σ_j M[iC(j,f), t'] exceeds thr2 (2 % of the pairs, clustered around
// spikes), summed in channel order. Lane l takes the VEC columns
// 32·VEC·blockIdx.y + VEC·l + v, read in one vector load per channel when
// VEC is 4 (then Ti must be a multiple of 4, so that rows of M stay
// aligned). Block (32, CG_W): warp y takes centres y, y+CG_W, … (their
// loads issued together), so that the block's warps read overlapping rows
// of M through L1. The block gathers its pairs in shared memory (a warp's
// in column order), takes its slots in the list with one atomicAdd on
// *count and writes them as
// f·Ti + t' (the list's order is irrelevant: centres only appends to the
// strong list). Slots ≥ cap are counted, not written.
#define CG_F 32
#define CG_W 8
// list_pairs appends, of the lane's columns tp … tp+VEC−1 of centre f,
// those whose bound u exceeds thr2 (none past F or Ti, as thr2 > 0) to
// the block's list s_pair as f·Ti + t', in column order (lane-major, so
// that consecutive pairs read neighbouring columns of B in centres): a
// prefix sum of the warp's lanes' counts, one shared atomicAdd per warp.
template <int VEC>
__device__ __forceinline__ void list_pairs(int* s_pair, int* s_np, const float (&u)[VEC], float thr2, int f, int Ti,
                                           int tp, unsigned lane) {
    unsigned m = 0u; // the lane's passing columns
#pragma unroll
    for (int v = 0; v < VEC; ++v) m |= u[v] > thr2 ? 1u << v : 0u;
    if (__ballot_sync(FULL_MASK, m != 0u) == 0u) return;
    const int n = __popc(m);
    int incl = n;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(FULL_MASK, incl, o);
        if ((int)lane >= o) incl += y;
    }
    int slot = 0;
    if (lane == 31) slot = atomicAdd(s_np, incl);
    slot = __shfl_sync(FULL_MASK, slot, 31) + incl - n;
#pragma unroll
    for (int v = 0; v < VEC; ++v)
        if (m >> v & 1u) s_pair[slot++] = f * Ti + tp + v;
}

// flush_pairs, called by every thread of a block whose warps have listed
// their pairs, takes the block's slots in the global list with one
// atomicAdd on *count and writes the pairs there; slots ≥ cap are
// counted, not written.
__device__ __forceinline__ void flush_pairs(int* __restrict__ pairs, int* __restrict__ count, int cap,
                                            const int* s_pair, const int* s_np, int* s_base, int tid) {
    __syncthreads();
    const int np = *s_np;
    if (np == 0) return;
    if (tid == 0) *s_base = atomicAdd(count, np);
    __syncthreads();
    const int base = *s_base;
    for (int i = tid; i < np && base + i < cap; i += 32 * CG_W) pairs[base + i] = s_pair[i];
}

template <int VEC>
__device__ __forceinline__ void bounds_t(int* __restrict__ pairs, int* __restrict__ count, int cap,
                                         const float* __restrict__ M, const int* __restrict__ iC, int F, int Ti,
                                         float thr2) {
    __shared__ int s_ic[CG_F * DNC];
    __shared__ int s_pair[CG_F * 32 * VEC]; // f·Ti + t'
    __shared__ int s_np, s_base;
    const int f0 = blockIdx.x * CG_F;
    const int nf = min(CG_F, F - f0);
    const int tid = threadIdx.y * 32 + threadIdx.x;
    for (int i = tid; i < nf * DNC; i += 32 * CG_W) s_ic[i] = iC[f0 * DNC + i];
    if (tid == 0) s_np = 0;
    __syncthreads();
    const int tp = (blockIdx.y * 32 + threadIdx.x) * VEC; // first column of the lane
    const unsigned lane = threadIdx.x;
    constexpr int NPW = CG_F / CG_W; // centres per warp
    float ur[NPW][VEC];
#pragma unroll
    for (int r = 0; r < NPW; ++r) {
        const int fi = threadIdx.y + r * CG_W;
#pragma unroll
        for (int v = 0; v < VEC; ++v) ur[r][v] = 0.0f;
        if (fi < nf && tp < Ti) {
            const int* ic = s_ic + fi * DNC;
            if constexpr (VEC == 4) {
                // Ti % 4 == 0: the lane's four columns are all inside.
                float4 u = __ldg(reinterpret_cast<const float4*>(M + (size_t)ic[0] * Ti + tp));
#pragma unroll
                for (int j = 1; j < DNC; ++j) {
                    const float4 m = __ldg(reinterpret_cast<const float4*>(M + (size_t)ic[j] * Ti + tp));
                    u.x = __fadd_rn(u.x, m.x);
                    u.y = __fadd_rn(u.y, m.y);
                    u.z = __fadd_rn(u.z, m.z);
                    u.w = __fadd_rn(u.w, m.w);
                }
                ur[r][0] = u.x;
                ur[r][1] = u.y;
                ur[r][2] = u.z;
                ur[r][3] = u.w;
            } else {
                float u = __ldg(M + (size_t)ic[0] * Ti + tp);
#pragma unroll
                for (int j = 1; j < DNC; ++j) u = __fadd_rn(u, __ldg(M + (size_t)ic[j] * Ti + tp));
                ur[r][0] = u;
            }
        }
    }
#pragma unroll
    for (int r = 0; r < NPW; ++r) list_pairs<VEC>(s_pair, &s_np, ur[r], thr2, f0 + threadIdx.y + r * CG_W, Ti, tp, lane);
    flush_pairs(pairs, count, cap, s_pair, &s_np, &s_base, tid);
}

extern "C" __global__ void __launch_bounds__(32 * CG_W) bounds(int* __restrict__ pairs, int* __restrict__ count,
                                                               int cap, const float* __restrict__ M,
                                                               const int* __restrict__ iC, int F, int Ti,
                                                               float thr2) {
    bounds_t<1>(pairs, count, cap, M, iC, F, Ti, thr2);
}

extern "C" __global__ void __launch_bounds__(32 * CG_W) bounds4(int* __restrict__ pairs, int* __restrict__ count,
                                                                int cap, const float* __restrict__ M,
                                                                const int* __restrict__ iC, int F, int Ti,
                                                                float thr2) {
    bounds_t<4>(pairs, count, cap, M, iC, F, Ti, thr2);
}

// bounds_u is bounds with the channels of UG adjacent centres read once:
// warp y takes the centres UG·(G + y) … UG·(G + y) + UG − 1 (G the
// block's first group) and loads each row of M in the union of their
// channels (ulist, ucnt per group; 3.25 rows per centre for NP1 against
// nC) once, adding it to the bounds of the centres whose mask (umask, bit
// u: union entry u is a channel of the centre) has it. The bound is then
// summed in the union's order, not the centre's: it only decides which
// pairs are evaluated, and the slack of thr2 (1e-4) covers the rounding.
#define UG 4
#define UMAX (UG * DNC)
template <int VEC>
__device__ __forceinline__ void bounds_u_t(int* __restrict__ pairs, int* __restrict__ count, int cap,
                                           const float* __restrict__ M, const int* __restrict__ ulist,
                                           const int* __restrict__ ucnt, const unsigned long long* __restrict__ umask,
                                           int F, int Ti, float thr2) {
    static_assert(CG_F == CG_W * UG, "a block's centres are its warps' groups");
    __shared__ int s_u[CG_W][UMAX];
    __shared__ int s_pair[CG_F * 32 * VEC]; // f·Ti + t'
    __shared__ int s_np, s_base;
    const int tid = threadIdx.y * 32 + threadIdx.x;
    const int w = threadIdx.y;
    const int grp = blockIdx.x * CG_W + w;
    const int ngrp = (F + UG - 1) / UG;
    const int nu = grp < ngrp ? ucnt[grp] : 0;
    for (int i = threadIdx.x; i < nu; i += 32) s_u[w][i] = ulist[grp * UMAX + i];
    unsigned long long mk[UG];
#pragma unroll
    for (int r = 0; r < UG; ++r) mk[r] = grp < ngrp ? umask[grp * UG + r] : 0ull;
    if (tid == 0) s_np = 0;
    __syncthreads();
    const int tp = (blockIdx.y * 32 + threadIdx.x) * VEC; // first column of the lane
    const unsigned lane = threadIdx.x;
    float ur[UG][VEC];
#pragma unroll
    for (int r = 0; r < UG; ++r)
#pragma unroll
        for (int v = 0; v < VEC; ++v) ur[r][v] = 0.0f;
    if (tp < Ti) {
        for (int u = 0; u < nu; ++u) {
            float m[VEC];
            if constexpr (VEC == 4) {
                // Ti % 4 == 0: the lane's four columns are all inside.
                const float4 q = __ldg(reinterpret_cast<const float4*>(M + (size_t)s_u[w][u] * Ti + tp));
                m[0] = q.x;
                m[1] = q.y;
                m[2] = q.z;
                m[3] = q.w;
            } else {
                m[0] = __ldg(M + (size_t)s_u[w][u] * Ti + tp);
            }
#pragma unroll
            for (int r = 0; r < UG; ++r)
                if (mk[r] >> u & 1ull)
#pragma unroll
                    for (int v = 0; v < VEC; ++v) ur[r][v] = __fadd_rn(ur[r][v], m[v]);
        }
    }
#pragma unroll
    for (int r = 0; r < UG; ++r) list_pairs<VEC>(s_pair, &s_np, ur[r], thr2, grp * UG + r, Ti, tp, lane);
    flush_pairs(pairs, count, cap, s_pair, &s_np, &s_base, tid);
}

#if UMAX <= 64
extern "C" __global__ void __launch_bounds__(32 * CG_W)
    bounds_u(int* __restrict__ pairs, int* __restrict__ count, int cap, const float* __restrict__ M,
             const int* __restrict__ ulist, const int* __restrict__ ucnt, const unsigned long long* __restrict__ umask,
             int F, int Ti, float thr2) {
    bounds_u_t<1>(pairs, count, cap, M, ulist, ucnt, umask, F, Ti, thr2);
}

extern "C" __global__ void __launch_bounds__(32 * CG_W)
    bounds_u4(int* __restrict__ pairs, int* __restrict__ count, int cap, const float* __restrict__ M,
              const int* __restrict__ ulist, const int* __restrict__ ucnt, const unsigned long long* __restrict__ umask,
              int F, int Ti, float thr2) {
    bounds_u_t<4>(pairs, count, cap, M, ulist, ucnt, umask, F, Ti, thr2);
}
#endif

// centres evaluates the listed pairs, one per thread: the best response
// of centre f at column t' (evaluate), and appends each pair whose best
// exceeds th to the strong list (sf, stp, sa) at a slot taken with a
// warp-aggregated atomicAdd on count (the list's order is irrelevant: it
// feeds per-point tests). A listed point also sets its cell of the strong
// map P (each pair is listed once) and raises its bucket of Q with an
// integer atomicMax on the bits of the positive response (the same in any
// order). Slots ≥ cap are counted, not written or mapped, so that clear
// finds every mapped cell in the list. Any 1-D grid of whole warps.
extern "C" __global__ void centres(int* __restrict__ sf, int* __restrict__ stp, float* __restrict__ sa,
                                   int* __restrict__ count, int cap, const int* __restrict__ pairs,
                                   const int* __restrict__ npairs, int pcap, const float* __restrict__ B,
                                   const int* __restrict__ iC, const float* __restrict__ W, int Ti, float thr2,
                                   float th, unsigned* __restrict__ P, unsigned* __restrict__ Q, int nbk) {
    const int np = min(*npairs, pcap);
    const unsigned lane = threadIdx.x & 31;
    for (int base = blockIdx.x * blockDim.x; base < np; base += gridDim.x * blockDim.x) {
        const int i = base + threadIdx.x;
        bool strong = false;
        float best = 0.0f;
        int f = 0, t = 0;
        if (i < np) {
            const int pr = pairs[i];
            f = pr / Ti;
            t = pr - f * Ti;
            int ic[DNC];
#pragma unroll
            for (int j = 0; j < DNC; ++j) ic[j] = __ldg(iC + f * DNC + j);
            int bq, sg;
            best = evaluate(B, ic, W + (size_t)f * DS * DNC, Ti, t, thr2, bq, sg);
            strong = best > th;
        }
        const unsigned mask = __ballot_sync(FULL_MASK, strong);
        if (mask == 0u) continue;
        int slot = 0;
        if (lane == 0) slot = atomicAdd(count, __popc(mask));
        slot = __shfl_sync(FULL_MASK, slot, 0) + __popc(mask & ((1u << lane) - 1u));
        if (strong && slot < cap) {
            sf[slot] = f;
            stp[slot] = t;
            sa[slot] = best;
            const unsigned a = __float_as_uint(best);
            P[(size_t)f * Ti + t] = a;
            atomicMax(Q + (size_t)f * nbk + (t >> SUP_SHIFT), a);
        }
    }
}

// ---------------------------------------------------------------------------
// Local maxima over the nC2 nearest centres × ±DR columns.

// local_max keeps the strong points (f, t', a) with t' < owned that no
// strong point (g, u) of the nC2 centres g of iC2(f) with |u − t'| ≤ DR
// exceeds (P[g, u] ≤ a), and appends their strong-list indices to det
// (slots ≥ dcap counted, not written). Each thread first tests its own
// point against its own row (f is in iC2(f)): the neighbours t' ± 1, then,
// unless both buckets of Q that the range meets are ≤ a, the whole range.
// The warp then tests its candidates one at a time, a lane per neighbour
// row: a row whose buckets are ≤ a cannot beat the point; the rows whose
// buckets exceed it are read in full, by the whole warp. Q only skips
// reads, so the test is exactly the one against the ±DR maxima.
extern "C" __global__ void local_max(int* __restrict__ det, int* __restrict__ ndet, int dcap,
                                     const int* __restrict__ sf, const int* __restrict__ stp,
                                     const float* __restrict__ sa, const int* __restrict__ count, int cap,
                                     const unsigned* __restrict__ P, const unsigned* __restrict__ Q, int nbk,
                                     const int* __restrict__ iC2, int Ti, int owned) {
    constexpr int NR = (DNC2 + 31) / 32; // neighbour rows per lane
    const int n = min(*count, cap);
    const int lane = threadIdx.x & 31;
    const int stride = gridDim.x * blockDim.x;
    for (int base = blockIdx.x * blockDim.x + (threadIdx.x & ~31); base < n; base += stride) {
        const int s = base + lane;
        int tp = 0, f = 0;
        unsigned a = 0u;
        bool cand = false;
        if (s < n) {
            tp = stp[s];
            f = sf[s];
            a = __float_as_uint(sa[s]);
            if (tp < owned) {
                const unsigned* row = P + (size_t)f * Ti;
                cand = DR == 0 || ((tp == 0 || __ldg(row + tp - 1) <= a) && (tp + 1 >= Ti || __ldg(row + tp + 1) <= a));
                if (cand) {
                    const int lo = max(tp - DR, 0), hi = min(tp + DR, Ti - 1);
                    const unsigned* q = Q + (size_t)f * nbk;
                    if (max(__ldg(q + (lo >> SUP_SHIFT)), __ldg(q + (hi >> SUP_SHIFT))) > a)
                        for (int u = lo; u <= hi; ++u)
                            if (__ldg(row + u) > a) {
                                cand = false;
                                break;
                            }
                }
            }
        }
        unsigned m = __ballot_sync(FULL_MASK, cand);
        while (m) {
            const int src = __ffs(m) - 1;
            m &= m - 1;
            const int cf = __shfl_sync(FULL_MASK, f, src);
            const int ct = __shfl_sync(FULL_MASK, tp, src);
            const unsigned ca = __shfl_sync(FULL_MASK, a, src);
            const int lo = max(ct - DR, 0), hi = min(ct + DR, Ti - 1);
            const int b0 = lo >> SUP_SHIFT, b1 = hi >> SUP_SHIFT;
            int g[NR];
            unsigned over = 0u; // bit r: row g[r] has a bucket above ca
#pragma unroll
            for (int r = 0; r < NR; ++r) {
                const int j = lane + 32 * r;
                g[r] = j < DNC2 ? __ldg(iC2 + cf * DNC2 + j) : 0;
                if (j < DNC2) {
                    const unsigned* q = Q + (size_t)g[r] * nbk;
                    if (max(__ldg(q + b0), __ldg(q + b1)) > ca) over |= 1u << r;
                }
            }
            bool beaten = false;
#pragma unroll
            for (int r = 0; r < NR; ++r) {
                unsigned rows = __ballot_sync(FULL_MASK, over >> r & 1u);
                while (rows && !beaten) {
                    const int src2 = __ffs(rows) - 1;
                    rows &= rows - 1;
                    const unsigned* row = P + (size_t)__shfl_sync(FULL_MASK, g[r], src2) * Ti;
                    bool v = false;
                    for (int u = lo + lane; u <= hi; u += 32) v |= __ldg(row + u) > ca;
                    beaten = __any_sync(FULL_MASK, v);
                }
            }
            if (!beaten && lane == 0) {
                const int d = atomicAdd(ndet, 1);
                if (d < dcap) det[d] = base + src;
            }
        }
    }
}

// clear zeroes the cells of P and the buckets of Q that the listed strong
// points set, leaving both all zeros for the next window.
extern "C" __global__ void clear(unsigned* __restrict__ P, unsigned* __restrict__ Q, int nbk,
                                 const int* __restrict__ sf, const int* __restrict__ stp,
                                 const int* __restrict__ count, int cap, int Ti) {
    const int n = min(*count, cap);
    for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < n; s += gridDim.x * blockDim.x) {
        const int f = sf[s], t = stp[s];
        P[(size_t)f * Ti + t] = 0u;
        Q[(size_t)f * nbk + (t >> SUP_SHIFT)] = 0u;
    }
}

// ---------------------------------------------------------------------------
// Spike records.

// The record of one spike, REC_WORDS 32-bit words: t', f, q | sign << 16,
// amplitude, x, y (float bits), then the DNC·DP features.
#define REC_HEAD 6
#define REC_WORDS (REC_HEAD + DNC * DP)

// emit writes the records of the detections, one block per detection:
// thread 0 recomputes the best template and sign (as centres did) and the
// relu-weighted position in float64, as the CPU's emit; threads
// j·DP + p < DNC·DP project the nt samples of channel iC(j, f) centred at
// the peak on wPCA row p in float64, in the CPU's order.
extern "C" __global__ void emit(unsigned* __restrict__ rec, const int* __restrict__ det,
                                const int* __restrict__ ndet, int dcap, const int* __restrict__ sf,
                                const int* __restrict__ stp, const float* __restrict__ sa,
                                const float* __restrict__ B, const float* __restrict__ x,
                                const int* __restrict__ iC, const float* __restrict__ W,
                                const double* __restrict__ chx, const double* __restrict__ chy,
                                const float* __restrict__ wpca, int T, int Ti, float thr2) {
    const int n = min(*ndet, dcap);
    for (int d = blockIdx.x; d < n; d += gridDim.x) {
        const int s = det[d];
        const int f = sf[s];
        const int tp = stp[s];
        unsigned* r = rec + (size_t)d * REC_WORDS;
        if (threadIdx.x == 0) {
            int ic[DNC];
#pragma unroll
            for (int j = 0; j < DNC; ++j) ic[j] = iC[f * DNC + j];
            int q, sg;
            evaluate(B, ic, W + (size_t)f * DS * DNC, Ti, tp, thr2, q, sg);
            const int k = q % DK;
            double sw = 0.0, sx = 0.0, sy = 0.0;
            for (int j = 0; j < DNC; ++j) {
                const double v = (double)B[((size_t)ic[j] * Ti + tp) * DK + k] * (double)sg;
                if (v > 0.0) {
                    sw = __dadd_rn(sw, v);
                    sx = __dadd_rn(sx, __dmul_rn(v, chx[ic[j]]));
                    sy = __dadd_rn(sy, __dmul_rn(v, chy[ic[j]]));
                }
            }
            r[0] = (unsigned)tp;
            r[1] = (unsigned)f;
            r[2] = (unsigned)(q & 0xffff) | ((unsigned)(sg & 0xffff) << 16);
            r[3] = __float_as_uint(sa[s]);
            r[4] = __float_as_uint((float)(sx / sw));
            r[5] = __float_as_uint((float)(sy / sw));
        }
        for (int i = threadIdx.x; i < DNC * DP; i += blockDim.x) {
            const int j = i / DP, p = i % DP;
            const float* xs = x + (size_t)iC[f * DNC + j] * T + DNT + tp - DHALF;
            const float* wp = wpca + p * DNT;
            double acc = 0.0;
            for (int u = 0; u < DNT; ++u) acc = __dadd_rn(acc, __dmul_rn((double)xs[u], (double)wp[u]));
            r[REC_HEAD + i] = __float_as_uint((float)acc);
        }
    }
}
