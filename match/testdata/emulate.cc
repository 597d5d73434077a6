// emulate.cc runs the kernels of ../kernels/match.cu on the CPU in the
// order cuda.go launches them, with the fiber emulation of CUDA blocks of
// ../../ops/testdata/emulate.h (a block's threads as fibers switching at
// __syncthreads, blocks in order). The grid-stride kernels (update, rank,
// features) run on BLOCKS blocks; columns are filtered and projected CHUNK
// at a time (small here, so that several chunks are tested).
//
//     emulate N C P T NT NC OWNED MAXPEELS TH2 NNBR NKC NUT BLOCKS NSUP < IN > OUT
//
// IN, little-endian: float32 x [C][T], wpca [P][NT]; int32 used [C];
// float64 inv [N], nm [N]; int32 nbrOff [N+1], nbr [NNBR], nbrIdx [N][N];
// int64 kcOff [N]; float32 kc [NKC]; int32 chanIdx [N][C]; int64 utOff
// [N]; float32 ut [NUT]; int32 icc [C][NC], best [N]; float32 U [N][C][P];
// int32 supOff [N+1], sup [NSUP]; float32 coef [NSUP][P].
// OUT: int32 st [8], then for the n = st[3] spikes int32 t [n], u [n];
// float64 a [n], q [n]; float32 features [n][NC][P].
// Build: g++ -std=c++20 -O1 -o emulate emulate.cc

#include "../../ops/testdata/emulate.h"

#include <cstdio>
#include <cstdlib>

using std::sqrt;

#include "../kernels/match.cu"

#define CHUNK 300

namespace {

template <class T> std::vector<T> readN(size_t n)
{
    std::vector<T> v(n + 1);  // one spare value keeps data() valid for n = 0
    if (n && fread(v.data(), sizeof(T), n, stdin) != n) {
        fprintf(stderr, "short input\n");
        exit(2);
    }
    return v;
}

template <class T> void writeN(const T* v, size_t n)
{
    if (n && fwrite(v, sizeof(T), n, stdout) != n) exit(3);
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 15) {
        fprintf(stderr, "usage: emulate N C P T NT NC OWNED MAXPEELS TH2 NNBR NKC NUT BLOCKS NSUP\n");
        return 1;
    }
    const int N = atoi(argv[1]), C = atoi(argv[2]), P = atoi(argv[3]), T = atoi(argv[4]), nt = atoi(argv[5]),
              NC = atoi(argv[6]), owned = atoi(argv[7]), maxPeels = atoi(argv[8]);
    const double th2 = atof(argv[9]);
    const size_t nnbr = atol(argv[10]), nkc = atol(argv[11]), nut = atol(argv[12]);
    const int blocks = atoi(argv[13]);
    const size_t nsup = atol(argv[14]);
    auto x = readN<float>((size_t)C * T);
    auto wpca = readN<float>((size_t)P * nt);
    auto used = readN<int>(C);
    auto inv = readN<double>(N);
    auto nm = readN<double>(N);
    auto nbrOff = readN<int>(N + 1);
    auto nbr = readN<int>(nnbr);
    auto nbrIdx = readN<int>((size_t)N * N);
    auto kcOff = readN<long long>(N);
    auto kc = readN<float>(nkc);
    auto chanIdx = readN<int>((size_t)N * C);
    auto utOff = readN<long long>(N);
    auto ut = readN<float>(nut);
    auto icc = readN<int>((size_t)C * NC);
    auto best = readN<int>(N);
    auto U = readN<float>((size_t)N * C * P);
    auto supOff = readN<int>(N + 1);
    auto sup = readN<int>(nsup);
    auto coef = readN<float>(nsup * P);

