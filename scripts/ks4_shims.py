"""ks4_shims.py: stand-ins for modules Kilosort4 imports and the GPU machine lacks.

Part of scripts/ks4_peer.py (see its docstring, "Shims"): for each of numba,
faiss, tqdm, psutil and matplotlib that fails to import, install_shims
registers a small module of our own in sys.modules before Kilosort4 is
imported. They only change speed (numba) or nothing (tqdm, psutil, plots);
faiss's IndexFlatL2 is exact search either way. Standard library only at
import time (torch and numpy are imported where a shim needs them).
"""

import importlib
import os
import sys
import time
import types
from collections import namedtuple

def _module(name, doc, **attrs):
    m = types.ModuleType(name, doc)
    m.__dict__.update(attrs)
    m.__ks4_peer_shim__ = True
    return m


def make_numba_shim():
    """numba: njit/jit run the function as plain Python, prange is range.

    The function is wrapped only to add up its calls and seconds
    (numba.shim_stats), so that the time the missing compiler costs is known.
    """
    stats = {}

    def plain(f):
        st = stats.setdefault(getattr(f, "__qualname__", repr(f)), {"calls": 0, "seconds": 0.0})

        def run(*a, **k):
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                st["calls"] += 1
                st["seconds"] += time.perf_counter() - t

        run.__name__ = getattr(f, "__name__", "jitted")
        run.__qualname__ = getattr(f, "__qualname__", run.__name__)
        run.__doc__ = getattr(f, "__doc__", None)
        run.__wrapped__ = f
        run.py_func = f  # as numba's dispatchers have
        return run

    def njit(*args, **kwargs):
        # @njit  -> njit(f);  @njit() / @njit("sig") / @njit(cache=True) -> decorator
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], str):
            return plain(args[0])
        return plain

    # numba.types names that map onto numpy's scalar types, resolved lazily
    # so that the shim itself needs no numpy.
    numpy_names = {"bool_": "bool_", "boolean": "bool_", "int8": "int8", "int16": "int16",
                   "int32": "int32", "int64": "int64", "uint8": "uint8", "uint16": "uint16",
                   "uint32": "uint32", "uint64": "uint64", "float32": "float32",
                   "float64": "float64", "complex64": "complex64", "complex128": "complex128"}

    def types_getattr(name):
        if name in numpy_names:
            import numpy
            return getattr(numpy, numpy_names[name])
        raise AttributeError("numba shim: numba.types has no %r" % name)

    ntypes = _module("numba.types", "numba.types shim: numpy scalar types")
    ntypes.__getattr__ = types_getattr
    numba = _module("numba", "numba shim (ks4_peer): no compilation",
                    njit=njit, jit=njit, generated_jit=njit, prange=range, types=ntypes,
                    __version__="0+ks4peer.shim", shim_stats=stats)
    numba.__path__ = []
    return {"numba": numba, "numba.types": ntypes}


def make_tqdm_shim():
    """tqdm: a silent wrapper with tqdm's attributes and methods."""

    class tqdm(object):
        def __init__(self, iterable=None, desc=None, total=None, *args, **kwargs):
            self.iterable = iterable
            if total is None and iterable is not None:
                try:
                    total = len(iterable)
                except (TypeError, AttributeError):
                    total = None
            self.total = total
            self.desc = desc or ""
            self.n = kwargs.get("initial", 0) or 0
            self.disable = bool(kwargs.get("disable", False))
            self.postfix = None
            self.start_t = time.time()
            self.last_print_n = self.n

        def __iter__(self):
            if self.iterable is None:
                return
            for x in self.iterable:
                yield x
                self.n += 1

        def __len__(self):
            if self.total is not None:
                return int(self.total)
            return len(self.iterable)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()
            return False

        def __bool__(self):
            return True

        def update(self, n=1):
            self.n += n
            return True

        def close(self):
            pass

        def clear(self, *a, **k):
            pass

        def refresh(self, *a, **k):
            pass

        def unpause(self):
            pass

        def display(self, *a, **k):
            pass

        def reset(self, total=None):
            self.n = 0
            if total is not None:
                self.total = total
            self.start_t = time.time()

        def set_description(self, desc=None, refresh=True):
            self.desc = desc or ""

        set_description_str = set_description

        def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
            d = dict(ordered_dict or {})
            d.update(kwargs)
            self.postfix = ", ".join("%s=%s" % kv for kv in d.items())

        def set_postfix_str(self, s="", refresh=True):
            self.postfix = s

        @property
        def format_dict(self):
            return {"n": self.n, "total": self.total, "elapsed": time.time() - self.start_t,
                    "prefix": self.desc, "postfix": self.postfix, "unit": "it",
                    "rate": None, "initial": 0}

        @classmethod
        def write(cls, s, file=None, end="\n", nolock=False):
            (file or sys.stderr).write(str(s) + end)

    def trange(*args, **kwargs):
        return tqdm(range(*args), **kwargs)

    mods = {}
    top = _module("tqdm", "tqdm shim (ks4_peer): silent", tqdm=tqdm, trange=trange,
                  __version__="0+ks4peer.shim")
    top.__path__ = []
    mods["tqdm"] = top
    for sub in ("std", "auto", "autonotebook"):
        m = _module("tqdm." + sub, "tqdm shim", tqdm=tqdm, trange=trange)
        setattr(top, sub, m)
        mods["tqdm." + sub] = m
    return mods


