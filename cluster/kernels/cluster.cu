// Kernels of package cluster: the kNN search, the k-means++ rounds and the
// alternating-assignment rounds of every group at once (one launch per
// step over all groups, blockIdx.y = group). Compiled with --fmad=false:
// every sum is a chain of rounded products and additions in the order the
// CPU back end uses, so both give the same bits.
//
// A group g is described by meta[g*META + ...]:
//   M_N spikes, M_D features, M_S landmarks, M_K neighbours, M_SPK first
//   spike (of the per-spike arrays), M_LAND first landmark, M_X first
//   double of X (rows of M_D), M_IN first entry of the incoming lists.
// Per spike i of group g (index M_SPK + i): X row, v = ‖x‖², e, w, c,
// kn[(M_SPK+i)*KMAX + r] (landmark indices within the group), ki.
// Per landmark j: land (spike index within the group), ks, d, inStart
// (M_LAND + g + j: each group has s+1 entries), inList (spike indices).

#define META 8
#define M_N 0
#define M_D 1
#define M_S 2
#define M_K 3
#define M_SPK 4
#define M_LAND 5
#define M_X 6
#define M_IN 7

#ifndef KMAX
#define KMAX 32
#endif
#ifndef SCORE_CHUNK
#define SCORE_CHUNK 16
#endif
#define SCORE_BLOCK 256
#define KNN_PASS 4

__device__ __forceinline__ const double* rowOf(const double* X, const int* m, int i) {
    return X + (size_t)m[M_X] + (size_t)i * m[M_D];
}

// dotd is Σ_t a[t]·b[t] from 0 in order t = 0 … d−1.
__device__ __forceinline__ double dotd(const double* a, const double* b, int d) {
    double s = 0;
    for (int t = 0; t < d; t++) s += a[t] * b[t];
    return s;
}

// knn finds each spike's k nearest landmarks of its group by the squared
// distance summed in order, nearest first, equal distances by the lower
// landmark index. Grid (spike tiles, groups).
extern "C" __global__ void knn(const double* __restrict__ X, const int* __restrict__ meta,
                               const int* __restrict__ land, int* __restrict__ kn) {
    const int* m = meta + blockIdx.y * META;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n = m[M_N], d = m[M_D], s = m[M_S], k = m[M_K];
    if (i >= n) return;
    const double* xi = rowOf(X, m, i);
    double bd[KMAX];
    int bi[KMAX];
    int cnt = 0;
    // KNN_PASS landmarks per pass over x_i (each distance summed in
    // feature order), then inserted in landmark order.
    for (int j0 = 0; j0 < s; j0 += KNN_PASS) {
        const double* xl[KNN_PASS];
        double dd[KNN_PASS];
        for (int b = 0; b < KNN_PASS; b++) {
            xl[b] = rowOf(X, m, land[m[M_LAND] + min(j0 + b, s - 1)]);
            dd[b] = 0;
        }
        for (int t = 0; t < d; t++) {
            double xv = xi[t];
#pragma unroll
            for (int b = 0; b < KNN_PASS; b++) {
                double df = xv - xl[b][t];
                dd[b] += df * df;
            }
        }
        for (int b = 0; b < KNN_PASS && j0 + b < s; b++) {
            double dist = dd[b];
            if (cnt == k && !(dist < bd[k - 1])) continue;
            int p = min(cnt, k - 1);
            while (p > 0 && bd[p - 1] > dist) {
                bd[p] = bd[p - 1];
                bi[p] = bi[p - 1];
                p--;
            }
            bd[p] = dist;
            bi[p] = j0 + b;
            if (cnt < k) cnt++;
        }
    }
    int* out = kn + (size_t)(m[M_SPK] + i) * KMAX;
    for (int r = 0; r < k; r++) out[r] = bi[r];
}

// norms sets v = ‖x‖² of every spike. Grid (spike tiles, groups).
extern "C" __global__ void norms(const double* __restrict__ X, const int* __restrict__ meta, double* __restrict__ v) {
    const int* m = meta + blockIdx.y * META;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m[M_N]) return;
    const double* xi = rowOf(X, m, i);
    v[m[M_SPK] + i] = dotd(xi, xi, m[M_D]);
}

// weights sets w = max(v − e, 0) over all n spikes (flat).
extern "C" __global__ void weights(const double* __restrict__ v, const double* __restrict__ e, double* __restrict__ w,
                                   int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w[i] = fmax(v[i] - e[i], 0.0);
}

