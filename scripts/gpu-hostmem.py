#!/usr/bin/env python3
"""gpu-hostmem.py measures, through the CUDA driver API (ctypes, no
PyTorch), what dspk's GPU start-up and end pay for outside its kernels:
the driver's initialisation and primary context, page-locked host
buffers made by cuMemHostAlloc against ordinary memory registered with
cuMemHostRegister (and what faulting it in costs beforehand), whether
pinning on one thread stalls copies on another, and what freeing or
leaving the buffers costs at exit (timed from outside, in a child).

Usage: scripts/gpu-hostmem.py [MB per buffer, default 46] [buffers, default 3]
       scripts/gpu-hostmem.py ctx      (context creation under settings that
                                        might change it, in fresh processes)
       scripts/gpu-hostmem.py hold S   (keep a context on the GPU for S
                                        seconds, as a long-lived process would)
"""
import ctypes, ctypes.util, mmap, os, subprocess, sys, threading, time

MODE = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].isdigit() else ""
MB = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 46
NB = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 3
SIZE = MB << 20


def load():
    for name in ("libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    raise SystemExit("no libcuda")


def ck(r, what):
    if r != 0:
        raise SystemExit(f"{what}: CUDA error {r}")


def now():
    return time.perf_counter()


def context(cu):
    t = {}
    t0 = now()
    ck(cu.cuInit(0), "cuInit")
    t["cuInit"] = now() - t0
    dev = ctypes.c_int()
    ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    t0 = now()
    ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain")
    t["primary_ctx_retain"] = now() - t0
    t0 = now()
    ck(cu.cuCtxSetCurrent(ctx), "setcurrent")
    st = ctypes.c_void_p()
    ck(cu.cuStreamCreate(ctypes.byref(st), 1), "stream")
    t["set_current+stream"] = now() - t0
    t0 = now()
    d = ctypes.c_uint64()
    ck(cu.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(SIZE)), "memalloc")
    t["first_cuMemAlloc"] = now() - t0
    return dev, ctx, st, d, t


def child(mode):
    """A process that opens the context, makes NB pinned buffers (mode
    'alloc': cuMemHostAlloc; 'free': the same, freed and the context
    released before exiting; 'none': no buffers), writes them once and
    prints when it is about to exit."""
    t0 = now()
    cu = load()
    tl = now() - t0
    dev, ctx, st, d, t = context(cu)
    bufs = []
    if mode in ("alloc", "free"):
        for _ in range(NB):
            p = ctypes.c_void_p()
            ck(cu.cuMemHostAlloc(ctypes.byref(p), ctypes.c_size_t(SIZE), 0), "hostalloc")
            ctypes.memset(p, 1, SIZE)
            bufs.append(p)
    if mode == "free":
        t1 = now()
        for p in bufs:
            ck(cu.cuMemFreeHost(p), "freehost")
        cu.cuMemFree_v2(d)
        cu.cuStreamDestroy_v2(st)
        cu.cuDevicePrimaryCtxRelease_v2(dev)
        t["free+release"] = now() - t1
    print("CHILD", mode, f"dlopen={tl:.3f}", " ".join(f"{k}={v:.3f}" for k, v in t.items()), flush=True)
    sys.stdout.flush()
    print("EXITING", repr(time.time()), flush=True)
    os._exit(0)


def ctx_variants():
    """Context creation in fresh processes (the 'none' child), three
    times under each setting."""
    for extra in ({}, {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}, {"CUDA_DEVICE_MAX_CONNECTIONS": "2"},
                  {"CUDA_DEVICE_MAX_CONNECTIONS": "4"}, {"CUDA_DEVICE_MAX_CONNECTIONS": "32"},
                  {"CUDA_MODULE_LOADING": "EAGER"}):
        for _ in range(3):
            env = dict(os.environ, **extra)
            t0 = time.time()
            r = subprocess.run([sys.executable, __file__, str(MB), str(NB), "child-none"], capture_output=True, text=True, env=env)
            info = [l for l in r.stdout.splitlines() if l.startswith("CHILD")]
            print(extra or "default", f"whole {time.time()-t0:.3f} s;", info[0] if info else r.stderr[-300:], flush=True)


def hold(seconds):
    cu = load()
    context(cu)
    print("holding the driver", flush=True)
    time.sleep(seconds)


