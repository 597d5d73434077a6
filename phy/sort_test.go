package phy

import (
	"context"
	"encoding/binary"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"dspk/pipeline"
	"dspk/preprocess"
	"dspk/probe"
	"dspk/sim"
)

// sortResult sorts 10 s of 8 simulated units on the first 32 NP1 sites
// with motion correction (nblocks 1).
func sortResult(t *testing.T) *pipeline.SortResult {
	t.Helper()
	pr := probe.NP1()
	const n = 32
	pr.Name = "np1-" + strconv.Itoa(n)
	pr.X, pr.Y, pr.Shank, pr.ChanMap, pr.NChanFile = pr.X[:n], pr.Y[:n], pr.Shank[:n], pr.ChanMap[:n], n+1
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Units, cfg.Seed, cfg.Probe = 10, 8, 5, pr
	cfg.RateMin, cfg.RateMax = 20, 40
	rec, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pc := pipeline.DefaultConfig()
	pc.NBlocks = 1
	p, err := pipeline.New(nil, rec, rec.Probe(), pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	opt := pipeline.DefaultSortOptions()
	opt.Match.ThLearned = 7
	r, err := p.Sort(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if r.Info.Motion == nil {
		t.Fatal("no motion estimate with nblocks 1")
	}
	return r
}

// TestSortFolderOps writes a sort folder and reads its ops.npy back with
// a pickle reader: it holds the motion estimate (dshift as a [windows,
// blocks] array, yblk, mean_drift) and what Kilosort4's
// kilosort.io.load_ops reads (is_tensor, naming arrays only;
// preprocessing, a dict of whiten_mat and hp_filter; settings, a dict),
// besides the keys Phy and SpikeInterface read. kept_spikes.npy marks as
// many spikes as spike_times.npy holds. Without motion, dshift is None.
func TestSortFolderOps(t *testing.T) {
	if testing.Short() {
		t.Skip("a sort: skipped in -short mode")
	}
	r := sortResult(t)
	out := filepath.Join(t.TempDir(), "sort")
	w, err := CreateSort(out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	ops, err := readOpsNPY(filepath.Join(out, OpsFile))
	if err != nil {
		t.Fatal(err)
	}
	m, C := r.Info.Motion, r.Info.Probe.Len()
	checkArray(t, ops, "dshift", "f8", []int{m.Windows, m.Blocks})
	if got := f64s(ops["dshift"].(*pyArray)); !slices.Equal(got, m.Dshift) {
		t.Errorf("dshift %v, want %v", got, m.Dshift)
	}
	checkArray(t, ops, "yblk", "f8", []int{len(m.Yblk)})
	mean := 0.0
	for w := range m.Windows {
		mean += math.Abs(m.Dshift[w*m.Blocks])
	}
	if got, ok := ops["mean_drift"].(float64); !ok || got != mean/float64(m.Windows) {
		t.Errorf("mean_drift %v, want %v", ops["mean_drift"], mean/float64(m.Windows))
	}
	tensors, ok := ops["is_tensor"].([]any)
	if !ok || len(tensors) == 0 {
		t.Fatalf("is_tensor %#v: want a list of keys", ops["is_tensor"])
	}
	for _, k := range tensors {
		if a, ok := ops[k.(string)].(*pyArray); !ok || a.raw == nil {
			t.Errorf("is_tensor names %v, which is a %T, not a numeric array", k, ops[k.(string)])
		}
	}
	pre, ok := ops["preprocessing"].(map[string]any)
	if !ok || len(pre) != 2 {
		t.Fatalf("preprocessing %#v: want a dict of whiten_mat and hp_filter", ops["preprocessing"])
	}
	checkArray(t, pre, "whiten_mat", "f4", []int{C, C})
	checkArray(t, pre, "hp_filter", "f4", []int{preprocess.TapsLen})
	dense, _, err := pipeline.WhiteningMatrices(r.Info.Whitening)
	if err != nil {
		t.Fatal(err)
	}
	if got := f32s(t, out, "whitening_mat.npy"); !slices.Equal(got, dense) || !slices.Equal(f32raw(pre["whiten_mat"].(*pyArray)), dense) {
		t.Error("ops' whiten_mat differs from whitening_mat.npy")
	}
	if s, ok := ops["settings"].(map[string]any); !ok || s["nblocks"] != int64(1) || s["n_chan_bin"] != int64(C+1) {
		t.Errorf("settings %#v: want a dict with nblocks 1 and n_chan_bin %d", ops["settings"], C+1)
	}
	n := len(i64s(t, out, "spike_times.npy"))
	for k, want := range map[string]any{"n_spikes": int64(n), "nt0min": int64(r.Info.Detect.NT0Min), "Nchan": int64(C), "data_dtype": "int16"} {
		if ops[k] != want {
			t.Errorf("ops[%q] = %#v, want %#v", k, ops[k], want)
		}
	}
	checkArray(t, ops, "chanMap", "i8", []int{C})
	loadOpsLikeKilosort(t, filepath.Join(out, OpsFile))
	kept := 0
	for _, b := range data(t, out, "kept_spikes.npy") {
		kept += int(b)
	}
	if kept != n || n == 0 {
		t.Errorf("kept_spikes marks %d spikes, spike_times holds %d", kept, n)
	}

	still := *r.Info
	still.Motion = nil
	rs := *r
	rs.Info = &still
	ops, err = sortOps(&rs, nil, "int16")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := ops["dshift"]; !ok || v != nil {
		t.Errorf("without motion dshift is %#v, want None", v)
	}
	if _, ok := ops["yblk"]; ok {
		t.Error("without motion ops has yblk")
	}
}

// loadOpsScript loads an ops.npy with numpy and makes the accesses of
// Kilosort4's kilosort.io.load_ops, with numpy arrays where it makes
// tensors (torch.from_numpy takes numeric arrays only).
const loadOpsScript = `import sys, numpy as np
ops = np.load(sys.argv[1], allow_pickle=True).item()
def tensor(v):
    assert isinstance(v, np.ndarray) and v.dtype.kind in 'fiub', (type(v), getattr(v, 'dtype', None))
    return np.array(v)
for k, v in ops.items():
    if k in ops['is_tensor']:
        ops[k] = tensor(v)
ops['preprocessing'] = {k: tensor(v) for k, v in ops['preprocessing'].items()}
assert ops['dshift'].ndim == 2 and isinstance(ops['settings'], dict)
print(sorted(ops['is_tensor']), ops['dshift'].shape, {k: v.shape for k, v in ops['preprocessing'].items()})
`

// loadOpsLikeKilosort runs loadOpsScript on the ops.npy at path where a
// python3 with numpy is installed (Debian's /usr/bin/python3).
func loadOpsLikeKilosort(t *testing.T, path string) {
	t.Helper()
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import numpy").Run() != nil {
		t.Log("no python3 with numpy at " + py + ": ops.npy not loaded with numpy")
		return
	}
	out, err := exec.Command(py, "-c", loadOpsScript, path).CombinedOutput()
	if err != nil {
		t.Errorf("load_ops' accesses fail on %s: %v\n%s", path, err, out)
	}
	t.Logf("numpy: %s", out)
}

// checkArray checks that d[key] is a numpy array of dtype and shape.
func checkArray(t *testing.T, d map[string]any, key, dtype string, shape []int) {
	t.Helper()
	a, ok := d[key].(*pyArray)
	if !ok {
		t.Errorf("%s is a %T, not an array", key, d[key])
		return
	}
	size := 1
	for _, s := range shape {
		size *= s
	}
	width := map[string]int{"f8": 8, "i8": 8, "f4": 4}[dtype]
	if a.dtype != dtype || !slices.Equal(a.shape, shape) || len(a.raw) != size*width {
		t.Errorf("%s: dtype %s shape %v, %d bytes; want %s %v", key, a.dtype, a.shape, len(a.raw), dtype, shape)
	}
}

// f64s returns the float64 values of a.
func f64s(a *pyArray) []float64 {
	out := make([]float64, len(a.raw)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(a.raw[8*i:]))
	}
	return out
}

// f32raw returns the float32 values of a.
func f32raw(a *pyArray) []float32 {
	out := make([]float32, len(a.raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(a.raw[4*i:]))
	}
	return out
}
