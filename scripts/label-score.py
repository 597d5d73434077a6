#!/usr/bin/env python3
"""label-score.py TRUTHDIR SORTDIR: how well a sort folder's labels pick the units that match a neuron.

For the Bombcell-style labels (cluster_bc_label.tsv) and Kilosort4's (cluster_KSLabel.tsv) prints the
fraction of good-labelled units that match a neuron and the fraction of well-detected neurons whose unit is
labelled good, on one line each. Matching is SpikeInterface's (compare_sorter_to_ground_truth): for each
neuron and unit the truth spikes that have a spike of that unit within +-12 samples (a truth spike may match
several units), accuracy = matches / (n_truth + n_unit - matches), neurons and units paired one to one by
the Hungarian method on accuracy (scipy), a pair matching at accuracy >= 0.8 ("well detected"). After the
two lines, the good units that match no neuron are listed by kind: 'piece' (>= 0.8 of its spikes belong
to one neuron, which it does not cover), 'merged' (it holds >= 0.8 of a neuron's spikes and many others),
'fp' (the rest). TRUTHDIR holds spike_times.npy and spike_clusters.npy. Needs numpy and scipy.
"""
import csv
import sys

import numpy as np
from scipy.optimize import linear_sum_assignment

truth, sort = sys.argv[1], sys.argv[2]
tt = np.load(truth+'/spike_times.npy').astype(np.int64).ravel(); tc = np.load(truth+'/spike_clusters.npy').ravel()
st = np.load(sort+'/spike_times.npy').astype(np.int64).ravel(); sc = np.load(sort+'/spike_clusters.npy').ravel()
lab = {int(r['cluster_id']): r['bc_label'] for r in csv.DictReader(open(sort+'/cluster_bc_label.tsv'), delimiter='\t')}
ks = {int(r['cluster_id']): r['KSLabel'] for r in csv.DictReader(open(sort+'/cluster_KSLabel.tsv'), delimiter='\t')}
o = np.argsort(st, kind='stable'); st, sc = st[o], sc[o]
tu, su = np.unique(tc), np.unique(sc)
ti = {u: k for k, u in enumerate(tu)}; si = {u: k for k, u in enumerate(su)}
M = np.zeros((len(tu), len(su)))
lo = np.searchsorted(st, tt - 12, 'left'); hi = np.searchsorted(st, tt + 12, 'right')
for a, l, h in zip(tc, lo, hi):
    if h > l:
        for b in np.unique(sc[l:h]):
            M[ti[a], si[b]] += 1
nt = np.array([(tc == u).sum() for u in tu]); ns = np.array([(sc == u).sum() for u in su])
M = np.minimum(M, np.minimum.outer(nt, ns))
A = M / (nt[:, None] + ns[None, :] - M)
r, c = linear_sum_assignment(-A)
keep = A[r, c] >= 0.8
unit_of = {int(tu[i]): int(su[j]) for i, j in zip(r[keep], c[keep])}
matched_units = set(unit_of.values())
for name, L in (('bc', lab), ('KS', ks)):
    good = [int(b) for b in su if L.get(int(b)) == 'good']
    gm = sum(b in matched_units for b in good)
    wg = sum(L.get(b) == 'good' for b in unit_of.values())
    print(f"labels {name}: good units {len(good)}, matching a neuron {gm} ({gm/max(1, len(good)):.3f}); "
          f"well-detected neurons {len(unit_of)}, labelled good {wg} ({wg/max(1, len(unit_of)):.3f})")
kinds = {}
for b in su:
    if lab.get(int(b)) != 'good' or int(b) in matched_units:
        continue
    j = si[b]; i = int(np.argmax(M[:, j])); prec = M[i, j] / ns[j]; rec = M[i, j] / nt[i]
    k = 'piece' if prec >= 0.8 else 'merged' if rec >= 0.8 else 'fp'
    kinds.setdefault(k, []).append(f"{int(b)}({ns[j]} spikes, neuron {int(tu[i])}: acc {A[i, j]:.2f})")
for k, v in sorted(kinds.items()):
    print(f"good, no neuron, {k}: {len(v)}: " + ' '.join(v))
# Which of the MUA rule's tests (Bombcell's defaults, as dspk sort's flags) fail for the well-detected
# neurons whose unit is not labelled good.
try:
    q = {int(r['unit_id']): r for r in csv.DictReader(open(sort+'/quality_metrics.tsv'), delimiter='\t')}
except OSError:
    q = {}
tests = (('num_spikes', lambda v: v < 300), ('presence_ratio', lambda v: v < 0.7), ('raw_snr', lambda v: v < 5),
         ('fraction_rpvs', lambda v: v > 0.1), ('amplitude_cutoff', lambda v: v > 0.2),
         ('amplitude_median', lambda v: abs(v) < 30), ('drift_ptp', lambda v: v > 100))
why = {}
for b in unit_of.values():
    if lab.get(b) == 'good' or b not in q:
        continue
    failed = [k for k, f in tests if k in q[b] and q[b][k] not in ('', 'nan', 'NaN') and f(float(q[b][k]))]
    for k in failed or [lab.get(b, '?')]:
        why[k] = why.get(k, 0) + 1
if why:
    print("well detected, not good (tests failed, a unit may fail several): " +
          ', '.join(f"{k} {n}" for k, n in sorted(why.items(), key=lambda x: -x[1])))
