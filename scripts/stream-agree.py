#!/usr/bin/env python3
"""stream-agree.py SORTDIR STREAMDIR: how well a dspk stream agrees with the sort whose units it matched.

Prints the fraction of the sort's spikes that the stream found in the same unit within +-5 samples, and the
fraction of the stream's spikes that the sort has (issue 44's bars: 0.95 each on a still recording, 0.90 on
a drifting one). Spikes after the stream's last one are left out of the sort's (a stream stopped early).
Needs numpy.
"""
import sys

import numpy as np
a, b = sys.argv[1], sys.argv[2]   # sort, stream
def load(d):
    t = np.load(d+'/spike_times.npy').astype(np.int64).ravel(); c = np.load(d+'/spike_clusters.npy').ravel()
    return t, c
ta, ca = load(a); tb, cb = load(b)
keep = ta <= tb.max() if len(tb) else ta < 0
ta, ca = ta[keep], ca[keep]
def frac(t1, c1, t2, c2, tol=5):
    hit = 0
    for u in np.unique(c1):
        x = np.sort(t1[c1 == u]); y = np.sort(t2[c2 == u])
        if len(y) == 0: continue
        i = np.clip(np.searchsorted(y, x), 1, max(1, len(y)-1))
        d = np.minimum(np.abs(y[np.minimum(i, len(y)-1)] - x), np.abs(y[i-1] - x))
        hit += (d <= tol).sum()
    return hit / len(t1)
print(f"sort spikes {len(ta)}, stream spikes {len(tb)}; sort's found by stream (same unit, ±5): {frac(ta,ca,tb,cb):.4f}; stream's in sort: {frac(tb,cb,ta,ca):.4f}")
