# make.py OUT: writes the test folders of recording/testdata/spikeinterface with SpikeInterface 0.105
# itself (recording.save(format="binary")), the traces it reads back (*.ref.bin, segments one after the
# other, as stored) and reference.json (locations, groups, gains, rate, samples as it reads them).
import sys, numpy as np, shutil, os
import spikeinterface.core as sc
from probeinterface import generate_linear_probe, ProbeGroup, generate_tetrode
out = sys.argv[1]
rng = np.random.default_rng(7)
# int16, two segments, one linear probe with channels wired out of order, gains 0.195 µV
traces = [rng.integers(-300, 300, size=(n, 6)).astype("int16") for n in (1500, 900)]
rec = sc.NumpyRecording(traces, sampling_frequency=30000.0)
rec.set_channel_gains(0.195); rec.set_channel_offsets(0.0)
p = generate_linear_probe(num_elec=6, ypitch=20)
p.set_device_channel_indices([5, 4, 3, 2, 1, 0])
rec.set_probe(p)
d = os.path.join(out, "int16_2seg")
shutil.rmtree(d, ignore_errors=True)
rec.save(folder=d, format="binary", verbose=False)
with open(os.path.join(out, "int16_2seg.ref.bin"), "wb") as f:
    for s in range(rec.get_num_segments()):
        f.write(np.ascontiguousarray(rec.get_traces(segment_index=s)).astype("<i2").tobytes())
# float32 µV, one segment, two tetrodes as a probe group
tr = (rng.normal(size=(1200, 8)) * 7.3).astype("float32")
rec = sc.NumpyRecording([tr], sampling_frequency=20000.0)
pg = ProbeGroup()
for i in range(2):
    t = generate_tetrode(); t.move([i * 200, 0]); pg.add_probe(t)
pg.set_global_device_channel_indices(np.arange(8))
rec.set_channel_gains(1.0); rec.set_channel_offsets(0.0)
rec.set_probegroup(pg)
d = os.path.join(out, "float32_tetrodes")
shutil.rmtree(d, ignore_errors=True)
rec.save(folder=d, format="binary", verbose=False)
with open(os.path.join(out, "float32_tetrodes.ref.bin"), "wb") as f:
    f.write(rec.get_traces().astype("<f4").tobytes())
# what SpikeInterface reads back: channel locations and groups, per folder
import json
ref = {}
for name in ("int16_2seg", "float32_tetrodes"):
    r = sc.read_binary_folder(os.path.join(out, name))
    ref[name] = dict(locations=r.get_channel_locations().tolist(), groups=r.get_channel_groups().tolist(),
                     gains=r.get_channel_gains().tolist(), rate=r.sampling_frequency,
                     samples=[r.get_num_samples(s) for s in range(r.get_num_segments())])
with open(os.path.join(out, "reference.json"), "w") as f:
    json.dump(ref, f, indent=1)
