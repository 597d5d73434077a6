#!/usr/bin/env python3
"""ks4_peer.py: run Kilosort4 as a peer on one of dspk's simulated recordings.

Purpose
    Benchmark driver for comparing dspk with Kilosort4 (KS4) on the same
    recording: it sorts a SpikeGLX .bin/.meta pair written by
    `dspk simulate` with KS4's default settings on a GPU, and writes
    OUT/ks4_peer.json with the wall time of the KS4 call, KS4's own phase
    times (ops['runtime_*']), device peak memory, host peak RSS, the shims
    used and the versions. KS4's results (spike_times.npy,
    spike_clusters.npy, cluster_KSLabel.tsv, ...) go to OUT, where
    `dspk compare -units -truth SIMDIR/truth OUT` scores them. Normally run
    through scripts/ks4-peer, which also times the whole process and scores.

Kilosort is not part of dspk
    Kilosort4 (MouseLand/Kilosort) is GPL-3.0. It is run here as a separate
    peer program only; none of its code is in this file or in dspk. On the
    GPU machine its package is copied, from the mirror, into the git-ignored
    folder .ks4/ at the repository root (never committed):
        mkdir -p .ks4 && git -C /work/.mirror/MouseLand+Kilosort/repo \
            archive HEAD kilosort | tar -x -C .ks4
    and .ks4 is put first on sys.path. Pass the mirror's commit in
    KS4_COMMIT (or write it to .ks4/COMMIT) so the JSON records it.

Usage
    python3 scripts/ks4_peer.py --bin SIMDIR/sim_g0_t0.imec0.ap.bin --out OUT
        [--meta FILE] [--ks4-dir DIR] [--device cuda] [--plots]
        [--set KEY=VALUE ...]
    python3 scripts/ks4_peer.py --selftest [--meta FILE]
        standard library only: checks the geometry parser and the shims.
    python3 scripts/ks4_peer.py --add-outer OUT/ks4_peer.json WALL_S [TIMEFILE]
        (used by scripts/ks4-peer) adds the outside wall time and the
        `/usr/bin/time -v` report to the JSON.

Shims
    The GPU machine may lack numba, faiss, tqdm, psutil and matplotlib,
    which KS4 imports, and has no pip. For each one that fails to import, a
    small stand-in of our own is registered in sys.modules before KS4 is
    imported (the JSON lists them):
      numba       njit/jit return the plain Python function (speed only:
                  KS4's jitted helpers, the CCGs and the duplicate-spike
                  removal, then run as ordinary Python; results unchanged);
      faiss       IndexFlatL2 is exact brute-force L2 search with torch on
                  the GPU, as faiss's IndexFlatL2 is exact (only the order
                  of exact ties may differ);
      tqdm        silent progress wrapper (changes nothing);
      psutil      cpu_percent/virtual_memory/Process from /proc (KS4 only
                  logs them; changes nothing);
      matplotlib  permissive dummy modules so that kilosort.plots imports;
                  plots are then always skipped.
    Besides, KS4's four diagnostic PNGs are skipped by default (their
    functions in kilosort.plots are replaced by no-ops; --plots keeps them
    when the real matplotlib is present): they are reporting, not sorting.
    If `ps` is missing, KS4's debug-only thread-count log reads /proc.
    The shims are in scripts/ks4_shims.py.
"""

import argparse
import importlib
import json
import os
import re
import resource
import shutil
import sys
import threading
import time
import traceback
import types

_T_START = time.perf_counter()

# ---------------------------------------------------------------------------
# SpikeGLX meta and geometry (standard library only)
# ---------------------------------------------------------------------------


def read_meta(path):
    """Read a SpikeGLX .meta file into a dict; a leading '~' of a key is dropped."""
    meta = {}
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line or "=" not in line:
                continue
            k, v = line.split("=", 1)
            meta[k.strip().lstrip("~")] = v.strip()
    return meta


_ENTRY = re.compile(r"\(([^()]*)\)")


