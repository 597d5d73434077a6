// Kernels of the template-learning pass on the GPU (cuda_learn.go): the
// isolated single-channel peaks of one whitened window and their clips,
// exactly as FindClips (learn.go) finds them. Compiled at run time by
// NVRTC; entry points are extern "C".
//
// Compile-time constants (-D): DNT template length nt, DT0 the peak's index
// in a clip (nt0min), PCR/PTR the peak box (±channels, ±samples), ICR/ITR
// the isolation box. x is the window, float32 channel-major x[c*T + t].

#define FULL_MASK 0xffffffffu

// peaks sets flag[c*T + t] to 1 where |x| exceeds th and no |x| in the box
// of ±PCR channels × ±PTR samples (clipped at the edges) is larger, else 0.
extern "C" __global__ void peaks(unsigned char* __restrict__ flag, const float* __restrict__ x, int C, int T,
                                 float th) {
    const long long n = (long long)C * T;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)(i / T), t = (int)(i % T);
        const float a = fabsf(__ldg(x + i));
        bool peak = a > th;
        for (int cc = max(c - PCR, 0); peak && cc <= min(c + PCR, C - 1); ++cc) {
            const float* r = x + (size_t)cc * T;
            for (int tt = max(t - PTR, 0); tt <= min(t + PTR, T - 1); ++tt)
                if (fabsf(__ldg(r + tt)) > a) {
                    peak = false;
                    break;
                }
        }
        flag[i] = peak ? 1 : 0;
    }
}

// isolated appends every peak at t in [DNT, T − DNT) that is the only peak
// within ±ICR channels × ±ITR samples: its key c*T + t to keys and its clip
// x[c, t − DT0 … t − DT0 + DNT − 1], scaled to unit L2 norm in float64 in
// FindClips' order, to clips, at a slot taken with atomicAdd on count
// (slots ≥ cap are counted, not written; the host orders the clips by key).
extern "C" __global__ void isolated(int* __restrict__ keys, float* __restrict__ clips, int* __restrict__ count, int cap,
                                    const unsigned char* __restrict__ flag, const float* __restrict__ x, int C,
                                    int T) {
    const long long n = (long long)C * T;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        if (!flag[i]) continue;
        const int c = (int)(i / T), t = (int)(i % T);
        if (t < DNT || t >= T - DNT) continue;
        int peaks = 0;
        for (int cc = max(c - ICR, 0); cc <= min(c + ICR, C - 1); ++cc) {
            const unsigned char* f = flag + (size_t)cc * T;
            for (int tt = max(t - ITR, 0); tt <= min(t + ITR, T - 1); ++tt) peaks += f[tt];
        }
        if (peaks != 1) continue;
        const int slot = atomicAdd(count, 1);
        if (slot >= cap) continue;
        keys[slot] = (int)i;
        const float* clip = x + i - DT0;
        double ss = 0.0;
        for (int u = 0; u < DNT; ++u) {
            const double v = (double)clip[u];
            ss = __dadd_rn(ss, __dmul_rn(v, v));
        }
        const double norm = __dsqrt_rn(ss);
        float* out = clips + (size_t)slot * DNT;
        for (int u = 0; u < DNT; ++u) out[u] = (float)__ddiv_rn((double)clip[u], norm);
    }
}