// score sums, per block of SCORE_BLOCK spikes of a group (blockIdx.x) and
// candidate a of the group's nq[g] (cand[g*ncand + a], spike indices in
// the group), the terms max(2·x_i·x_q − ‖x_q‖² − e_i, 0) in spike order
// from 0: part[(g*nblk + blockIdx.x)*ncand + a]. Block SCORE_BLOCK
// threads, grid (nblk, groups).
extern "C" __global__ void __launch_bounds__(SCORE_BLOCK)
score(const double* __restrict__ X, const int* __restrict__ meta, const double* __restrict__ v,
      const double* __restrict__ e, const int* __restrict__ cand, const int* __restrict__ nq, int ncand, int nblk,
      double* __restrict__ part) {
    __shared__ double delta[SCORE_CHUNK][SCORE_BLOCK];
    const int g = blockIdx.y;
    const int* m = meta + g * META;
    const int n = m[M_N], d = m[M_D], spk = m[M_SPK], q = nq[g];
    const int i0 = blockIdx.x * SCORE_BLOCK;
    if (i0 >= n || q == 0) return;
    const int i = i0 + threadIdx.x;
    const bool ok = i < n;
    const double* xi = ok ? rowOf(X, m, i) : X;
    const double ei = ok ? e[spk + i] : 0;
    const int* cg = cand + (size_t)g * ncand;
    double* out = part + ((size_t)g * nblk + blockIdx.x) * ncand;
    for (int a0 = 0; a0 < q; a0 += SCORE_CHUNK) {
        int na = min(SCORE_CHUNK, q - a0);
        // SCORE_CHUNK inner products at once, each summed in feature
        // order: x_i is read once per chunk, the candidates' features are
        // the same for every thread (broadcast loads).
        double acc[SCORE_CHUNK];
        const double* xq[SCORE_CHUNK];
        for (int a = 0; a < SCORE_CHUNK; a++) {
            acc[a] = 0;
            xq[a] = rowOf(X, m, cg[a0 + min(a, na - 1)]);
        }
        if (ok) {
            for (int t = 0; t < d; t++) {
                double xv = xi[t];
#pragma unroll
                for (int a = 0; a < SCORE_CHUNK; a++) acc[a] += xv * xq[a][t];
            }
        }
        for (int a = 0; a < na; a++) {
            double dl = 0;
            if (ok) {
                dl = 2 * acc[a] - v[spk + cg[a0 + a]] - ei;
                if (!(dl > 0)) dl = 0;
            }
            delta[a][threadIdx.x] = dl;
        }
        __syncthreads();
        if ((int)threadIdx.x < na) {
            double s = 0;
            for (int r = 0; r < SCORE_BLOCK; r++) s += delta[threadIdx.x][r];
            out[a0 + threadIdx.x] = s;
        }
        __syncthreads();
    }
}

// pick adds each candidate's block sums in block order and sets best[g] to
// the candidate spike of the first largest score (−1 when the group has
// no candidate). Grid (groups), any block size.
extern "C" __global__ void pick(const int* __restrict__ meta, const int* __restrict__ cand, const int* __restrict__ nq,
                                int ncand, int nblk, const double* __restrict__ part, double* __restrict__ tot,
                                int* __restrict__ best) {
    const int g = blockIdx.x;
    const int* m = meta + g * META;
    const int q = nq[g];
    const int nb = (m[M_N] + SCORE_BLOCK - 1) / SCORE_BLOCK;
    double* tg = tot + (size_t)g * ncand;
    for (int a = threadIdx.x; a < q; a += blockDim.x) {
        double s = 0;
        for (int b = 0; b < nb; b++) s += part[((size_t)g * nblk + b) * ncand + a];
        tg[a] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int bst = 0;
        for (int a = 1; a < q; a++)
            if (tg[a] > tg[bst]) bst = a;
        best[g] = q > 0 ? cand[(size_t)g * ncand + bst] : -1;
    }
}

// update moves every spike that the group's best candidate improves to
// label j. Grid (spike tiles, groups).
extern "C" __global__ void update(const double* __restrict__ X, const int* __restrict__ meta,
                                  const double* __restrict__ v, const int* __restrict__ best, int j,
                                  double* __restrict__ e, int* __restrict__ c) {
    const int* m = meta + blockIdx.y * META;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int q = best[blockIdx.y];
    if (i >= m[M_N] || q < 0) return;
    int spk = m[M_SPK];
    double gi = 2 * dotd(rowOf(X, m, i), rowOf(X, m, q), m[M_D]) - v[spk + q];
    if (gi - e[spk + i] > 0) {
        c[spk + i] = j;
        e[spk + i] = gi;
    }
}