def parse_geom_map(value):
    """Parse a ~snsGeomMap value.

    Format: (partNumber,nShanks,shankPitch,shankWidth) then one
    (shank:x:z:used) per saved neural channel in file order, x and z in µm.
    Returns (header: dict, entries: list of (shank, x, z, used)).
    """
    raw = _ENTRY.findall(value)
    if len(raw) < 2:
        raise ValueError("snsGeomMap: want a header and at least one entry, got %d groups" % len(raw))
    hdr = [s.strip() for s in raw[0].split(",")]
    if len(hdr) != 4:
        raise ValueError("snsGeomMap: header (%s): want (partNumber,nShanks,shankPitch,shankWidth)" % raw[0])
    try:
        header = {"part": hdr[0], "n_shanks": int(hdr[1]), "shank_pitch": float(hdr[2]),
                  "shank_width": float(hdr[3])}
    except ValueError:
        raise ValueError("snsGeomMap: header (%s): bad numbers" % raw[0])
    if header["n_shanks"] <= 0:
        raise ValueError("snsGeomMap: header (%s): no shanks" % raw[0])
    entries = []
    for i, e in enumerate(raw[1:]):
        f = [s.strip() for s in e.split(":")]
        if len(f) != 4:
            raise ValueError("snsGeomMap: entry %d (%s): want shank:x:z:used" % (i, e))
        try:
            shank, x, z, used = int(f[0]), float(f[1]), float(f[2]), int(f[3])
        except ValueError:
            raise ValueError("snsGeomMap: entry %d (%s): bad number" % (i, e))
        if not 0 <= shank < header["n_shanks"]:
            raise ValueError("snsGeomMap: entry %d: shank %d of %d" % (i, shank, header["n_shanks"]))
        entries.append((shank, x, z, used))
    return header, entries


def probe_from_meta(meta):
    """Site geometry from a meta dict, in plain lists (no numpy).

    As dspk reads it: each used entry i of ~snsGeomMap is the site in file
    row i, at x = shank*shankPitch + x, y = z; unused entries (used == 0)
    and rows beyond the table (the sync channel) are left out.
    Returns dict(chan_map, x, y, shank, n_chan, n_chan_bin, fs, header).
    """
    for key in ("nSavedChans", "imSampRate", "snsGeomMap"):
        if key not in meta:
            raise ValueError("meta has no %s (ks4_peer reads dspk's simulated SpikeGLX metas)" % key)
    n_chan_bin = int(meta["nSavedChans"])
    fs = float(meta["imSampRate"])
    header, entries = parse_geom_map(meta["snsGeomMap"])
    if len(entries) > n_chan_bin:
        raise ValueError("snsGeomMap has %d entries for %d saved channels" % (len(entries), n_chan_bin))
    if "snsApLfSy" in meta:
        ap, lf, _sy = (int(s) for s in meta["snsApLfSy"].split(","))
        if len(entries) != ap + lf:
            raise ValueError("snsGeomMap has %d entries but snsApLfSy=%s names %d neural channels"
                             % (len(entries), meta["snsApLfSy"], ap + lf))
    p = {"chan_map": [], "x": [], "y": [], "shank": [], "n_chan_bin": n_chan_bin,
         "fs": fs, "header": header}
    for row, (shank, x, z, used) in enumerate(entries):
        if used == 0:
            continue
        p["chan_map"].append(row)
        p["x"].append(shank * header["shank_pitch"] + x)
        p["y"].append(z)
        p["shank"].append(shank)
    if not p["chan_map"]:
        raise ValueError("snsGeomMap marks no site as used")
    p["n_chan"] = len(p["chan_map"])
    return p


def ks4_probe(p):
    """Kilosort4's probe dict (the keys and dtypes of kilosort.io.load_probe)."""
    import numpy as np
    return {
        "chanMap": np.asarray(p["chan_map"], dtype=np.int32),
        "xc": np.asarray(p["x"], dtype=np.float32),
        "yc": np.asarray(p["y"], dtype=np.float32),
        "kcoords": np.asarray(p["shank"], dtype=np.float32),
        "n_chan": int(p["n_chan"]),
    }


# Shims (numba, faiss, tqdm, psutil, matplotlib) live in ks4_shims.py, beside this file.
from ks4_shims import SHIMS, install_shims  # noqa: E402


# ---------------------------------------------------------------------------
# Measurement helpers
# ---------------------------------------------------------------------------


