"""Build quality's SpikeInterface fixtures (run once by hand; not in CI).

    PYTHONPATH=<spikeinterface 0.105 src> python3 quality/testdata/gen_fixtures.py

needs numpy, scipy, numba (rp_violations, sd_ratio), scikit-learn
(d_prime, nn_hit_rate) and pandas. It builds one small deterministic sort
(seeded): 12 units on 16 channels at 30 kHz over 250 s, some clean, one
contaminated (refractory violations and duplicate times), one with its
amplitudes cut at a threshold, one present only in the first 100 s, two
drifting, one with 40 spikes, one with a single spike and one without
spikes. It then

  * builds a SortingAnalyzer on a generated recording (lazy noise plus the
    injected templates), computes random_spikes (all), templates,
    noise_levels, spike_amplitudes and spike_locations, and replaces the
    amplitudes and locations by synthetic float32 values (cut-off and
    drifting) so that the amplitude and drift metrics have something to
    find;
  * computes SpikeInterface's quality_metrics extension (every non-PC
    metric, default parameters; sd_ratio's get_noise_levels is pointed at
    the noise_levels extension so that both snr and sd_ratio use one set
    of levels, as dspk's Input has);
  * computes the template shape metrics on each unit's main-channel
    template upsampled ×10 by resample_poly, with template/metrics.py's
    functions and the template_metrics extension's defaults
    (min_thresh_detect_peaks_troughs 0.3, edge_exclusion_ms 0.09), and
    exp_decay on the whole upsampled template (channel_tolerance None);
    then bombcell_label_units on all these metrics with its default
    thresholds;
  * builds Kilosort-style PC features (3 PCs on each unit's 4 channels
    nearest its main channel) and, per unit, the neighbourhood array as
    SpikeInterface's quality_metrics._prepare_data does for a sparse
    analyzer, and calls pca_metrics' plain-array functions on it
    (mahalanobis_metrics, d_prime_metric, nearest_neighbors_metrics with
    max_spikes 10000 and 1500, simplified_silhouette_score), NaN where
    they raise, as the extension does.

It writes the inputs as .npy files and SpikeInterface's values as
si_metrics.json under quality/testdata/si/.
"""

import json
import os

import numpy as np

import spikeinterface.core as si
from spikeinterface.core.generate import generate_ground_truth_recording
import spikeinterface.metrics.quality.misc_metrics as mm
import spikeinterface.metrics.quality.pca_metrics as pm
import spikeinterface.core as sicore
import spikeinterface.metrics.template.metrics as tm
from spikeinterface.curation import bombcell_label_units
from scipy.signal import resample_poly

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "si")
FS = 30000.0
DUR = 250.0
T = int(DUR * FS)
NCH = 16
NPC, NFEAT = 3, 4