// sizes counts the labels of a group's src (its spikes when spikes != 0,
// else its landmarks) into nk[g*K + k] and orders the labels by (size,
// index) into order[g*K + …]. Grid (groups), dynamic shared K ints.
extern "C" __global__ void sizes(const int* __restrict__ meta, const int* __restrict__ src, int spikes, int K,
                                 int* __restrict__ nk, int* __restrict__ order) {
#ifdef CTM_EMULATE
    static int cnt[4096];
#else
    extern __shared__ int cnt[];
#endif
    const int g = blockIdx.x;
    const int* m = meta + g * META;
    for (int k = threadIdx.x; k < K; k += blockDim.x) cnt[k] = 0;
    __syncthreads();
    const int n = spikes ? m[M_N] : m[M_S];
    const int* s = src + (spikes ? m[M_SPK] : m[M_LAND]);
    for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&cnt[s[i]], 1);
    __syncthreads();
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        int c = cnt[k], r = 0;
        for (int j = 0; j < K; j++) r += cnt[j] < c || (cnt[j] == c && j < k);
        nk[(size_t)g * K + k] = c;
        order[(size_t)g * K + r] = k;
    }
}

// landmarkStep sets each landmark's label to the first maximiser over the
// K labels of cnt_k − (lam[g]·ks)·N_k, cnt_k its incoming links from
// spikes of label k (scratch [landmarks][K]), N_k = nk (sizes of the spike
// labels). Grid (landmark tiles, groups).
extern "C" __global__ void landmarkStep(const int* __restrict__ meta, const double* __restrict__ lam,
                                        const int* __restrict__ ks, const int* __restrict__ inStart,
                                        const int* __restrict__ inList, const int* __restrict__ c,
                                        const int* __restrict__ nk, int K, int* __restrict__ scratch,
                                        int* __restrict__ dl) {
    const int g = blockIdx.y;
    const int* m = meta + g * META;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m[M_S]) return;
    const int land = m[M_LAND] + j, spk = m[M_SPK];
    int* cnt = scratch + (size_t)land * K;
    for (int k = 0; k < K; k++) cnt[k] = 0;
    const int* st = inStart + m[M_LAND] + g + j;
    for (int p = st[0]; p < st[1]; p++) cnt[c[spk + inList[m[M_IN] + p]]]++;
    const double pen = lam[g] * (double)ks[land];
    const int* ng = nk + (size_t)g * K;
    int best = 0;
    double bs = (double)cnt[0] - pen * (double)ng[0];
    for (int k = 1; k < K; k++) {
        double s = (double)cnt[k] - pen * (double)ng[k];
        if (s > bs) {
            best = k;
            bs = s;
        }
    }
    dl[land] = best;
}

// spikeStep sets each spike's label to the first maximiser over the K
// labels of cnt_k − (lam[g]·ki)·N_k, cnt_k its neighbours of label k,
// N_k = nk (sizes of the landmark labels): the labels seen among the
// neighbours, and the best unseen one (the first of order not seen; the
// lowest unseen index when the penalty is 0). Grid (spike tiles, groups).
extern "C" __global__ void spikeStep(const int* __restrict__ meta, const double* __restrict__ lam,
                                     const int* __restrict__ ki, const int* __restrict__ kn,
                                     const int* __restrict__ dl, const int* __restrict__ nk,
                                     const int* __restrict__ order, int K, int* __restrict__ c) {
    const int g = blockIdx.y;
    const int* m = meta + g * META;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m[M_N]) return;
    const int spk = m[M_SPK], k = m[M_K], land = m[M_LAND];
    int lab[KMAX], cnt[KMAX], nl = 0;
    const int* row = kn + (size_t)(spk + i) * KMAX;
    for (int r = 0; r < k; r++) {
        int l = dl[land + row[r]], p = 0;
        while (p < nl && lab[p] != l) p++;
        if (p == nl) {
            lab[nl] = l;
            cnt[nl++] = 0;
        }
        cnt[p]++;
    }
    const double pen = lam[g] * (double)ki[spk + i];
    const int* ng = nk + (size_t)g * K;
    int best = -1;
    double bs = 0;
    for (int p = 0; p < nl; p++) {
        double s = (double)cnt[p] - pen * (double)ng[lab[p]];
        if (best < 0 || s > bs || (s == bs && lab[p] < best)) {
            best = lab[p];
            bs = s;
        }
    }
    if (nl < K) {
        const int* og = order + (size_t)g * K;
        for (int r = 0; r < K; r++) {
            int l = pen == 0 ? r : og[r], p = 0;
            while (p < nl && lab[p] != l) p++;
            if (p == nl) {
                double s = 0 - pen * (double)ng[l];
                if (best < 0 || s > bs || (s == bs && l < best)) {
                    best = l;
                    bs = s;
                }
                break;
            }
        }
    }
    c[spk + i] = best;
}
