// emulate.cc runs the kernels of ../kernels/cluster.cu on the CPU, as
// cuda.go launches them, with the fiber emulation of CUDA blocks of
// ../../ops/testdata/emulate.h (a block's threads as fibers switching at
// __syncthreads, blocks in order):
//
//     emulate knn G NSPK NX NLAND MAXN < META X LAND > KN
//     emulate kround G NSPK NX Q J MAXN < META X E C CAND NQ > E C W BEST TOT
//     emulate assign G NSPK NLAND NIN K R MAXN MAXS < META KN KI KS LAM INSTART INLIST C > C D
//     emulate launch KERNEL GX GY GZ BLOCK NARGS < ARGS > BUFFERS
//
// Inputs and outputs are little-endian binary arrays in the kernels' types
// (int32 META [G][8], LAND, KN [NSPK][KMAX], C, CAND [G][Q], NQ [G], BEST
// [G], KI, KS, INSTART [NLAND+G], INLIST; float64 X [NX], E, W [NSPK],
// LAM [G], TOT [G][Q] the candidate scores). kround runs norms, score, pick, update and weights (one
// k-means++ round after the host's draw); assign runs R rounds of sizes,
// landmarkStep, sizes, spikeStep. launch runs one kernel on arguments
// given as (int32 kind: 0 buffer, int64 bytes, bytes; 1 int32; 2 float64)
// and writes every buffer back in argument order (the tests' device).
// Build: g++ -std=c++20 -O1 -o emulate
// emulate.cc

#include "../../ops/testdata/emulate.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

using std::fmax;
using std::min;

inline int atomicAdd(int* p, int v) { return std::atomic_ref<int>(*p).fetch_add(v); }

#include "../kernels/cluster.cu"