def trains(rng):
    """Spike trains in samples, one per unit."""

    def poisson(rate, t0=0.0, t1=DUR, dead_ms=2.0):
        n = rng.poisson(rate * (t1 - t0))
        t = np.sort(rng.uniform(t0, t1, n))
        keep = np.concatenate([[True], np.diff(t) > dead_ms / 1000])
        return (t[keep] * FS).astype(np.int64)

    st = [
        poisson(6.0),
        poisson(4.0),
        poisson(3.0),
        poisson(5.0),
        None,  # contaminated, below
        poisson(4.0),  # amplitudes cut
        poisson(8.0, 0.0, 100.0),  # present early only
        poisson(3.0),  # drifting
        poisson(2.5),  # drifting more
        np.sort(rng.choice(T, 40, replace=False)).astype(np.int64),
        np.array([T // 2], dtype=np.int64),
        np.array([], dtype=np.int64),
    ]
    base = poisson(3.0)
    extra = (rng.uniform(0, DUR, 120) * FS).astype(np.int64)
    close = base[:60] + rng.integers(5, 40, 60)  # within 1.3 ms of a spike
    dup = base[100:110]  # equal times
    st[4] = np.sort(np.concatenate([base, extra, close, dup]))
    return [np.clip(t, 0, T - 1) for t in st]


def template_metrics(templates, pos, nu):
    """SpikeInterface's template shape metrics of every unit (NaN without spikes)."""
    fs = FS * 10
    cols = {}
    for u in range(nu):
        t = templates[u].astype(np.float64)
        if not np.any(t):
            row = {}
        else:
            main = np.argmax(np.max(np.abs(t), axis=0))
            x = resample_poly(t[:, main], 10, 1)
            pi = tm.get_trough_and_peak_idx(x, fs, min_thresh_detect_peaks_troughs=0.3, edge_exclusion_ms=0.09)
            npos, nneg = tm.get_number_of_peaks(pi)
            row = dict(num_positive_peaks=npos, num_negative_peaks=nneg,
                       peak_to_trough_duration=tm.get_peak_to_trough_duration(pi, fs),
                       waveform_baseline_flatness=tm.get_waveform_baseline_flatness(x, fs, baseline_window_ms=(0.0, 0.5)),
                       exp_decay=tm.get_exp_decay(resample_poly(t, 10, 1, axis=0), pos, fs, peak_function="ptp",
                                                  min_r2=0.2, linear_fit=False, channel_tolerance=None,
                                                  min_channels_for_fit=None, num_channels_for_fit=None,
                                                  normalize_decay=False),
                       **tm.get_waveform_ratios(x, pi), **tm.get_waveform_widths(pi, fs))
        for k in ("num_positive_peaks", "num_negative_peaks", "peak_to_trough_duration", "waveform_baseline_flatness",
                  "exp_decay", "peak_before_to_trough_ratio", "peak_after_to_trough_ratio",
                  "peak_before_to_peak_after_ratio", "main_peak_to_trough_ratio", "trough_width",
                  "peak_before_width", "peak_after_width"):
            cols.setdefault(k, []).append(float(row.get(k, np.nan)))
    return {k: np.array(v) for k, v in cols.items()}


def main():
    rng = np.random.default_rng(20260509)
    st = trains(rng)
    nu = len(st)
    unit_ids = np.arange(nu)
    times = np.concatenate(st)
    labels = np.concatenate([np.full(len(t), u) for u, t in enumerate(st)])
    order = np.lexsort((labels, times))
    times, labels = times[order], labels[order]
    n = len(times)
    sorting = si.NumpySorting.from_samples_and_labels([times], [labels], FS, unit_ids=unit_ids)

    rec, _ = generate_ground_truth_recording(
        durations=[DUR], sampling_frequency=FS, num_channels=NCH, num_units=nu, sorting=sorting, seed=7,
        noise_kwargs=dict(noise_levels=5.0, strategy="on_the_fly"),
    )
    a0 = si.create_sorting_analyzer(sorting, rec, sparse=False, format="memory")
    a0.compute("random_spikes", method="all")
    tmpl0 = a0.compute("templates").get_data()
    main_ch = np.argmax(np.max(np.abs(tmpl0), axis=1), axis=1)
    an = si.create_sorting_analyzer(sorting, rec, sparse=False, format="memory", main_channel_indices=main_ch)
    an.compute("random_spikes", method="all")
    templates = an.compute("templates").get_data().astype(np.float32)
    noise = an.compute("noise_levels", seed=3).get_data().astype(np.float32)

    # Amplitudes: per unit a log-normal spread about a level, negative
    # (troughs); unit 5 cut at a threshold; float32 values stored as float64.
    amps = np.zeros(n)
    for u in range(nu):
        m = labels == u
        level = -(40.0 + 12.0 * u)
        a = level * rng.lognormal(0.0, 0.25, m.sum())
        if u == 5:
            a = np.maximum(a, level * 0.9)  # the small ones (|a| < 0.9·|level|) were not detected
            a[a > level * 0.9] = level * 0.9 - rng.uniform(0, 3, (a > level * 0.9).sum())
        amps[m] = a
    amps = amps.astype(np.float32).astype(np.float64)
    ext = an.compute("spike_amplitudes")
    ext.data["amplitudes"] = amps

    # Depths: units 7 and 8 drift linearly; others jitter about their site.
    locs = np.zeros(n, dtype=[("x", "float64"), ("y", "float64")])
    pos = rec.get_channel_locations()
    for u in range(nu):
        m = labels == u
        y0 = pos[main_ch[u], 1]
        slope = {7: 60.0, 8: 150.0}.get(u, 0.0)
        locs["y"][m] = y0 + slope * times[m] / T + rng.normal(0, 4, m.sum())
        locs["x"][m] = pos[main_ch[u], 0] + rng.normal(0, 2, m.sum())
    locs["x"] = locs["x"].astype(np.float32)
    locs["y"] = locs["y"].astype(np.float32)
    an.compute("spike_locations", method="center_of_mass")
    an.get_extension("spike_locations").data["spike_locations"] = locs

    # sd_ratio's own noise estimate, pointed at the stored levels.
    sicore.get_noise_levels = lambda *a, **k: noise.astype(np.float64)
    names = ["num_spikes", "firing_rate", "presence_ratio", "snr", "isi_violation", "rp_violation",
             "sliding_rp_violation", "firing_range", "amplitude_cv", "amplitude_cutoff", "amplitude_median",
             "drift", "sd_ratio"]
    qm = an.compute("quality_metrics", metric_names=names, skip_pc_metrics=True).get_data()

    shape = template_metrics(templates, pos, nu)
    import pandas as pd

    # Debian's pandas 1.5 cannot np.nonzero a Series; hand the module an
    # np whose nonzero takes the values first.
    import types
    import spikeinterface.curation.bombcell_curation as bcm

    shim = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
    shim.nonzero = lambda x: np.nonzero(np.asarray(x))
    bcm.np = shim
    bc = bombcell_label_units(external_metrics=[qm, pd.DataFrame(shape, index=qm.index)])

    # Kilosort-style PC features: each unit's 4 channels nearest its main
    # channel (main first), a unit-specific centre plus noise.
    d = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2)
    pcind = np.zeros((nu, NFEAT), dtype=np.int32)
    for u in range(nu):
        pcind[u] = np.argsort(d[main_ch[u]], kind="stable")[:NFEAT]
    centres = rng.normal(0, 6, (nu, NPC, NFEAT))
    pcf = np.zeros((n, NPC, NFEAT), dtype=np.float32)
    for u in range(nu):
        m = labels == u
        pcf[m] = centres[u] + rng.normal(0, 1 + 0.3 * u, (m.sum(), NPC, NFEAT))
    dense = np.zeros((n, NPC, NCH))
    for s in range(n):
        dense[s][:, pcind[labels[s]]] = pcf[s]

    pc = {k: [] for k in ("isolation_distance", "l_ratio", "d_prime", "nn_hit_rate", "nn_miss_rate",
                          "nn_hit_rate_1500", "nn_miss_rate_1500", "silhouette")}
    for u in range(nu):
        chans = np.sort(pcind[u])
        nb = [o for o in unit_ids if main_ch[o] in chans]
        keep = np.isin(labels, nb)
        lab = labels[keep]
        pcs = dense[keep][:, :, chans].reshape(keep.sum(), -1)

        def tryit(f, k=1):
            try:
                return f()
            except Exception:
                return (np.nan,) * k if k > 1 else np.nan

        if (lab == u).sum() == 0:
            for k in pc:
                pc[k].append(np.nan)
            continue
        iso, lr = tryit(lambda: pm.mahalanobis_metrics(pcs, lab, u), 2)
        dp = np.nan if nu == 1 else tryit(lambda: pm.d_prime_metric(pcs, lab, u))
        h, mi = tryit(lambda: pm.nearest_neighbors_metrics(pcs, lab, u, 10000, 5), 2)
        h2, m2 = tryit(lambda: pm.nearest_neighbors_metrics(pcs, lab, u, 1500, 5), 2)
        sil = tryit(lambda: pm.simplified_silhouette_score(pcs, lab, u))
        for k, v in zip(pc, (iso, lr, dp, h, mi, h2, m2, sil)):
            pc[k].append(float(v))

    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, "spike_times.npy"), times.astype(np.int64))
    np.save(os.path.join(OUT, "spike_units.npy"), labels.astype(np.int32))
    np.save(os.path.join(OUT, "amplitudes.npy"), amps.astype(np.float32))
    np.save(os.path.join(OUT, "depths.npy"), locs["y"].astype(np.float32))
    np.save(os.path.join(OUT, "templates.npy"), templates)
    np.save(os.path.join(OUT, "noise_levels.npy"), noise)
    np.save(os.path.join(OUT, "channel_positions.npy"), pos.astype(np.float64))
    np.save(os.path.join(OUT, "pc_features.npy"), pcf)
    np.save(os.path.join(OUT, "pc_feature_ind.npy"), pcind)
    res = {"sample_rate": FS, "num_samples": T, "unit_ids": unit_ids.tolist(),
           "main_channels": main_ch.tolist(), "metrics": {}}
    for c in qm.columns:
        res["metrics"][c] = [None if not np.isfinite(v) else float(v) for v in qm[c].to_numpy(dtype=float)]
    for k, v in shape.items():
        res["metrics"][k] = [None if not np.isfinite(x) else float(x) for x in v]
    res["bc_label"] = bc["bombcell_label"].tolist()
    for k, v in pc.items():
        res["metrics"][k] = [None if not np.isfinite(x) else x for x in v]
    with open(os.path.join(OUT, "si_metrics.json"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
