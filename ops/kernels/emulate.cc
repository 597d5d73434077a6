// emulate.cc runs the kernels of trailing_mean.cu on the CPU (see
// emulate.h) for ops' tests:
//
//     emulate TYPE MODE ROWS N CF XMIS YMIS REPS < input > output
//
// TYPE is f32, f16 or bf16; MODE is direct, warp, lookback or eager; input and
// output are ROWS*N elements in the storage type's bits, little-endian. The
// input is placed XMIS elements and the output YMIS elements past a 16-byte
// boundary, to exercise the unaligned paths. The fused pass runs REPS times
// (epochs 1, 2, …, so look-back state left by one launch is reused by the
// next) and the last output is written. Build:
//
//     g++ -std=c++20 -O1 -o emulate emulate.cc
//
// (-DCTM_GROUP_F32=G and -DCTM_GROUP_16=G select other chunk groupings,
// -DCTM_ITEMS_F32=N and -DCTM_ITEMS_16=N other samples per thread,
// -DCTM_PERSIST=1 persistent direct kernels on at most 3 blocks.)

#include "emulate.h"

#include "trailing_mean.cu"

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

ctm_dim3 grid1(i64 blocks) { return ctm_dim3{(unsigned)blocks, 1, 1}; }

// Grid of the element-wise kernels: at most 4 blocks per row, rows along y.
ctm_dim3 grid2(i64 rows, i64 n)
{
    const i64 bx = std::min<i64>((n + kThreads - 1) / kThreads, 4);
    return ctm_dim3{(unsigned)bx, (unsigned)std::min<i64>(rows, 65535), 1};
}

ctm_dim3 gridN(i64 N) { return ctm_dim3{(unsigned)std::min<i64>((N + kThreads - 1) / kThreads, 64), 1, 1}; }

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 9) {
        std::fprintf(stderr, "usage: emulate TYPE MODE ROWS N CF XMIS YMIS REPS\n");
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
    // Direct kernels take CTM_GROUP_* chunks per block, look-back kernels one.
    const i64 group = mode == "lookback" || mode == "warp" ? 1 : type == "f32" ? CTM_GROUP_F32 : CTM_GROUP_16;
    i64 blocks = (total + group - 1) / group;
    // Persistent direct kernels: fewer blocks than groups, so that each
    // block takes several.
    if (CTM_PERSIST && mode == "direct") blocks = std::min<i64>(blocks, 3);
    // Direct kernels of one chunk per block, not persistent: a 2D grid
    // (chunk along x, row along y and z), as the host launches them; maxY
    // stands in for the device's 65535 so that z is exercised.
    ctm_dim3 grid = grid1(blocks);
    if ((!CTM_PERSIST && mode == "direct" && group == 1) || mode == "warp") {
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
            }, mode == "warp" ? (type == "f32" ? CTM_WARP_THREADS_F32 : CTM_WARP_THREADS_16)
                              : (type == "f32" ? CTM_THREADS_F32 : CTM_THREADS_16));
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
    } else if (mode == "eager") {
        std::vector<float> a16(type == "f32" ? 0 : N), c(N), p(N), w(N), m16(type == "f32" ? 0 : N), count(n);
        const float* a = (const float*)x;
        if (type != "f32") {
            emuLaunch(gridN(N), [&] {
                if (type == "f16") ctm_eager_widen_f16(a16.data(), (const ctm_u16*)x, N);
                if (type == "bf16") ctm_eager_widen_bf16(a16.data(), (const ctm_u16*)x, N);
            });
            a = a16.data();
        }
        emuLaunch(ctm_dim3{(unsigned)rows, 1, 1}, [&] { ctm_eager_cumsum(c.data(), a, n); });
        emuLaunch(grid2(rows, n), [&] { ctm_eager_pad(p.data(), c.data(), rows, n, cf); });
        emuLaunch(gridN(N), [&] { ctm_eager_sub(w.data(), c.data(), p.data(), N); });
        emuLaunch(gridN(n), [&] { ctm_eager_count(count.data(), n, cf); });
        float* m = type == "f32" ? (float*)y : m16.data();
        emuLaunch(grid2(rows, n), [&] { ctm_eager_div(m, w.data(), count.data(), rows, n); });
        if (type != "f32") {
            emuLaunch(gridN(N), [&] {
                if (type == "f16") ctm_eager_narrow_f16((ctm_u16*)y, m, N);
                if (type == "bf16") ctm_eager_narrow_bf16((ctm_u16*)y, m, N);
            });
        }
    } else if (mode == "fill") {
        emuLaunch(gridN(N), [&] {
            if (type == "f32") ctm_fill_f32((float*)y, N, (ctm_u64)cf, 1000.0f, 1.0f);
            if (type == "f16") ctm_fill_f16((ctm_u16*)y, N, (ctm_u64)cf, 1000.0f, 1.0f);
            if (type == "bf16") ctm_fill_bf16((ctm_u16*)y, N, (ctm_u64)cf, 1000.0f, 1.0f);
        });
    } else {
        std::fprintf(stderr, "emulate: unknown mode %s\n", mode.c_str());
        return 2;
    }
    if (std::fwrite(y, es, N, stdout) != (size_t)N) return 1;
    return 0;
}