def main():
    if len(sys.argv) > 3 and sys.argv[3].startswith("child-"):
        child(sys.argv[3][6:])
    if MODE == "ctx":
        ctx_variants()
        return
    if MODE == "hold":
        hold(float(sys.argv[2]))
        return
    out = []
    log = lambda *a: (print(*a, flush=True), out.append(" ".join(map(str, a))))
    t0 = now()
    cu = load()
    log(f"dlopen libcuda {now()-t0:.3f} s")
    dev, ctx, st, d, t = context(cu)
    log("context:", " ".join(f"{k} {v:.3f} s" for k, v in t.items()))
    # cuMemHostAlloc, NB buffers.
    hb = []
    for i in range(NB):
        p = ctypes.c_void_p()
        t0 = now()
        ck(cu.cuMemHostAlloc(ctypes.byref(p), ctypes.c_size_t(SIZE), 0), "hostalloc")
        ta = now() - t0
        t0 = now()
        ctypes.memset(p, 1, SIZE)
        tw = now() - t0
        hb.append(p)
        log(f"cuMemHostAlloc {MB} MB #{i}: {ta*1e3:.1f} ms, first write {tw*1e3:.1f} ms")
    # ordinary memory: fault in, then register
    rb = []
    for i in range(NB):
        t0 = now()
        m = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        ctypes.memset(addr, 1, SIZE)
        tf = now() - t0
        t0 = now()
        ck(cu.cuMemHostRegister_v2(ctypes.c_void_p(addr), ctypes.c_size_t(SIZE), 0), "register")
        tr = now() - t0
        rb.append((m, addr))
        log(f"mmap+fault {MB} MB #{i}: {tf*1e3:.1f} ms, then cuMemHostRegister {tr*1e3:.1f} ms")
    # registering memory never touched
    m2 = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    a2 = ctypes.addressof(ctypes.c_char.from_buffer(m2))
    t0 = now()
    ck(cu.cuMemHostRegister_v2(ctypes.c_void_p(a2), ctypes.c_size_t(SIZE), 0), "register untouched")
    log(f"cuMemHostRegister of untouched {MB} MB: {(now()-t0)*1e3:.1f} ms")
    t0 = now()
    ck(cu.cuMemHostUnregister(ctypes.c_void_p(a2)), "unregister")
    log(f"cuMemHostUnregister {MB} MB: {(now()-t0)*1e3:.1f} ms")
    # copy rates
    for name, src in (("hostalloc", hb[0].value), ("registered", rb[0][1])):
        ck(cu.cuMemcpyHtoD_v2(d, ctypes.c_void_p(src), ctypes.c_size_t(SIZE)), "copy")
        t0 = now()
        for _ in range(10):
            ck(cu.cuMemcpyHtoDAsync_v2(d, ctypes.c_void_p(src), ctypes.c_size_t(SIZE), st), "copy")
        ck(cu.cuStreamSynchronize(st), "sync")
        log(f"upload from {name}: {10*SIZE/(now()-t0)/1e9:.1f} GB/s")
    pg = (ctypes.c_char * SIZE)()
    t0 = now()
    for _ in range(3):
        ck(cu.cuMemcpyHtoD_v2(d, pg, ctypes.c_size_t(SIZE)), "copy pageable")
    log(f"upload from pageable: {3*SIZE/(now()-t0)/1e9:.1f} GB/s")
    # do copies stall while another thread pins?
    def copies(n, res):
        ts = []
        for _ in range(n):
            t0 = now()
            ck(cu.cuCtxSetCurrent(ctx), "cur")
            ck(cu.cuMemcpyHtoDAsync_v2(d, hb[0], ctypes.c_size_t(SIZE), st), "copy")
            ck(cu.cuStreamSynchronize(st), "sync")
            ts.append(now() - t0)
        res.extend(ts)
    base = []
    copies(20, base)
    res = []
    th = threading.Thread(target=copies, args=(40, res))
    extra = []
    th.start()
    t0 = now()
    for _ in range(NB):
        p = ctypes.c_void_p()
        ck(cu.cuCtxSetCurrent(ctx), "cur")
        ck(cu.cuMemHostAlloc(ctypes.byref(p), ctypes.c_size_t(SIZE), 0), "hostalloc")
        extra.append(p)
    tpin = now() - t0
    th.join()
    log(f"copies alone: median {sorted(base)[len(base)//2]*1e3:.2f} ms, max {max(base)*1e3:.2f}; "
        f"beside {NB} cuMemHostAlloc ({tpin*1e3:.1f} ms): median {sorted(res)[len(res)//2]*1e3:.2f}, max {max(res)*1e3:.2f} ms")
    # frees
    for p in hb + extra:
        t0 = now()
        ck(cu.cuMemFreeHost(p), "free")
        log(f"cuMemFreeHost {MB} MB: {(now()-t0)*1e3:.1f} ms")
    for m, a in rb:
        t0 = now()
        ck(cu.cuMemHostUnregister(ctypes.c_void_p(a)), "unregister")
        log(f"cuMemHostUnregister {MB} MB (touched): {(now()-t0)*1e3:.1f} ms")
    # exit costs, timed from outside
    for mode in ("none", "alloc", "free", "none", "alloc", "free"):
        t0 = time.time()
        r = subprocess.run([sys.executable, __file__, str(MB), str(NB), "child-" + mode], capture_output=True, text=True)
        t1 = time.time()
        ex = [l for l in r.stdout.splitlines() if l.startswith("EXITING")]
        info = [l for l in r.stdout.splitlines() if l.startswith("CHILD")]
        if ex:
            te = float(ex[0].split()[1])
            log(f"exit cost ({mode}): {(t1-te)*1e3:.1f} ms after its last line; whole {t1-t0:.3f} s; {info[0] if info else r.stderr[-300:]}")
        else:
            log(f"child {mode} failed: {r.stderr[-500:]}")


main()