    const int chunk = CHUNK, cap = T;
    std::vector<float> B((size_t)N * T, std::nanf("")), bc((size_t)C * P * std::min(T, chunk));
    for (int e0 = 0; e0 < T; e0 += chunk) {
        const int w = std::min(chunk, T - e0);
        emuLaunch(ctm_dim3{(unsigned)((w + 255) / 256), (unsigned)C, 1},
                  [&] { filter(x.data(), T, wpca.data(), P, nt, used.data(), e0, w, bc.data()); }, FILTER_THREADS);
        emuLaunch(ctm_dim3{(unsigned)((w + 255) / 256), (unsigned)N, 1},
                  [&] { project(bc.data(), w, e0, T, P, supOff.data(), sup.data(), coef.data(), B.data()); }, 256);
    }
    std::vector<double> s(T, std::nan("")), sbar(T, std::nan(""));
    std::vector<int> su(T, -7), stamp(T, 0), cnt(T / 256 + 1, -7), st(8, 0), roundStart(maxPeels + 1, -7);
    std::vector<int> ft(cap, -7), fu(cap, -7), gt(cap, -7), gu(cap, -7);
    std::vector<double> fa(cap, std::nan("")), fq(cap, std::nan("")), ga(cap, std::nan("")), gq(cap, std::nan(""));
    std::vector<float> feat((size_t)cap * NC * P, std::nanf(""));
    const unsigned colBlocks = (T + 255) / 256, ownBlocks = (owned + 255) / 256;
    for (int r = 0; r < maxPeels; r++) {
        emuLaunch(ctm_dim3{colBlocks, 1, 1}, [&] {
            score(B.data(), N, T, nt, inv.data(), stamp.data(), r, r == 0, s.data(), su.data(), st.data());
        }, 256);
        emuLaunch(ctm_dim3{colBlocks, 1, 1}, [&] { runmax(s.data(), T, nt, sbar.data(), st.data()); }, 256);
        emuLaunch(ctm_dim3{ownBlocks, 1, 1},
                  [&] { peakCount(s.data(), sbar.data(), nt, owned, th2, cnt.data(), st.data()); }, 256);
        emuLaunch(ctm_dim3{ownBlocks, 1, 1}, [&] {
            peakWrite(s.data(), sbar.data(), su.data(), B.data(), T, nt, owned, th2, nm.data(), cnt.data(), r, cap,
                      ft.data(), fu.data(), fa.data(), fq.data(), roundStart.data(), st.data());
        }, 256);
        emuLaunch(ctm_dim3{(unsigned)blocks, 1, 1}, [&] {
            update(B.data(), N, T, nt, ft.data(), fu.data(), fa.data(), nbrOff.data(), nbr.data(), nbrIdx.data(),
                   kcOff.data(), kc.data(), stamp.data(), r, st.data());
        }, 256);
        // As cuda.go: the host reads the state after rounds 4, 8, 16, … and
        // stops launching once a round found nothing (the rounds launched
        // in between return at once).
        const int n = r + 1;
        if (n >= 4 && (n & (n - 1)) == 0 && n < maxPeels && st[ST_STOP]) break;
    }
    emuLaunch(ctm_dim3{(unsigned)blocks, 1, 1}, [&] {
        rank(ft.data(), fu.data(), fa.data(), fq.data(), roundStart.data(), st.data(), gt.data(), gu.data(),
             ga.data(), gq.data());
    }, 256);
    emuLaunch(ctm_dim3{(unsigned)blocks, 1, 1}, [&] {
        features(x.data(), T, C, P, nt, NC, gt.data(), gu.data(), ga.data(), st.data(), chanIdx.data(), utOff.data(),
                 ut.data(), icc.data(), best.data(), wpca.data(), U.data(), feat.data());
    }, 256);
    const int n = st[ST_N];
    writeN(st.data(), 8);
    writeN(gt.data(), n);
    writeN(gu.data(), n);
    writeN(ga.data(), n);
    writeN(gq.data(), n);
    writeN(feat.data(), (size_t)n * NC * P);
    return 0;
}
