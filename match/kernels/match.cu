// Kernels of package match: learned-template matching of one window on
// the device (the CUDA back end of match.Matcher).
//
// Compiled with --fmad=false: every float32 and float64 operation rounds
// on its own, as the Go back end computes it, so the B updates, residuals,
// scores and features repeat the CPU's arithmetic exactly (the filtering,
// a direct correlation here and an FFT there, both float64 rounded to
// float32, can differ in the last bit).
//
// Per round r the host launches score, runmax, peakCount, peakWrite and
// update without synchronising; the device state st (see the ST_ indices)
// says when a round found nothing (ST_STOP), and then every later kernel
// returns at once. Spikes are stored by round, each round in column order;
// rank sorts them by (column, template, round) and features computes the
// residual at each spike and its PCA features.

#define ST_STOP 0   // 1 once a round found no spike or the store overflowed
#define ST_OVER 1   // 1 if the spikes did not fit the store
#define ST_ROUNDS 2 // rounds that found spikes
#define ST_N 3      // spikes stored
#define ST_START 4  // ST_START + (r&1): start of round r's spikes

#define FILTER_THREADS 256
#define MAX_NT 255
#define MAX_PNT 2048
#define MAX_SEG 8192

// filter sets bc[(c*P+p)*w + i] = Σ_j x[c, e0+i+j−nt/2]·wpca[p, j] for the
// columns e0 … e0+w−1 of channel c = blockIdx.y (x is zero outside the
// window; float64 accumulation rounded to float32), or 0 if no template
// uses the channel.
extern "C" __global__ void filter(const float* __restrict__ x, int T, const float* __restrict__ wpca, int P, int nt,
                                  const int* __restrict__ used, int e0, int w, float* __restrict__ bc) {
    __shared__ double xs[FILTER_THREADS + MAX_NT];  // float32 values, converted once
    __shared__ double ws[MAX_PNT];
    const int c = blockIdx.y, i0 = blockIdx.x * FILTER_THREADS, h = nt / 2;
    const int i = i0 + threadIdx.x;
    if (!used[c]) {
        for (int p = 0; p < P; p++)
            if (i < w) bc[((size_t)c * P + p) * w + i] = 0;
        return;
    }
    for (int k = threadIdx.x; k < P * nt; k += FILTER_THREADS) ws[k] = (double)wpca[k];
    for (int k = threadIdx.x; k < FILTER_THREADS + nt - 1; k += FILTER_THREADS) {
        int t = e0 + i0 + k - h;
        xs[k] = (t >= 0 && t < T) ? (double)x[(size_t)c * T + t] : 0.0;
    }
    __syncthreads();
    if (i >= w) return;
    for (int p = 0; p < P; p++) {
        double s = 0;
        for (int j = 0; j < nt; j++) s += xs[threadIdx.x + j] * ws[p * nt + j];
        bc[((size_t)c * P + p) * w + i] = (float)s;
    }
}

// project sets B[u, e0+i] = Σ over template u's support channels c (in
// order) and PCs p of coef·bc[(c*P+p)*w + i], in float64 rounded to
// float32, as the CPU back end sums it: u = blockIdx.y, i the column.
extern "C" __global__ void project(const float* __restrict__ bc, int w, int e0, int T, int P,
                                   const int* __restrict__ supOff, const int* __restrict__ sup,
                                   const float* __restrict__ coef, float* __restrict__ B) {
    const int u = blockIdx.y, i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= w) return;
    double a = 0;
    for (int k = supOff[u]; k < supOff[u + 1]; k++) {
        const int c = sup[k];
        for (int p = 0; p < P; p++) a += (double)coef[(size_t)k * P + p] * (double)bc[((size_t)c * P + p) * w + i];
    }
    B[(size_t)u * T + e0 + i] = (float)a;
}

