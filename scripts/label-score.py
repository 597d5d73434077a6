#!/usr/bin/env python3
"""label-score.py TRUTHDIR SORTDIR: how well a sort folder's labels pick the units that match a neuron.

For the Bombcell-style labels (cluster_bc_label.tsv) and Kilosort4's (cluster_KSLabel.tsv) prints the
fraction of good-labelled units that match a neuron (accuracy >= 0.8, spikes within +-12 samples, as dspk
compare and SpikeInterface score) and the fraction of well-detected neurons whose best unit is labelled
good, on one line each. TRUTHDIR holds spike_times.npy and spike_clusters.npy. Needs numpy.
"""
import csv
import sys

import numpy as np
truth, sort = sys.argv[1], sys.argv[2]
tt = np.load(truth+'/spike_times.npy').astype(np.int64).ravel(); tc = np.load(truth+'/spike_clusters.npy').ravel()
st = np.load(sort+'/spike_times.npy').astype(np.int64).ravel(); sc = np.load(sort+'/spike_clusters.npy').ravel()
lab = {int(r['cluster_id']): r['bc_label'] for r in csv.DictReader(open(sort+'/cluster_bc_label.tsv'), delimiter='\t')}
ks = {int(r['cluster_id']): r['KSLabel'] for r in csv.DictReader(open(sort+'/cluster_KSLabel.tsv'), delimiter='\t')}
o = np.argsort(st); st, sc = st[o], sc[o]
tu, su = np.unique(tc), np.unique(sc)
# agreement counts: for each truth spike, nearest sorted spike within 12 samples
i = np.searchsorted(st, tt); i = np.clip(i, 1, len(st)-1)
j = np.where(np.abs(st[i-1]-tt) <= np.abs(st[i]-tt), i-1, i)
ok = np.abs(st[j]-tt) <= 12
M = {}
for a, b in zip(tc[ok], sc[j[ok]]):
    M[(a, b)] = M.get((a, b), 0) + 1
nt = {u: (tc == u).sum() for u in tu}; ns = {u: (sc == u).sum() for u in su}
acc = lambda a, b: M.get((a, b), 0) / (nt[a] + ns[b] - M.get((a, b), 0))
best_s = {b: max((acc(a, b) for a in tu), default=0) for b in su}
best_t = {a: max(((acc(a, b), b) for b in su), default=(0, None)) for a in tu}
for name, L in (('bc', lab), ('KS', ks)):
    good = [b for b in su if L.get(int(b)) == 'good']
    gm = sum(best_s[b] >= 0.8 for b in good)
    well = [a for a in tu if best_t[a][0] >= 0.8]
    wg = sum(L.get(int(best_t[a][1])) == 'good' for a in well)
    print(f"labels {name}: good units {len(good)}, matching a neuron {gm} ({gm/max(1,len(good)):.3f}); well-detected neurons {len(well)}, labelled good {wg} ({wg/max(1,len(well)):.3f})")
