// nvrtc_check.cc compiles a CUDA source with whatever NVRTC the machine has
// (libnvrtc.so.13, .12 or .11.2, loaded at run time; no GPU needed), for
// ops' tests and for reading register counts without a device:
//
//     nvrtc_check SOURCE [NVRTC-OPTION...]
//
// e.g. nvrtc_check trailing_mean.cu --gpu-architecture=sm_90 -std=c++17
// -Xptxas=-v (the test writes ops.TrailingMeanCUDA, the include expanded,
// to a file first). It prints the NVRTC version and the
// compiler's log (with -Xptxas=-v: registers and spills per kernel) and
// exits 0 when the source compiles to a cubin, 1 when it does not, 3 when
// no NVRTC library is found. Build:
//
//     g++ -std=c++20 -O1 -o nvrtc_check nvrtc_check.cc -ldl

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

typedef int (*CreateFn)(void**, const char*, const char*, int, const char* const*, const char* const*);
typedef int (*CompileFn)(void*, int, const char* const*);
typedef int (*SizeFn)(void*, size_t*);
typedef int (*GetFn)(void*, char*);
typedef int (*VersionFn)(int*, int*);

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: nvrtc_check SOURCE [NVRTC-OPTION...]\n");
        return 2;
    }
    void* lib = nullptr;
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}) {
        if ((lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL))) break;
    }
    if (!lib) {
        std::fprintf(stderr, "nvrtc_check: no NVRTC library found\n");
        return 3;
    }
    auto sym = [&](const char* name) {
        void* p = dlsym(lib, name);
        if (!p) {
            std::fprintf(stderr, "nvrtc_check: %s not in the NVRTC library\n", name);
            std::exit(3);
        }
        return p;
    };
    auto version = (VersionFn)sym("nvrtcVersion");
    auto create = (CreateFn)sym("nvrtcCreateProgram");
    auto compile = (CompileFn)sym("nvrtcCompileProgram");
    auto logSize = (SizeFn)sym("nvrtcGetProgramLogSize");
    auto getLog = (GetFn)sym("nvrtcGetProgramLog");
    auto cubinSize = (SizeFn)sym("nvrtcGetCUBINSize");
    int major = 0, minor = 0;
    version(&major, &minor);
    std::printf("NVRTC %d.%d\n", major, minor);

    std::FILE* f = std::fopen(argv[1], "rb");
    if (!f) {
        std::fprintf(stderr, "nvrtc_check: cannot open %s\n", argv[1]);
        return 2;
    }
    std::string src;
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) src.append(buf, n);
    std::fclose(f);

    void* prog = nullptr;
    if (int rc = create(&prog, src.c_str(), argv[1], 0, nullptr, nullptr); rc != 0) {
        std::fprintf(stderr, "nvrtc_check: nvrtcCreateProgram: error %d\n", rc);
        return 1;
    }
    const int rc = compile(prog, argc - 2, argv + 2);
    size_t n = 0;
    logSize(prog, &n);
    std::vector<char> log(n + 1, 0);
    getLog(prog, log.data());
    std::fputs(log.data(), stdout);
    if (rc != 0) {
        std::fprintf(stderr, "nvrtc_check: compilation failed (error %d)\n", rc);
        return 1;
    }
    size_t cubin = 0;
    if (cubinSize(prog, &cubin) != 0 || cubin == 0) {
        std::fprintf(stderr, "nvrtc_check: no cubin (give a real architecture, --gpu-architecture=sm_XX)\n");
        return 1;
    }
    std::printf("cubin %zu bytes\n", cubin);
    return 0;
}