// score sets s[t] = max_u max(B[u,t],0)²·inv[u] and su[t] its first
// maximiser for the columns in [nt, T−nt) (0 elsewhere) that round r must
// rescore: all of them when all is set, else those with stamp[t] == r.
extern "C" __global__ void score(const float* __restrict__ B, int N, int T, int nt, const double* __restrict__ inv,
                                 const int* __restrict__ stamp, int r, int all, double* __restrict__ s,
                                 int* __restrict__ su, const int* __restrict__ st) {
    if (st[ST_STOP]) return;
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T || (!all && stamp[t] != r)) return;
    double best = 0;
    int bu = 0;
    if (t >= nt && t < T - nt) {
        for (int u = 0; u < N; u++) {
            double v = B[(size_t)u * T + t];
            if (v <= 0) continue;
            double sc = v * v * inv[u];
            if (sc > best) {
                best = sc;
                bu = u;
            }
        }
    }
    s[t] = best;
    su[t] = bu;
}

// runmax sets sbar[t] = max of s over |t'−t| ≤ nt within the window.
extern "C" __global__ void runmax(const double* __restrict__ s, int T, int nt, double* __restrict__ sbar,
                                  const int* __restrict__ st) {
    __shared__ double ss[FILTER_THREADS + 2 * MAX_NT];
    if (st[ST_STOP]) return;
    const int t0 = blockIdx.x * FILTER_THREADS, t = t0 + threadIdx.x;
    for (int k = threadIdx.x; k < FILTER_THREADS + 2 * nt; k += FILTER_THREADS) {
        int q = t0 + k - nt;
        ss[k] = (q >= 0 && q < T) ? s[q] : -1.0;
    }
    __syncthreads();
    if (t >= T) return;
    double m = ss[threadIdx.x];
    for (int k = 1; k <= 2 * nt; k++) m = ss[threadIdx.x + k] > m ? ss[threadIdx.x + k] : m;
    sbar[t] = m;
}

// isPeak reports whether column t is a spike of the round: its score is
// the largest within ±nt and above th2.
__device__ __forceinline__ bool isPeak(const double* s, const double* sbar, int t, double th2) {
    double sb = sbar[t], d = sb - s[t];
    return sb > th2 && (d < 0 ? -d : d) < 1e-9;
}

// peakCount counts the spikes of block b's FILTER_THREADS columns of
// [nt, nt+owned) into cnt[b].
extern "C" __global__ void peakCount(const double* __restrict__ s, const double* __restrict__ sbar, int nt, int owned,
                                     double th2, int* __restrict__ cnt, const int* __restrict__ st) {
    __shared__ int f[FILTER_THREADS];
    if (st[ST_STOP]) return;
    const int i = blockIdx.x * FILTER_THREADS + threadIdx.x;
    f[threadIdx.x] = i < owned && isPeak(s, sbar, nt + i, th2);
    __syncthreads();
    if (threadIdx.x == 0) {
        int n = 0;
        for (int k = 0; k < FILTER_THREADS; k++) n += f[k];
        cnt[blockIdx.x] = n;
    }
}