def make_psutil_shim():
    """psutil: the calls KS4's utils make (cpu_percent, virtual_memory), from /proc."""
    svmem = namedtuple("svmem", "total available percent used free")
    pmem = namedtuple("pmem", "rss vms")
    state = {"cpu": None}

    def _cpu_times():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + (v[4] if len(v) > 4 else 0)
        return idle, sum(v[:8])

    def cpu_percent(interval=None, percpu=False):
        # As psutil: utilisation since the previous call (0.0 on the first).
        try:
            if interval:
                a = _cpu_times()
                time.sleep(interval)
            else:
                a = state["cpu"]
            b = _cpu_times()
            state["cpu"] = b
        except OSError:
            return 0.0
        if a is None or b[1] <= a[1]:
            return 0.0
        return round(100.0 * (1.0 - (b[0] - a[0]) / float(b[1] - a[1])), 1)

    def virtual_memory():
        info = {}
        try:
            with open("/proc/meminfo") as f:
                for line in f:
                    k, v = line.split(":", 1)
                    info[k] = int(v.split()[0]) * 1024
        except OSError:
            pass
        total = info.get("MemTotal", 0)
        free = info.get("MemFree", 0)
        avail = info.get("MemAvailable", free)
        used = max(total - free - info.get("Buffers", 0) - info.get("Cached", 0), 0)
        pct = round(100.0 * (total - avail) / total, 1) if total else 0.0
        return svmem(total, avail, pct, used, free)

    class Process(object):
        def __init__(self, pid=None):
            self.pid = os.getpid() if pid is None else pid

        def memory_info(self):
            page = os.sysconf("SC_PAGE_SIZE")
            with open("/proc/%d/statm" % self.pid) as f:
                vms, rss = (int(x) for x in f.read().split()[:2])
            return pmem(rss * page, vms * page)

        def num_threads(self):
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("Threads:"):
                        return int(line.split()[1])
            return 0

    def cpu_count(logical=True):
        return os.cpu_count()

    m = _module("psutil", "psutil shim (ks4_peer): /proc", cpu_percent=cpu_percent,
                virtual_memory=virtual_memory, Process=Process, cpu_count=cpu_count,
                __version__="0+ks4peer.shim")
    return {"psutil": m}