namespace {

template <class T> std::vector<T> readN(size_t n)
{
    std::vector<T> v(n + 1);  // one more: data() valid for n = 0
    if (n && fread(v.data(), sizeof(T), n, stdin) != n) {
        fprintf(stderr, "short input\n");
        exit(2);
    }
    v.pop_back();
    v.reserve(n + 1);
    return v;
}

template <class T> void writeN(const std::vector<T>& v)
{
    if (!v.empty() && fwrite(v.data(), sizeof(T), v.size(), stdout) != v.size()) exit(3);
}

constexpr unsigned kTile = 128;

// Arg is a kernel argument of launch: a buffer (8-byte aligned) or a
// scalar, converting to the kernel's parameter type.
struct Arg {
    int kind = 0;
    std::vector<double> b;
    size_t bytes = 0;
    int i = 0;
    double d = 0;
    template <class T> operator T*() { return (T*)b.data(); }
    operator int() const { return i; }
    operator double() const { return d; }
};

unsigned tiles(int n, unsigned t) { return (unsigned)std::max(1, (n + (int)t - 1) / (int)t); }

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) return 1;
    std::string mode = argv[1];
    auto arg = [&](int i) { return atoi(argv[i]); };
    if (mode == "knn" && argc == 7) {
        int G = arg(2), nspk = arg(3), nx = arg(4), nland = arg(5), maxn = arg(6);
        auto meta = readN<int>((size_t)G * META);
        auto X = readN<double>(nx);
        auto land = readN<int>(nland);
        std::vector<int> kn((size_t)nspk * KMAX, -7);
        emuLaunch(ctm_dim3{tiles(maxn, kTile), (unsigned)G, 1}, [&] { knn(X.data(), meta.data(), land.data(), kn.data()); },
                  kTile);
        writeN(kn);
        return 0;
    }
    if (mode == "kround" && argc == 8) {
        int G = arg(2), nspk = arg(3), nx = arg(4), Q = arg(5), j = arg(6), maxn = arg(7);
        auto meta = readN<int>((size_t)G * META);
        auto X = readN<double>(nx);
        auto e = readN<double>(nspk);
        auto c = readN<int>(nspk);
        auto cand = readN<int>((size_t)G * Q);
        auto nq = readN<int>(G);
        int nblk = (int)tiles(maxn, SCORE_BLOCK);
        std::vector<double> v(nspk + 1, std::nan("")), w(nspk + 1, std::nan("")),
            part((size_t)G * nblk * Q + 1, std::nan("")), tot((size_t)G * Q + 1, std::nan(""));
        std::vector<int> best(G, -7);
        emuLaunch(ctm_dim3{tiles(maxn, kTile), (unsigned)G, 1}, [&] { norms(X.data(), meta.data(), v.data()); }, kTile);
        emuLaunch(ctm_dim3{(unsigned)nblk, (unsigned)G, 1},
                  [&] { score(X.data(), meta.data(), v.data(), e.data(), cand.data(), nq.data(), Q, nblk, part.data()); },
                  SCORE_BLOCK);
        emuLaunch(ctm_dim3{(unsigned)G, 1, 1},
                  [&] { pick(meta.data(), cand.data(), nq.data(), Q, nblk, part.data(), tot.data(), best.data()); }, 128);
        emuLaunch(ctm_dim3{tiles(maxn, kTile), (unsigned)G, 1},
                  [&] { update(X.data(), meta.data(), v.data(), best.data(), j, e.data(), c.data()); }, kTile);
        emuLaunch(ctm_dim3{tiles(nspk, 256), 1, 1}, [&] { weights(v.data(), e.data(), w.data(), nspk); }, 256);
        w.pop_back();
        writeN(e);
        writeN(c);
        writeN(w);
        writeN(best);
        tot.pop_back();
        writeN(tot);
        return 0;
    }
    if (mode == "assign" && argc == 10) {
        int G = arg(2), nspk = arg(3), nland = arg(4), nin = arg(5), K = arg(6), R = arg(7), maxn = arg(8), maxs = arg(9);
        auto meta = readN<int>((size_t)G * META);
        auto kn = readN<int>((size_t)nspk * KMAX);
        auto ki = readN<int>(nspk);
        auto ks = readN<int>(nland);
        auto lam = readN<double>(G);
        auto inStart = readN<int>(nland + G);
        auto inList = readN<int>(nin);
        auto c = readN<int>(nspk);
        std::vector<int> d(nland + 1, -7), nk((size_t)G * K, -7), order((size_t)G * K, -7), scratch((size_t)nland * K + 1, -7);
        for (int r = 0; r < R; r++) {
            emuLaunch(ctm_dim3{(unsigned)G, 1, 1}, [&] { sizes(meta.data(), c.data(), 1, K, nk.data(), order.data()); }, 256);
            emuLaunch(ctm_dim3{tiles(maxs, kTile), (unsigned)G, 1},
                      [&] {
                          landmarkStep(meta.data(), lam.data(), ks.data(), inStart.data(), inList.data(), c.data(),
                                       nk.data(), K, scratch.data(), d.data());
                      },
                      kTile);
            emuLaunch(ctm_dim3{(unsigned)G, 1, 1}, [&] { sizes(meta.data(), d.data(), 0, K, nk.data(), order.data()); }, 256);
            emuLaunch(ctm_dim3{tiles(maxn, kTile), (unsigned)G, 1},
                      [&] {
                          spikeStep(meta.data(), lam.data(), ki.data(), kn.data(), d.data(), nk.data(), order.data(), K,
                                    c.data());
                      },
                      kTile);
        }
        d.pop_back();
        writeN(c);
        writeN(d);
        return 0;
    }
    if (mode == "launch" && argc == 8) {
        std::string name = argv[2];
        ctm_dim3 grid{(unsigned)arg(3), (unsigned)arg(4), (unsigned)arg(5)};
        int block = arg(6), nargs = arg(7);
        std::vector<Arg> a(nargs);
        for (auto& x : a) {
            x.kind = readN<int>(1)[0];
            if (x.kind == 0) {
                x.bytes = (size_t)readN<long long>(1)[0];
                x.b.resize(x.bytes / 8 + 1);
                if (x.bytes && fread(x.b.data(), 1, x.bytes, stdin) != x.bytes) return 2;
            } else if (x.kind == 1) {
                x.i = readN<int>(1)[0];
            } else {
                x.d = readN<double>(1)[0];
            }
        }
        std::function<void()> f;
        if (name == "knn") f = [&] { knn(a[0], a[1], a[2], a[3]); };
        else if (name == "norms") f = [&] { norms(a[0], a[1], a[2]); };
        else if (name == "weights") f = [&] { weights(a[0], a[1], a[2], a[3]); };
        else if (name == "score") f = [&] { score(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]); };
        else if (name == "pick") f = [&] { pick(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); };
        else if (name == "update") f = [&] { update(a[0], a[1], a[2], a[3], a[4], a[5], a[6]); };
        else if (name == "sizes") f = [&] { sizes(a[0], a[1], a[2], a[3], a[4], a[5]); };
        else if (name == "landmarkStep")
            f = [&] { landmarkStep(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]); };
        else if (name == "spikeStep") f = [&] { spikeStep(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]); };
        else {
            fprintf(stderr, "no kernel %s\n", name.c_str());
            return 1;
        }
        emuLaunch(grid, f, block);
        for (auto& x : a)
            if (x.kind == 0 && x.bytes && fwrite(x.b.data(), 1, x.bytes, stdout) != x.bytes) return 3;
        return 0;
    }
    fprintf(stderr, "usage: emulate knn … | kround … | assign …\n");
    return 1;
}