// peakWrite stores round r's spikes after the spikes of earlier rounds, in
// column order: column ft, template fu, coefficient fa = B/‖U‖² and
// projection fq = B/‖U‖. The last block records the round (or stops the
// rounds if it found nothing or the store of cap spikes is full).
extern "C" __global__ void peakWrite(const double* __restrict__ s, const double* __restrict__ sbar,
                                     const int* __restrict__ su, const float* __restrict__ B, int T, int nt,
                                     int owned, double th2, const double* __restrict__ nm,
                                     const int* __restrict__ cnt, int r, int cap, int* __restrict__ ft,
                                     int* __restrict__ fu, double* __restrict__ fa, double* __restrict__ fq,
                                     int* __restrict__ roundStart, int* __restrict__ st) {
    __shared__ int f[FILTER_THREADS];
    __shared__ int base, total, start, stopped;
    // The last block may set ST_STOP while others run: one thread reads it
    // for the whole block, so that all its threads reach the barriers.
    if (threadIdx.x == 0) stopped = st[ST_STOP];
    __syncthreads();
    if (stopped) return;
    if (threadIdx.x == 0) {
        int b = 0, n = 0;
        for (int k = 0; k < (int)gridDim.x; k++) {
            if (k == (int)blockIdx.x) b = n;
            n += cnt[k];
        }
        base = b;
        total = n;
        start = st[ST_START + (r & 1)];
    }
    const int i = blockIdx.x * FILTER_THREADS + threadIdx.x;
    const bool pk = i < owned && isPeak(s, sbar, nt + i, th2);
    f[threadIdx.x] = pk;
    __syncthreads();
    const bool over = start + total > cap;
    if (threadIdx.x == 0) {
        int n = 0;
        for (int k = 0; k < FILTER_THREADS; k++) {
            int v = f[k];
            f[k] = n;
            n += v;
        }
        if (blockIdx.x == gridDim.x - 1) {
            if (total == 0 || over) st[ST_STOP] = 1;
            if (over) st[ST_OVER] = 1;
            if (total > 0 && !over) {
                roundStart[r] = start;
                roundStart[r + 1] = start + total;
                st[ST_START + ((r + 1) & 1)] = start + total;
                st[ST_ROUNDS] = r + 1;
                st[ST_N] = start + total;
            }
        }
    }
    __syncthreads();
    if (!pk || over) return;
    const int k = start + base + f[threadIdx.x], t = nt + i, u = su[t];
    const double bv = B[(size_t)u * T + t];
    ft[k] = t;
    fu[k] = u;
    fa[k] = bv / nm[u];
    fq[k] = bv / sqrt(nm[u]);
}

// update subtracts round r's spikes from B through the templates'
// cross-correlations: B[v, τ] −= a·K_uv[τ−t+nt−1] for each spike (t, u, a)
// and neighbour v of u, τ within ±(nt−1) of t, in column order of the
// spikes, each element of B by one thread (the one of the first spike that
// reaches it), so that the updates round as the CPU's. It marks the
// changed columns with stamp = r+1.
extern "C" __global__ void update(float* __restrict__ B, int N, int T, int nt, const int* __restrict__ ft,
                                  const int* __restrict__ fu, const double* __restrict__ fa,
                                  const int* __restrict__ nbrOff, const int* __restrict__ nbr,
                                  const int* __restrict__ nbrIdx, const long long* __restrict__ kcOff,
                                  const float* __restrict__ kc, int* __restrict__ stamp, int r,
                                  const int* __restrict__ st) {
    if (st[ST_ROUNDS] != r + 1) return;  // round r found no spike
    const int r0 = st[ST_START + (r & 1)], r1 = st[ST_START + ((r + 1) & 1)];
    const int L = 2 * nt - 1;
    for (int i = r0 + blockIdx.x; i < r1; i += gridDim.x) {
        const int t = ft[i], u = fu[i];
        const int nb = nbrOff[u + 1] - nbrOff[u];
        for (int item = threadIdx.x; item < nb * L; item += blockDim.x) {
            const int k = item / L, d = item % L;
            const int v = nbr[nbrOff[u] + k], tau = t - (nt - 1) + d;
            if (k == 0) stamp[tau] = r + 1;
            bool owned = true;
            for (int j = i - 1; j >= r0 && ft[j] >= tau - (nt - 1); j--) {
                if (nbrIdx[(size_t)fu[j] * N + v] >= 0) {
                    owned = false;
                    break;
                }
            }
            if (!owned) continue;
            float acc = B[(size_t)v * T + tau];
            for (int j = i; j < r1 && ft[j] <= tau + (nt - 1); j++) {
                const int uj = fu[j], kj = nbrIdx[(size_t)uj * N + v];
                if (kj < 0) continue;
                const float a = (float)fa[j];
                acc = acc - a * kc[kcOff[uj] + (long long)kj * L + (tau - ft[j] + nt - 1)];
            }
            B[(size_t)v * T + tau] = acc;
        }
    }
}

// keyLess orders spikes by (column, template).
__device__ __forceinline__ bool keyLess(int ta, int ua, int tb, int ub) { return ta < tb || (ta == tb && ua < ub); }