def make_faiss_shim():
    """faiss: IndexFlatL2, exact brute-force squared-L2 k-NN with torch.

    Queries are processed in chunks so that the distance block stays under
    KS4_PEER_FAISS_BYTES (default 1 GiB); the device is CUDA when available
    (KS4_PEER_FAISS_DEVICE overrides). TF32 is off during the matmul, so
    distances are full float32, as faiss's CPU search computes them.
    """
    stats = {"calls": 0, "queries": 0, "seconds": 0.0}

    class IndexFlatL2(object):
        def __init__(self, d):
            self.d = int(d)
            self.is_trained = True
            self._xb = None
            self._dev = None

        @property
        def ntotal(self):
            return 0 if self._xb is None else int(self._xb.shape[0])

        def _as_tensor(self, x):
            import numpy as np
            import torch
            if isinstance(x, torch.Tensor):
                t = x.detach().to(torch.float32)
            else:
                t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
            if t.dim() != 2 or t.shape[1] != self.d:
                raise ValueError("faiss shim: want an (n, %d) array, got %s" % (self.d, tuple(t.shape)))
            return t

        def _device(self):
            import torch
            if self._dev is None:
                name = os.environ.get("KS4_PEER_FAISS_DEVICE") or (
                    "cuda" if torch.cuda.is_available() else "cpu")
                self._dev = torch.device(name)
            return self._dev

        def add(self, x):
            import torch
            t = self._as_tensor(x).to(self._device())
            self._xb = t if self._xb is None else torch.cat([self._xb, t], 0)

        def reset(self):
            self._xb = None

        def search(self, q, k):
            import numpy as np
            import torch
            t0 = time.perf_counter()
            qt = self._as_tensor(q)
            nq, k = int(qt.shape[0]), int(k)
            D = np.full((nq, k), np.finfo(np.float32).max, dtype=np.float32)
            I = np.full((nq, k), -1, dtype=np.int64)
            nb = self.ntotal
            kk = min(k, nb)
            if nq == 0 or kk == 0:
                return D, I
            dev = self._device()
            budget = int(os.environ.get("KS4_PEER_FAISS_BYTES", str(1 << 30)))
            # distance block, its topk workspace and the query chunk, float32
            rows = max(1, min(nq, budget // (4 * (2 * nb + self.d))))
            xb = self._xb
            xb_sq = (xb * xb).sum(1)
            tf32 = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = False
            try:
                for i in range(0, nq, rows):
                    qc = qt[i:i + rows].to(dev, non_blocking=True)
                    d = (qc * qc).sum(1, keepdim=True) - 2.0 * (qc @ xb.T) + xb_sq[None, :]
                    vals, idx = torch.topk(d, kk, dim=1, largest=False, sorted=True)
                    vals.clamp_(min=0.0)  # rounding can leave -0.0001 for a duplicate
                    D[i:i + rows, :kk] = vals.cpu().numpy()
                    I[i:i + rows, :kk] = idx.cpu().numpy()
                    del d, vals, idx, qc
            finally:
                torch.backends.cuda.matmul.allow_tf32 = tf32
            stats["calls"] += 1
            stats["queries"] += nq
            stats["seconds"] += time.perf_counter() - t0
            return D, I

    m = _module("faiss", "faiss shim (ks4_peer): exact L2 search with torch",
                IndexFlatL2=IndexFlatL2, __version__="0+ks4peer.shim", shim_stats=stats)
    return {"faiss": m}


class _Dummy(object):
    """Stands for any matplotlib object: attributes, calls and items are dummies."""

    def __init__(self, name="matplotlib"):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Dummy(self._name + "." + name)

    def __setattr__(self, name, value):
        pass

    def __call__(self, *args, **kwargs):
        return _Dummy(self._name + "()")

    def __getitem__(self, key):
        return _Dummy(self._name + "[]")

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter(())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return "<matplotlib shim %s>" % self._name


def make_matplotlib_shim():
    """matplotlib: modules whose every attribute is a permissive dummy."""

    def dummy_module(name):
        m = _module(name, "matplotlib shim (ks4_peer): no-ops")
        m.__path__ = []

        def getattr_(attr, _name=name):
            if attr.startswith("__") and attr.endswith("__"):
                raise AttributeError(attr)
            return _Dummy(_name + "." + attr)

        m.__getattr__ = getattr_
        return m

    mods = {}
    names = ["matplotlib", "matplotlib.pyplot", "matplotlib.colors", "matplotlib.cm",
             "matplotlib.figure", "matplotlib.gridspec", "matplotlib.ticker",
             "matplotlib.patches", "matplotlib.collections", "matplotlib.lines",
             "matplotlib.style", "matplotlib.backends", "matplotlib.backends.backend_agg"]
    for n in names:
        mods[n] = dummy_module(n)
    for n in names:
        if "." in n:
            parent, child = n.rsplit(".", 1)
            setattr(mods[parent], child, mods[n])
    mods["matplotlib"].__version__ = "0+ks4peer.shim"
    mods["matplotlib"].use = lambda *a, **k: None
    # fig, ax = plt.subplots(...) must unpack into two objects
    mods["matplotlib.pyplot"].subplots = lambda *a, **k: (_Dummy("figure"), _Dummy("axes"))
    return mods


SHIMS = {
    "numba": make_numba_shim,
    "faiss": make_faiss_shim,
    "tqdm": make_tqdm_shim,
    "psutil": make_psutil_shim,
    "matplotlib": make_matplotlib_shim,
}


def install_shims(names=None, force=False):
    """For each module in names that does not import, register our shim.

    Returns the list of shimmed names. force=True shims without trying
    (the self-test uses it).
    """
    used = []
    for name in names or list(SHIMS):
        if not force:
            try:
                importlib.import_module(name)
                continue
            except Exception as e:  # ImportError, or a broken install
                print("ks4_peer: import %s failed (%s: %s); using the shim"
                      % (name, type(e).__name__, e), file=sys.stderr)
        for k in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[k]
        sys.modules.update(SHIMS[name]())
        used.append(name)
    return used


