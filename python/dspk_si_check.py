"""dspk_si_check.py DSPK WORKDIR [SECONDS]: the check of dspk_spikeinterface that `go test ./cmd/dspk -run
TestSpikeInterfaceSorter` runs. It generates a ground-truth recording with SpikeInterface (fixed seed), sorts it
with run_sorter("dspk", ...) on the CPU and with `dspk sort` run by hand on the same data saved as a binary
folder, scores both against the truth, sorts a two-segment recording both ways, and runs a sort that must fail.
It prints one JSON object (the last line of its output) for the Go test to judge.
"""

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dspk_spikeinterface  # noqa: E402,F401  (registers "dspk")
import numpy as np  # noqa: E402
import spikeinterface.core as sc  # noqa: E402
from spikeinterface.comparison import compare_sorter_to_ground_truth  # noqa: E402
from spikeinterface.extractors import read_kilosort  # noqa: E402
from spikeinterface.sorters import run_sorter  # noqa: E402
from spikeinterface.sorters.utils import SpikeSortingError  # noqa: E402



def _matching_matrix(frames1, frames2, units1, units2, n1, n2, delta):
    """SpikeInterface's count of matching spikes (comparisontools.get_optimized_compute_matching_matrix) in
    plain Python, for machines without numba, which that function compiles with: for each spike of train 1 in
    time order, every spike of train 2 within delta frames counts once per unit pair, unless one of the two
    spikes was the last to match for that pair."""
    m = np.zeros((n1, n2), dtype=np.uint64)
    last1 = -np.ones((n1, n2), dtype=np.int64)
    last2 = -np.ones((n1, n2), dtype=np.int64)
    start = 0
    for i, f1 in enumerate(frames1.tolist()):
        for j in range(start, len(frames2)):
            f2 = frames2[j]
            if f2 < f1 - delta:
                start += 1
            elif f2 > f1 + delta:
                break
            else:
                u1, u2 = units1[i], units2[j]
                if i != last1[u1, u2] and j != last2[u1, u2]:
                    last1[u1, u2], last2[u1, u2] = i, j
                    m[u1, u2] += 1
    return m


if importlib.util.find_spec("numba") is None:
    from spikeinterface.comparison import comparisontools

    comparisontools.get_optimized_compute_matching_matrix._cached_function = _matching_matrix

exe, work = sys.argv[1], Path(sys.argv[2])
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
report = {}


def trains(sorting):
    """Each unit's spike train, segments one after the other, keyed by the Kilosort cluster id."""
    ids = sorting.get_property("original_cluster_id")
    out = {}
    for u, cid in zip(sorting.unit_ids, ids):
        parts, offset = [], 0
        for s in range(sorting.get_num_segments()):
            parts.append(sorting.get_unit_spike_train(u, segment_index=s) + offset)
            offset += report["segment_samples"][s] if sorting.get_num_segments() > 1 else 0
        out[int(cid)] = np.concatenate(parts)
    return out


def same_trains(a, b):
    ta, tb = trains(a), trains(b)
    return sorted(ta) == sorted(tb) and all(np.array_equal(ta[k], tb[k]) for k in ta)


def accuracy(gt, sorting):
    perf = compare_sorter_to_ground_truth(gt, sorting, exhaustive_gt=True).get_performance()
    return [round(float(a), 6) for a in perf["accuracy"]]


def hand_sort(folder, out):
    subprocess.run([exe, "sort", "-device", "cpu", "-o", str(out), str(folder)], check=True, capture_output=True)
    return read_kilosort(out)


rec, gt = sc.generate_ground_truth_recording(durations=[seconds], num_channels=32, num_units=8, seed=2205)
t0 = time.time()
sorting = run_sorter("dspk", rec, folder=work / "run_sorter", device="cpu", dspk_path=exe, verbose=True)
report["run_sorter_seconds"] = time.time() - t0
rec.save(folder=work / "folder", format="binary", verbose=False)
t0 = time.time()
hand = hand_sort(work / "folder", work / "hand")
report["hand_seconds"] = time.time() - t0
report["segment_samples"] = [rec.get_num_samples()]
report["units"] = len(sorting.unit_ids)
report["same_trains"] = same_trains(sorting, hand)
report["accuracy_run_sorter"] = accuracy(gt, sorting)
report["accuracy_hand"] = accuracy(gt, hand)
keys = set(sorting.get_property_keys())
report["properties"] = sorted(k for k in keys if k in ("KSLabel", "bc_label", "snr", "firing_rate", "num_spikes", "exp_decay"))
log = json.loads((work / "run_sorter" / "spikeinterface_log.json").read_text())
report["log_has_progress"] = any(line.startswith("Sorted ") for line in log["runtime_trace"])

# Two segments: sorted as their concatenation, the sorting split back into them.
rec2, _ = sc.generate_ground_truth_recording(durations=[12.0, 9.0], num_channels=32, num_units=8, seed=2206)
folder2 = rec2.save(folder=work / "folder2", format="binary", verbose=False)
split = run_sorter("dspk", folder2, folder=work / "run_sorter2", device="cpu", dspk_path=exe)
report["segment_samples"] = [rec2.get_num_samples(s) for s in range(2)]
report["segments"] = split.get_num_segments()
report["same_trains_segments"] = same_trains(split, hand_sort(work / "folder2", work / "hand2"))
report["copy_kept"] = (work / "run_sorter2" / "dspk_recording").exists() or (work / "run_sorter" / "dspk_recording").exists()

try:
    run_sorter("dspk", folder2, folder=work / "bad", device="cpu", dspk_path=exe, registration="bogus")
    report["failure"] = None
except SpikeSortingError as e:
    report["failure"] = str(e)
print(json.dumps(report))