// rank moves the stored spikes into order of (column, template, round):
// spike i of round k goes to its index within the round plus, for every
// other round, the number of its spikes that come before it.
extern "C" __global__ void rank(const int* __restrict__ ft, const int* __restrict__ fu, const double* __restrict__ fa,
                                const double* __restrict__ fq, const int* __restrict__ roundStart,
                                const int* __restrict__ st, int* __restrict__ gt, int* __restrict__ gu,
                                double* __restrict__ ga, double* __restrict__ gq) {
    const int R = st[ST_ROUNDS], n = st[ST_N];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int k = 0;
        while (roundStart[k + 1] <= i) k++;
        const int t = ft[i], u = fu[i];
        int pos = i - roundStart[k];
        for (int q = 0; q < R; q++) {
            if (q == k) continue;
            // The spikes of round q before (t, u): strictly before for later
            // rounds, at or before for earlier ones.
            int lo = roundStart[q], hi = roundStart[q + 1];
            while (lo < hi) {
                int m = (lo + hi) >> 1;
                bool before = q < k ? !keyLess(t, u, ft[m], fu[m]) : keyLess(ft[m], fu[m], t, u);
                if (before) lo = m + 1; else hi = m;
            }
            pos += lo - roundStart[q];
        }
        gt[pos] = t;
        gu[pos] = u;
        ga[pos] = fa[i];
        gq[pos] = fq[i];
    }
}

// features sets, for each sorted spike n (one block each), the residual on
// its template's NC feature channels (x minus every spike's fitted
// template a·ũ, in spike order) over columns t−nt/2 … t+nt/2 and its PCA
// projections plus the spike's own template: feat[(n*NC + r)*P + p].
extern "C" __global__ void features(const float* __restrict__ x, int T, int C, int P, int nt, int NC,
                                    const int* __restrict__ gt, const int* __restrict__ gu,
                                    const double* __restrict__ ga, const int* __restrict__ st,
                                    const int* __restrict__ chanIdx, const long long* __restrict__ utOff,
                                    const float* __restrict__ ut, const int* __restrict__ icc,
                                    const int* __restrict__ best, const float* __restrict__ wpca,
                                    const float* __restrict__ U, float* __restrict__ feat) {
    __shared__ float seg[MAX_SEG];
    __shared__ int lo, hi;
    const int n = st[ST_N], h = nt / 2;
    for (int i = blockIdx.x; i < n; i += gridDim.x) {
        const int t = gt[i], u = gu[i];
        if (threadIdx.x == 0) {
            int a = i, b = i + 1;
            while (a > 0 && gt[a - 1] >= t - (nt - 1)) a--;
            while (b < n && gt[b] <= t + (nt - 1)) b++;
            lo = a;
            hi = b;
        }
        __syncthreads();
        for (int item = threadIdx.x; item < NC * nt; item += blockDim.x) {
            const int rr = item / nt, j = item % nt;
            const int c = icc[best[u] * NC + rr], tau = t - h + j;
            float acc = x[(size_t)c * T + tau];
            for (int k = lo; k < hi; k++) {
                const int tk = gt[k], uk = gu[k];
                if (tau < tk - h || tau > tk - h + nt - 1) continue;
                const int ci = chanIdx[(size_t)uk * C + c];
                if (ci < 0) continue;
                const float a = (float)ga[k];
                acc = acc - a * ut[utOff[uk] + (long long)ci * nt + (tau - tk + h)];
            }
            seg[item] = acc;
        }
        __syncthreads();
        for (int item = threadIdx.x; item < NC * P; item += blockDim.x) {
            const int rr = item / P, p = item % P;
            const int c = icc[best[u] * NC + rr];
            double s = 0;
            for (int j = 0; j < nt; j++) s += (double)seg[rr * nt + j] * (double)wpca[p * nt + j];
            s += ga[i] * (double)U[((size_t)u * C + c) * P + p];
            feat[((size_t)i * NC + rr) * P + p] = (float)s;
        }
        __syncthreads();
    }
}
