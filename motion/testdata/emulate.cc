// emulate.cc runs the kernels of ../kernels/motion.cu on the CPU, as
// cuda.go launches them, with the fiber emulation of CUDA blocks of
// ../../ops/testdata/emulate.h (a block's threads as fibers switching at
// __syncthreads, blocks in order):
//
//     emulate scores NB ROWS L SMAX B < G R S STARTS > OUT
//     emulate bin N CAP ROWS < COUNT Y AMP ROWEDGE AMPEDGE > HIST SPIKES BAD
//
// Inputs and outputs are little-endian binary arrays in the kernels'
// types (float64 G [NB][ROWS][20], R [ROWS][20]; int32 S [NB], STARTS [B];
// float64 OUT [B][2·SMAX+1][NB]; int32 COUNT; float32 Y, AMP [N],
// ROWEDGE [ROWS−1], AMPEDGE [19]; uint32 HIST [ROWS][20]; int32 SPIKES,
// BAD). Build: g++ -std=c++20 -O1 -ffp-contract=off -o emulate emulate.cc

#include "../../ops/testdata/emulate.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

using std::isfinite;
using std::min;

inline int atomicAdd(int* p, int v) { return std::atomic_ref<int>(*p).fetch_add(v); }

// CUDA's IEEE-rounded float64 intrinsics (built with -ffp-contract=off, so
// nothing else is fused).
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }

#define SCORE_THREADS 256
#include "../kernels/motion.cu"

namespace {

template <class T> std::vector<T> readN(size_t n)
{
    std::vector<T> v(n);
    if (n && fread(v.data(), sizeof(T), n, stdin) != n) {
        fprintf(stderr, "short input\n");
        exit(2);
    }
    return v;
}

template <class T> void writeN(const std::vector<T>& v)
{
    if (!v.empty() && fwrite(v.data(), sizeof(T), v.size(), stdout) != v.size()) exit(3);
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) return 1;
    std::string mode = argv[1];
    if (mode == "scores" && argc == 7) {
        int nb = atoi(argv[2]), rows = atoi(argv[3]), l = atoi(argv[4]), smax = atoi(argv[5]), B = atoi(argv[6]);
        auto G = readN<double>((size_t)nb * rows * 20);
        auto R = readN<double>((size_t)rows * 20);
        auto S = readN<int>(nb);
        auto starts = readN<int>(B);
        std::vector<double> out((size_t)B * (2 * smax + 1) * nb, std::nan(""));
        emuLaunch(ctm_dim3{(unsigned)nb, (unsigned)(2 * smax + 1), (unsigned)B},
                  [&] { scores(G.data(), R.data(), S.data(), starts.data(), nb, rows, l, smax, out.data()); },
                  SCORE_THREADS);
        writeN(out);
        return 0;
    }
    if (mode == "bin" && argc == 5) {
        int n = atoi(argv[2]), cap = atoi(argv[3]), rows = atoi(argv[4]);
        auto count = readN<int>(1);
        auto y = readN<float>(n);
        auto amp = readN<float>(n);
        auto rowEdge = readN<float>(rows - 1);
        auto ampEdge = readN<float>(19);
        std::vector<unsigned> hist((size_t)rows * 20, 0);
        std::vector<int> spikes(1, 0), bad(1, 0);
        rowEdge.push_back(0);  // never read: keeps data() valid for rows = 1
        emuLaunch(ctm_dim3{(unsigned)((cap + 255) / 256), 1, 1},
                  [&] {
                      bin(y.data(), amp.data(), count.data(), cap, rowEdge.data(), rows, ampEdge.data(), hist.data(),
                          spikes.data(), bad.data());
                  },
                  256);
        writeN(hist);
        writeN(spikes);
        writeN(bad);
        return 0;
    }
    fprintf(stderr, "usage: emulate scores NB ROWS L SMAX B | bin N CAP ROWS\n");
    return 1;
}
