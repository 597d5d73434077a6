// emulate.cc runs the kernels of ../kernels/trailing_mean.cu (in ops' test,
// the product's source string TrailingMeanCUDA, its include expanded), as
// the host launches them, on the CPU (see emulate.h):
//
//     emulate TYPE KERNEL ROWS N CF XMIS YMIS REPS < input > output
//
// TYPE is f32, f16 or bf16; KERNEL is warp, direct or lookback; input and
// output are ROWS*N elements in the storage type's bits, little-endian. The
// input is placed XMIS elements and the output YMIS elements past a 16-byte
// boundary, to exercise the unaligned paths. The kernel runs REPS times
// (epochs 1, 2, …, so look-back state left by one launch is reused by the
// next) and the last output is written. Build:
//
//     g++ -std=c++20 -O1 -o emulate emulate.cc

#include "emulate.h"

#include "../kernels/trailing_mean.cu"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

typedef long long i64;

unsigned char* aligned(std::vector<unsigned char>& store, size_t bytes, size_t mis)
{
    store.assign(bytes + 64, 0xff);  // poisoned: NaN in every type
    uintptr_t p = (uintptr_t)store.data();
    p = (p + 15) & ~(uintptr_t)15;
    return (unsigned char*)p + mis;
}

unsigned chunksOf(i64 n) { return (unsigned)((n + CTM_CHUNK - 1) / CTM_CHUNK); }

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 9) {
        std::fprintf(stderr, "usage: emulate TYPE KERNEL ROWS N CF XMIS YMIS REPS\n");
        return 2;
    }
    const std::string type = argv[1], mode = argv[2];
    const i64 rows = std::atoll(argv[3]), n = std::atoll(argv[4]), cf = std::atoll(argv[5]);
    const i64 xmis = std::atoll(argv[6]), ymis = std::atoll(argv[7]), reps = std::atoll(argv[8]);
    const size_t es = type == "f32" ? 4 : 2;
    const i64 N = rows * n;
    std::vector<unsigned char> xs, ys;
    unsigned char* x = aligned(xs, N * es, xmis * es);
    unsigned char* y = aligned(ys, N * es, ymis * es);
    if (std::fread(x, es, N, stdin) != (size_t)N) {
        std::fprintf(stderr, "emulate: short input\n");
        return 2;
    }
    const i64 chunks = chunksOf(n), total = rows * chunks;
    // Look-back kernels: one block per chunk. Warp and direct kernels: a 2D
    // grid (chunk along x, row along y and z), as the host launches them;
    // maxY stands in for the device's 65535 so that z is exercised.
    ctm_dim3 grid{(unsigned)total, 1, 1};
    if (mode != "lookback") {
        const i64 maxY = 2, gy = std::min<i64>(rows, maxY);
        grid = ctm_dim3{(unsigned)chunks, (unsigned)gy, (unsigned)((rows + gy - 1) / gy)};
    }
    if (mode == "direct" || mode == "lookback" || mode == "warp") {
        std::vector<unsigned char> state(16 + 20 * total, 0);
        for (i64 rep = 1; rep <= reps; rep++) {
            std::memset(y, 0xff, N * es);
            const unsigned epoch = (unsigned)rep;
            auto* st = state.data();
            emuLaunch(grid, [&] {
                if (mode == "warp") {
                    if (type == "f32") ctm_warp_f32((float*)y, (const float*)x, n, cf, (float)(1.0 / (double)cf), chunks, total);
                    if (type == "f16") ctm_warp_f16((ctm_u16*)y, (const ctm_u16*)x, n, cf, (float)(1.0 / (double)cf), chunks, total);
                    if (type == "bf16") ctm_warp_bf16((ctm_u16*)y, (const ctm_u16*)x, n, cf, (float)(1.0 / (double)cf), chunks, total);
                } else if (mode == "direct") {
                    if (type == "f32") ctm_direct_f32((float*)y, (const float*)x, n, cf, (float)(1.0 / (double)cf), chunks, total);
                    if (type == "f16") ctm_direct_f16((ctm_u16*)y, (const ctm_u16*)x, n, cf, (float)(1.0 / (double)cf), chunks, total);
                    if (type == "bf16") ctm_direct_bf16((ctm_u16*)y, (const ctm_u16*)x, n, cf, (float)(1.0 / (double)cf), chunks, total);
                } else {
                    if (type == "f32") ctm_lookback_f32((float*)y, (const float*)x, n, cf, (float)(1.0 / (double)cf), chunks, total, st, epoch);
                    if (type == "f16") ctm_lookback_f16((ctm_u16*)y, (const ctm_u16*)x, n, cf, (float)(1.0 / (double)cf), chunks, total, st, epoch);
                    if (type == "bf16") ctm_lookback_bf16((ctm_u16*)y, (const ctm_u16*)x, n, cf, (float)(1.0 / (double)cf), chunks, total, st, epoch);
                }
            }, type == "f32" ? CTM_THREADS_F32 : CTM_THREADS_16);
            // Nothing may be written past the output.
            for (const unsigned char* q = y + N * es; q < ys.data() + ys.size(); q++) {
                if (*q != 0xff) {
                    std::fprintf(stderr, "emulate: byte %td past the output written\n", q - (y + N * es));
                    return 1;
                }
            }
            if (((unsigned*)st)[0] != 0) {
                std::fprintf(stderr, "emulate: ticket counter %u after the launch, want 0\n", ((unsigned*)st)[0]);
                return 1;
            }
        }
    } else {
        std::fprintf(stderr, "emulate: unknown kernel %s\n", mode.c_str());
        return 2;
    }
    if (std::fwrite(y, es, N, stdout) != (size_t)N) return 1;
    return 0;
}