class DevicePeaks(object):
    """Whole-run device peaks despite KS4 resetting torch's peak statistics.

    KS4 calls torch.cuda.reset_peak_memory_stats() after each phase; the
    wrapper folds the peaks so far into a running maximum first. A thread
    also polls cudaMemGetInfo (device memory in use by everything, CUDA
    context included: what nvidia-smi shows).
    """

    def __init__(self, torch, device, poll_s=0.05):
        self.torch = torch
        self.device = device
        self.alloc = 0
        self.reserved = 0
        self.resets = 0
        self.used_max = 0
        self.used_base = None
        self._orig_reset = torch.cuda.reset_peak_memory_stats
        self._stop = threading.Event()
        self._poll_s = poll_s
        self._thread = None

        def reset(device=None, _self=self):
            _self.fold()
            _self.resets += 1
            return _self._orig_reset(device)

        torch.cuda.reset_peak_memory_stats = reset

    def fold(self):
        c = self.torch.cuda
        self.alloc = max(self.alloc, c.max_memory_allocated(self.device))
        self.reserved = max(self.reserved, c.max_memory_reserved(self.device))

    def _used(self):
        free, total = self.torch.cuda.mem_get_info(self.device)
        return total - free

    def start(self):
        self._orig_reset(self.device)
        self.used_base = self._used()
        self.used_max = self.used_base

        def loop():
            while not self._stop.wait(self._poll_s):
                try:
                    self.used_max = max(self.used_max, self._used())
                except Exception:
                    return

        self._thread = threading.Thread(target=loop, name="ks4-peer-mem", daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            self.used_max = max(self.used_max, self._used())
        except Exception:
            pass
        self.fold()
        self.torch.cuda.reset_peak_memory_stats = self._orig_reset


def max_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def jsonable(x, depth=0):
    """Plain-JSON copy of x: numpy scalars to numbers, small arrays to lists,
    NaN/inf to None, tensors and other objects to a short description."""
    if depth > 8:
        return str(x)
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        return x if x == x and x not in (float("inf"), float("-inf")) else None
    if isinstance(x, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v, depth + 1) for v in x]
    tname = type(x).__module__ + "." + type(x).__name__
    if tname.startswith("numpy.") and hasattr(x, "item") and getattr(x, "ndim", 1) == 0:
        return jsonable(x.item(), depth + 1)
    if tname == "numpy.ndarray":
        return jsonable(x.tolist(), depth + 1) if x.size <= 64 else "ndarray%s" % (x.shape,)
    if tname.startswith("torch."):
        return "tensor%s" % (tuple(getattr(x, "shape", ())),)
    return str(x)


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(jsonable(obj), f, indent=2, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------


def parse_set(items):
    out = {}
    for s in items or []:
        if "=" not in s:
            raise SystemExit("ks4_peer: --set wants KEY=VALUE, got %r" % s)
        k, v = s.split("=", 1)
        try:
            out[k.strip()] = json.loads(v)
        except ValueError:
            out[k.strip()] = v
    return out


def version_of(name):
    m = sys.modules.get(name)
    if m is None:
        return None
    if getattr(m, "__ks4_peer_shim__", False):
        return "shim"
    return getattr(m, "__version__", "unknown")


def run(args):
    rep = {"tool": "ks4-peer", "status": "failed", "argv": sys.argv[1:],
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    jpath = os.path.join(out, "ks4_peer.json")
    try:
        _run(args, out, rep)
        rep["status"] = "ok"
        return 0
    except BaseException as e:
        rep["error"] = "%s: %s" % (type(e).__name__, e)
        rep["traceback"] = traceback.format_exc()
        raise
    finally:
        rep["host_max_rss_bytes"] = max_rss_bytes()
        write_json(jpath, rep)
        print("ks4_peer: wrote %s (status %s)" % (jpath, rep["status"]), file=sys.stderr)


def _run(args, out, rep):
    binp = os.path.abspath(args.bin)
    meta_path = os.path.abspath(args.meta or re.sub(r"\.bin$", "", binp) + ".meta")
    if not os.path.isfile(binp):
        raise SystemExit("ks4_peer: no recording %s" % binp)
    if not os.path.isfile(meta_path):
        raise SystemExit("ks4_peer: no meta %s" % meta_path)
    p = probe_from_meta(read_meta(meta_path))
    nbytes = os.path.getsize(binp)
    n_samples = nbytes // (2 * p["n_chan_bin"])
    rep["recording"] = {"bin": binp, "meta": meta_path, "bytes": nbytes,
                        "n_chan_bin": p["n_chan_bin"], "fs": p["fs"], "n_samples": n_samples,
                        "duration_s": n_samples / p["fs"]}
    rep["probe"] = {"source": "snsGeomMap", "header": p["header"], "n_chan": p["n_chan"],
                    "n_shanks": len(set(p["shank"])), "first_rows": p["chan_map"][:4],
                    "last_row": p["chan_map"][-1]}

    # Kilosort's copy, first on sys.path.
    ks4_dir = os.path.abspath(args.ks4_dir)
    if not os.path.isfile(os.path.join(ks4_dir, "kilosort", "run_kilosort.py")):
        raise SystemExit(
            "ks4_peer: no Kilosort source in %s/kilosort; copy it there:\n"
            "  mkdir -p .ks4 && git -C /work/.mirror/MouseLand+Kilosort/repo archive HEAD kilosort | tar -x -C .ks4"
            % ks4_dir)
    sys.path.insert(0, ks4_dir)
    commit = os.environ.get("KS4_COMMIT", "").strip()
    if not commit and os.path.isfile(os.path.join(ks4_dir, "COMMIT")):
        with open(os.path.join(ks4_dir, "COMMIT")) as f:
            commit = f.read().strip()

    # Modules KS4 needs that have no shim.
    for name in ("numpy", "scipy", "sklearn", "torch"):
        try:
            importlib.import_module(name)
        except Exception as e:
            raise SystemExit("ks4_peer: Kilosort4 needs %s, which does not import: %s" % (name, e))
    import numpy as np
    import torch

    os.environ.setdefault("MPLBACKEND", "Agg")
    shims = install_shims()
    print("ks4_peer: shims used: %s" % (", ".join(shims) or "none"), file=sys.stderr)
    rep["shims"] = shims
    rep["shims_note"] = ("shims only change speed (numba: jitted helpers run as plain Python) or "
                         "nothing (tqdm, psutil, matplotlib); faiss's IndexFlatL2 is exact search either way")

    import kilosort
    import kilosort.plots
    # kilosort/__init__ binds the name run_kilosort to the function, so take
    # the module from sys.modules.
    rk = sys.modules["kilosort.run_kilosort"]
    kplots = sys.modules["kilosort.plots"]
    kfile = os.path.abspath(kilosort.__file__)
    if not kfile.startswith(ks4_dir + os.sep):
        raise SystemExit("ks4_peer: imported kilosort from %s, not from %s" % (kfile, ks4_dir))
    # Not installed, so importlib.metadata gives no version and KS4 logs
    # kilosort.__version__: name the source instead.
    kilosort.__version__ = ("git " + commit) if commit else "source copy (commit unknown)"

    if shutil.which("ps") is None:
        def log_thread_count(log=None):
            n = "?"
            try:
                with open("/proc/self/status") as f:
                    n = next(l.split()[1] for l in f if l.startswith("Threads:"))
            except Exception:
                pass
            (log or rk.logger).debug("Process thread count: %s" % n)
        rk.log_thread_count = log_thread_count
        rep["shims"].append("ps")

    skip_plots = (not args.plots) or ("matplotlib" in shims)
    if skip_plots:
        for name in dir(kplots):
            if name.startswith("plot_") and callable(getattr(kplots, name)):
                setattr(kplots, name, lambda *a, **k: None)
    rep["plots"] = "skipped" if skip_plots else "made"

    rep["versions"] = {
        "python": sys.version.split()[0], "numpy": np.__version__, "torch": torch.__version__,
        "torch_cuda": torch.version.cuda, "scipy": version_of("scipy"),
        "sklearn": version_of("sklearn"), "kilosort": kilosort.__version__,
        "kilosort_commit": commit or None, "kilosort_file": kfile,
        "numba": version_of("numba"), "faiss": version_of("faiss"), "tqdm": version_of("tqdm"),
        "psutil": version_of("psutil"), "matplotlib": version_of("matplotlib"),
    }

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("ks4_peer: torch sees no CUDA device (use --device cpu to run on the CPU)")
    t_import = time.perf_counter()
    peaks = None
    if device.type == "cuda":
        torch.cuda.init()
        torch.zeros(1, device=device)
        torch.cuda.synchronize(device)
        props = torch.cuda.get_device_properties(device)
        rep["device"] = {"name": props.name, "total_bytes": props.total_memory, "torch_device": str(device)}
        peaks = DevicePeaks(torch, device)
    else:
        rep["device"] = {"torch_device": str(device)}
    t_cuda = time.perf_counter()

    fs = p["fs"]
    settings = {"n_chan_bin": p["n_chan_bin"], "fs": int(fs) if fs == int(fs) else fs}
    settings.update(parse_set(args.set))
    rep["settings"] = settings
    rep["host_rss_before_call_bytes"] = max_rss_bytes()

    if peaks is not None:
        peaks.start()
    t0 = time.perf_counter()
    try:
        res = rk.run_kilosort(settings=settings, probe=ks4_probe(p), filename=binp,
                              results_dir=out, device=device)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    finally:
        t1 = time.perf_counter()
        if peaks is not None:
            peaks.stop()
            rep["memory"] = {
                "device_peak_allocated_bytes": peaks.alloc,
                "device_peak_reserved_bytes": peaks.reserved,
                "device_used_peak_bytes": peaks.used_max,
                "device_used_baseline_bytes": peaks.used_base,
                "device_used_peak_above_baseline_bytes": peaks.used_max - peaks.used_base,
                "peak_resets_by_ks4": peaks.resets,
            }
        rep["timing"] = {"import_s": t_import - _T_START, "cuda_init_s": t_cuda - t_import,
                         "ks4_call_s": t1 - t0}
        if "faiss" in shims:
            rep["faiss_shim"] = dict(sys.modules["faiss"].shim_stats)
        if "numba" in shims:
            # Un-jitted: kilosort.CCG.compute_CCG (clustering's swarm splitter,
            # the merge's CCG checks, refract in merge and export) and
            # postprocessing.remove_duplicates (export): runtime_clu0, _clu,
            # _merge and _postproc carry this time; the other phases do not.
            rep["numba_shim"] = {k: v for k, v in sys.modules["numba"].shim_stats.items() if v["calls"]}

    ops = res[0] if isinstance(res, tuple) else res
    # Every ops['runtime*'] entry: runtime (KS4's total) and runtime_preproc,
    # _drift, _st0, _clu0, _st, _clu, _merge, _postproc in this version.
    rep["timing"]["ks4_phases_s"] = {k: ops[k] for k in sorted(ops) if k.startswith("runtime")}
    phase_peaks = {}
    for k in sorted(ops):
        if k.startswith("cuda_") and isinstance(ops[k], dict):
            s = ops[k]
            phase_peaks[k[5:]] = {"allocated_peak_bytes": s.get("allocated_bytes.all.peak"),
                                  "reserved_peak_bytes": s.get("reserved_bytes.all.peak")}
    if phase_peaks:
        rep.setdefault("memory", {})["ks4_phase_peaks"] = phase_peaks
    rep["ks4_usage"] = {k[6:]: ops[k] for k in sorted(ops) if k.startswith("usage_")}
    rep["results"] = {k: ops.get(k) for k in ("n_spikes", "n_units_total", "n_units_good", "mean_drift")}
    print("ks4_peer: KS4 call %.2f s (KS4 total %.2f s), %s units (%s good), %s spikes"
          % (t1 - t0, ops.get("runtime", float("nan")), ops.get("n_units_total"),
             ops.get("n_units_good"), ops.get("n_spikes")), file=sys.stderr)
    if "memory" in rep and "device_peak_allocated_bytes" in rep["memory"]:
        m = rep["memory"]
        print("ks4_peer: device peak %.2f GiB allocated, %.2f GiB reserved, %.2f GiB in use (nvidia-smi view)"
              % (m["device_peak_allocated_bytes"] / 2**30, m["device_peak_reserved_bytes"] / 2**30,
                 m["device_used_peak_bytes"] / 2**30), file=sys.stderr)


# ---------------------------------------------------------------------------
# --add-outer: the outside measurements of scripts/ks4-peer
# ---------------------------------------------------------------------------


def parse_time_v(text):
    """The fields of GNU time -v's report as a dict (name -> string)."""
    d = {}
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"(.+?):\s+(.*)$", line)
        if m and not line.startswith("Command being timed"):
            d[m.group(1)] = m.group(2)
        elif line.startswith("Command being timed"):
            d["Command being timed"] = line.split(":", 1)[1].strip()
    return d


def add_outer(jpath, wall_s, timefile=None):
    with open(jpath) as f:
        rep = json.load(f)
    outer = {"wall_s": float(wall_s)}
    if timefile and os.path.isfile(timefile):
        with open(timefile) as f:
            tv = parse_time_v(f.read())
        outer["time_v"] = tv
        rss = tv.get("Maximum resident set size (kbytes)")
        if rss and rss.isdigit():
            outer["max_rss_bytes"] = int(rss) * 1024
    rep["outer"] = outer
    write_json(jpath, rep)
    t = rep.get("timing", {})
    mem = rep.get("memory", {})
    gib = lambda v: "%.2f GiB" % (v / 2.0**30) if isinstance(v, (int, float)) else "?"
    print("ks4_peer: whole process %.2f s, KS4 call %s s (KS4's own total %s s); host peak RSS %s; "
          "device peak %s allocated, %s reserved"
          % (outer["wall_s"], _fmt(t.get("ks4_call_s")), _fmt(t.get("ks4_phases_s", {}).get("runtime")),
             gib(outer.get("max_rss_bytes", rep.get("host_max_rss_bytes"))),
             gib(mem.get("device_peak_allocated_bytes")), gib(mem.get("device_peak_reserved_bytes"))),
          file=sys.stderr)


def _fmt(v):
    return "%.2f" % v if isinstance(v, (int, float)) else "?"


# ---------------------------------------------------------------------------
# --selftest (standard library only)
# ---------------------------------------------------------------------------


def selftest(meta_path=None):
    ok = True

    def check(cond, what):
        nonlocal ok
        print("%s  %s" % ("ok  " if cond else "FAIL", what))
        ok = ok and bool(cond)

    # geometry: a dspk NP1 head, an unused row and a 2-shank map
    sample = ("(NP1000,1,0,70)(0:43:20:1)(0:11:20:1)(0:59:40:1)(0:27:40:0)(0:43:60:1)")
    meta = {"nSavedChans": "6", "imSampRate": "30000", "snsGeomMap": sample, "snsApLfSy": "5,0,1"}
    p = probe_from_meta(meta)
    check(p["chan_map"] == [0, 1, 2, 4], "geom: used rows give chanMap [0 1 2 4]")
    check(p["x"] == [43.0, 11.0, 59.0, 43.0] and p["y"] == [20.0, 20.0, 40.0, 60.0], "geom: x, y from x, z")
    check(p["shank"] == [0, 0, 0, 0] and p["n_chan"] == 4 and p["n_chan_bin"] == 6, "geom: shanks, counts")
    check(p["fs"] == 30000.0 and p["header"]["part"] == "NP1000", "geom: fs, header")
    p2 = probe_from_meta({"nSavedChans": "3", "imSampRate": "30000.5",
                          "snsGeomMap": "(NP2014,4,250,70)(0:27:0:1)(3:59:15:1)"})
    check(p2["x"] == [27.0, 3 * 250.0 + 59.0] and p2["shank"] == [0, 3], "geom: shank pitch added to x")
    for bad, why in [("(NP1000,1,0,70)", "no entries"), ("(NP1000,1,0)(0:1:2:1)", "short header"),
                     ("(NP1000,1,0,70)(0:1:2)", "short entry"), ("(NP1000,1,0,70)(1:1:2:1)", "shank out of range"),
                     ("(NP1000,1,0,70)(0:a:2:1)", "bad number")]:
        try:
            probe_from_meta({"nSavedChans": "385", "imSampRate": "30000", "snsGeomMap": bad})
            check(False, "geom: rejects %s" % why)
        except ValueError:
            check(True, "geom: rejects %s" % why)
    try:
        probe_from_meta(dict(meta, snsApLfSy="384,0,1"))
        check(False, "geom: entry count checked against snsApLfSy")
    except ValueError:
        check(True, "geom: entry count checked against snsApLfSy")
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".meta", delete=False) as f:
        f.write("imSampRate=30000\r\nnSavedChans=6\r\nsnsApLfSy=5,0,1\r\n~snsGeomMap=%s\r\n" % sample)
    try:
        check(probe_from_meta(read_meta(f.name)) == p, "meta file: CRLF lines, '~' keys")
    finally:
        os.remove(f.name)
    if meta_path:
        m = read_meta(meta_path)
        q = probe_from_meta(m)
        print("      %s: %d sites of %d rows, fs %g, shanks %s, rows %s..%s, y %g..%g"
              % (meta_path, q["n_chan"], q["n_chan_bin"], q["fs"], sorted(set(q["shank"])),
                 q["chan_map"][0], q["chan_map"][-1], min(q["y"]), max(q["y"])))
        check(q["n_chan"] < q["n_chan_bin"] and max(q["chan_map"]) < q["n_chan_bin"], "real meta parses")

    # shims, installed by force into a saved-and-restored sys.modules
    saved = dict(sys.modules)
    try:
        used = install_shims(force=True)
        check(sorted(used) == sorted(SHIMS), "all shims install")
        from numba import njit, prange
        import numba

        def f(a, b=2):
            return a + b

        g = njit(f)
        check(g.py_func is f and g(1) == 3 and g(1, b=5) == 6, "numba: @njit")
        check(njit()(f).py_func is f and njit()(f)(2, 2) == 4, "numba: @njit()")
        check(njit("(int64[:], int32[:], int32)")(f)(1, 1) == 2, "numba: @njit('signature')")
        check(njit(cache=True)(f).py_func is f and numba.jit(nopython=True)(f)(0) == 2, "numba: keywords, jit")
        fs = numba.shim_stats[f.__qualname__]
        check(fs["calls"] == 5 and fs["seconds"] >= 0.0, "numba: calls and seconds counted")
        check(prange is range, "numba: prange")
        try:
            import numpy
        except ImportError:
            numpy = None
        if numpy is not None:
            from numba.types import bool_
            check(bool_ is numpy.bool_, "numba.types.bool_ is numpy.bool_")
        else:
            import numba.types
            check(callable(getattr(numba.types, "__getattr__", None)), "numba.types: lazy bool_ (numpy absent, not resolved)")

        from tqdm import tqdm, trange
        import tqdm as tqdm_mod
        check(tqdm_mod.std.tqdm is tqdm and sys.modules["tqdm.auto"].tqdm is tqdm, "tqdm: tqdm.std.tqdm, tqdm.auto")
        prog = tqdm(range(5), miniters=None, mininterval=None)
        check(len(prog) == 5 and list(prog) == [0, 1, 2, 3, 4] and prog.n == 5, "tqdm: iterate, len, n")
        check(prog.format_dict["n"] == 5 and prog.format_dict["total"] == 5, "tqdm: format_dict")
        check(list(trange(2, 8, 3)) == [2, 5], "tqdm: trange")
        with tqdm(total=100, disable=True, unit="B", unit_scale=True, unit_divisor=1024) as bar:
            bar.update(30)
            bar.update()
            bar.set_description("x")
            bar.set_postfix(loss=1, k="v")
            bar.set_postfix_str("s")
        check(bar.n == 31 and bar.total == 100, "tqdm: total, update, context manager, set_*")
        check(list(tqdm(iter([7, 8]))) == [7, 8] and tqdm().total is None, "tqdm: unsized iterable, no iterable")
        tqdm.write("      (tqdm.write goes to stderr)")

        import psutil
        vm = psutil.virtual_memory()
        psutil.cpu_percent()
        cp = psutil.cpu_percent()
        check(vm.total > 0 and 0 < vm.available <= vm.total and 0 <= vm.percent <= 100, "psutil: virtual_memory")
        check(0.0 <= cp <= 100.0, "psutil: cpu_percent")
        mi = psutil.Process().memory_info()
        check(mi.rss > 0 and psutil.Process().num_threads() >= 1 and psutil.cpu_count() >= 1, "psutil: Process, cpu_count")

        import matplotlib
        import matplotlib.pyplot as plt
        matplotlib.use("Agg")
        plt.style.use("dark_background")
        fig, ax = plt.subplots(1, 1, figsize=(8, 8))
        fig2, axes = plt.subplots(2, 2)
        ax.plot([1, 2], c="b")
        axes[0][1].imshow([[1]], aspect="auto")
        axes[1][1].set_title("t")
        fig.tight_layout()
        fig.savefig("/nonexistent/x.png", dpi=300)
        plt.close(fig)
        cm = matplotlib.colormaps["binary"]
        cm(0.5)
        check(True, "matplotlib: import, subplots unpack, chained calls are no-ops")
        import faiss
        check(hasattr(faiss.IndexFlatL2, "search"), "faiss: IndexFlatL2 present")
        try:
            import numpy as np
            import torch
        except ImportError:
            print("      (numpy/torch absent: faiss search not exercised)")
        else:
            rng = np.random.default_rng(0)
            xb = rng.standard_normal((300, 7)).astype(np.float32)
            xq = rng.standard_normal((50, 7)).astype(np.float32)
            ix = faiss.IndexFlatL2(7)
            ix.add(xb)
            os.environ["KS4_PEER_FAISS_BYTES"] = "20000"  # force several chunks
            try:
                D, I = ix.search(xq, 4)
            finally:
                del os.environ["KS4_PEER_FAISS_BYTES"]
            ref = ((xq[:, None, :] - xb[None, :, :]) ** 2).sum(-1)
            want = np.argsort(ref, axis=1)[:, :4]
            check(D.dtype == np.float32 and I.dtype == np.int64 and I.shape == (50, 4), "faiss: dtypes, shape")
            check((I == want).mean() > 0.99 and np.allclose(D, np.take_along_axis(ref, want, 1), atol=1e-4),
                  "faiss: exact neighbours and squared distances")
            small = faiss.IndexFlatL2(7)
            small.add(xb[:3])
            D2, I2 = small.search(xq[:2], 5)
            check((I2[:, 3:] == -1).all() and (I2[:, :3] >= 0).all() and ix.ntotal == 300,
                  "faiss: k > ntotal pads with -1, as faiss does")
    finally:
        for k in list(sys.modules):
            if k not in saved:
                del sys.modules[k]
        sys.modules.update(saved)

    # DevicePeaks folds the peaks before each of KS4's resets (fake torch.cuda)
    st = {"alloc": 0, "reserved": 0, "resets": 0}
    fake_cuda = types.SimpleNamespace(
        max_memory_allocated=lambda d=None: st["alloc"], max_memory_reserved=lambda d=None: st["reserved"],
        mem_get_info=lambda d=None: (100 - st["reserved"], 100),
        reset_peak_memory_stats=lambda d=None: st.update(alloc=0, reserved=0, resets=st["resets"] + 1))
    fake_torch = types.SimpleNamespace(cuda=fake_cuda)
    orig_reset = fake_cuda.reset_peak_memory_stats
    pk = DevicePeaks(fake_torch, "cuda", poll_s=0.001)
    pk.start()
    st.update(alloc=40, reserved=60)
    fake_cuda.reset_peak_memory_stats()  # as kilosort.utils.log_performance(reset=True) does
    st.update(alloc=10, reserved=20)
    time.sleep(0.01)
    pk.stop()
    check(pk.alloc == 40 and pk.reserved == 60 and pk.resets == 1, "DevicePeaks: peaks survive KS4's resets")
    check(pk.used_base == 0 and pk.used_max >= 20 and fake_cuda.reset_peak_memory_stats is orig_reset,
          "DevicePeaks: polled use, reset restored")

    tv = parse_time_v("\tCommand being timed: \"python3 x\"\n\tElapsed (wall clock) time (h:mm:ss or m:ss): 0:01.50\n"
                      "\tMaximum resident set size (kbytes): 1234\n")
    check(tv.get("Maximum resident set size (kbytes)") == "1234" and tv["Command being timed"] == '"python3 x"',
          "time -v report parses")
    print("selftest %s" % ("passed" if ok else "FAILED"))
    return 0 if ok else 1


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="SpikeGLX .ap.bin written by dspk simulate")
    ap.add_argument("--meta", help="its .meta (default: the .bin's name with .meta)")
    ap.add_argument("--out", help="results folder (Kilosort's output and ks4_peer.json)")
    ap.add_argument("--ks4-dir", default=os.environ.get("KS4_DIR") or os.path.join(os.path.dirname(here), ".ks4"),
                    help="folder holding kilosort/ (default: KS4_DIR or <repo>/.ks4)")
    ap.add_argument("--device", default="cuda", help="torch device (default cuda)")
    ap.add_argument("--plots", action="store_true", help="make KS4's diagnostic PNGs (needs the real matplotlib)")
    ap.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="override a KS4 setting (value parsed as JSON, else a string); repeatable")
    ap.add_argument("--selftest", action="store_true", help="standard-library self-check, then exit")
    ap.add_argument("--add-outer", nargs="+", metavar="ARG", help="JSON WALL_S [TIMEFILE]: add outside timings")
    args = ap.parse_args(argv)
    if args.selftest:
        return selftest(args.meta)
    if args.add_outer:
        if len(args.add_outer) not in (2, 3):
            ap.error("--add-outer takes JSON WALL_S [TIMEFILE]")
        add_outer(*args.add_outer)
        return 0
    if not args.bin or not args.out:
        ap.error("--bin and --out are required")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
