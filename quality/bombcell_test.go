package quality

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"dspk/export"
)

// trainWith returns n spike times spread evenly over dur seconds (about
// dur/n apart, far beyond any refractory period) with extra spikes
// closeISI samples after the first len(closeISI) of them.
func trainWith(n int, dur float64, closeISI ...int64) []int64 {
	m := n - len(closeISI)
	step := int64(dur * testFS / float64(m))
	var t []int64
	for k := range m {
		t = append(t, int64(k)*step+10)
		if k < len(closeISI) {
			t = append(t, int64(k)*step+10+closeISI[k])
		}
	}
	return t
}

// TestFractionRPVs checks fraction_rpvs against Bombcell's Hill
// contamination (tauR 2 ms, tauC 0.1 ms), the references computed by
// Bombcell's own rule (numpy.roots of k·f² − k·f + violations·T, the
// smaller root, the complex case capped at 1).
func TestFractionRPVs(t *testing.T) {
	opt := DefaultOptions()
	T := int64(120 * testFS)
	for _, c := range []struct {
		name string
		t    []int64
		T    int64
		want float64
	}{
		{"one double detection in 708 spikes", trainWith(708, 120, 8), T, 0.06756345458508108},
		{"two in 1086", trainWith(1086, 120, 9, 10), T, 0.05677438079932904},
		{"three in 635", trainWith(635, 120, 11, 12, 12), T, 0.3773127484892145},
		{"one in 427", trainWith(427, 120, 8), T, 0.22286756204995228},
		{"two in 400: no contamination explains them", trainWith(400, 120, 8, 8), T, 1},
		{"an ISI of exactly tauR counts", trainWith(3000, 60, 60, 60, 60, 60, 60), int64(60 * testFS), 0.008850256871248486},
		{"ISIs beyond tauR and within tauC do not", trainWith(3000, 60, 61, 2, 1, 0), int64(60 * testFS), 0},
		{"one spike", []int64{5}, T, math.NaN()},
	} {
		got := fractionRPVs(c.t, c.T, testFS, opt)
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: fraction_rpvs %v, want %v", c.name, got, c.want)
		}
	}
}

// TestBaselineFraction checks Bombcell's baseline fraction on a
// 61-sample template whose first ten samples reach a fifth of its
// trough on its largest channel, and that a channel of larger |value|
// but smaller peak-to-peak range is not the one measured.
func TestBaselineFraction(t *testing.T) {
	const nt, nc = 61, 3
	tmpl := make([]float32, nt*nc)
	for s := range nt {
		v := gauss(s, -100, 20, 2) + gauss(s, 30, 30, 4)
		if s == 3 {
			v = 20
		}
		tmpl[s*nc+1] = float32(v)
		tmpl[s*nc+2] = float32(-105 + 0.1*float64(s)) // a large offset, a small range
	}
	peak := 0.0
	for s := range nt {
		peak = max(peak, math.Abs(float64(tmpl[s*nc+1])))
	}
	tm := &templateInfo{nt: nt, nc: nc, data: tmpl}
	if got, want := tm.baselineFraction(0), 20/peak; peak < 98 || math.Abs(got-want) > 1e-12 {
		t.Errorf("baseline fraction %v, want %v", got, want)
	}
}

// TestReadSortFolderScales checks that the noise and gain files of a
// folder set the noise levels and put templates, amplitudes and noise in
// µV.
func TestReadSortFolderScales(t *testing.T) {
	dir := t.TempDir()
	const nt, C = 61, 4
	tmpl := make([]float32, nt*C)
	for s := range nt {
		tmpl[s*C+2] = float32(gauss(s, -50, 20, 2))
	}
	var norm float64
	for _, v := range tmpl {
		norm += float64(v) * float64(v)
	}
	norm = math.Sqrt(norm)
	noise := []float32{10, 11, 12, 13}
	gains := []float32{2, 2, 3, 3}
	for name, a := range map[string]struct {
		shape []int
		data  any
	}{
		"spike_times.npy":       {[]int{2}, []int64{100, 5000}},
		"spike_clusters.npy":    {[]int{2}, []int32{0, 0}},
		"amplitudes.npy":        {[]int{2}, []float32{float32(norm), float32(norm)}},
		"templates.npy":         {[]int{1, nt, C}, tmpl},
		"channel_positions.npy": {[]int{C, 2}, make([]float32, 2*C)},
		NoiseFile:               {[]int{C}, noise},
		GainFile:                {[]int{C}, gains},
	} {
		if err := export.WriteNPYFile(filepath.Join(dir, name), a.shape, a.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "params.py"), []byte("sample_rate = 30000.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := ReadSortFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !in.Microvolts || in.NoiseSource != NoiseMAD || !slices.Equal(in.NoiseLevels, []float32{20, 22, 36, 39}) {
		t.Errorf("µV %v, source %q, noise %v; want true, %q, [20 22 36 39]", in.Microvolts, in.NoiseSource, in.NoiseLevels, NoiseMAD)
	}
	// ‖tF‖ = ‖template‖: each spike is its template, −50 counts = −150 µV.
	if a := in.Amplitudes[0]; math.Abs(float64(a)+150) > 1e-3 {
		t.Errorf("amplitude %v, want −150 µV", a)
	}
	tab, err := Compute(*in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if snr := tab.Column("snr")[0]; math.Abs(snr-50.0/12) > 1e-6 {
		t.Errorf("snr %v, want %v (gains cancel)", snr, 50.0/12)
	}
	// Without the files the whitening's levels stand (none here: no
	// whitening_mat_inv.npy), and the data stay in counts.
	for _, f := range []string{NoiseFile, GainFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	in, err = ReadSortFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if in.Microvolts || in.NoiseSource != NoiseWhitening || in.NoiseLevels != nil {
		t.Errorf("without the files: µV %v, source %q, noise %v", in.Microvolts, in.NoiseSource, in.NoiseLevels)
	}
}
