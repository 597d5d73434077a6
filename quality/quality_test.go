package quality

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"dspk/export"
)

const (
	testFS  = 30000.0
	testNT  = 90
	testNC  = 16
	testDur = 600.0
)

// gauss is a Gaussian bump of height a at sample c, width s samples.
func gauss(i int, a, c, s float64) float64 {
	d := (float64(i) - c) / s
	return a * math.Exp(-0.5*d*d)
}

// shapes are the main-channel waveforms of the test units.
var shapes = map[string]func(i int) float64{
	// A somatic spike: a trough then a smaller, wider repolarisation peak.
	"somatic": func(i int) float64 { return gauss(i, -100, 30, 3) + gauss(i, 25, 45, 7) },
	// Noise: an oscillation with many peaks and troughs.
	"noise": func(i int) float64 {
		return 60 * math.Sin(float64(i)*2*math.Pi/9) * math.Exp(-math.Abs(float64(i)-45)/40)
	},
	// Axonal: a large narrow peak before a narrow trough.
	"axonal": func(i int) float64 { return gauss(i, 120, 26, 1.5) + gauss(i, -100, 31, 1.5) },
}

// testTemplate spreads the main-channel shape over a line of channels
// 20 µm apart, decaying as exp(−0.03·distance) from channel 5 (noise:
// the same on every channel).
func testTemplate(shape string) []float32 {
	t := make([]float32, testNT*testNC)
	for c := range testNC {
		g := math.Exp(-0.03 * math.Abs(float64(c-5)*20))
		if shape == "noise" {
			g = 1
		}
		for i := range testNT {
			t[i*testNC+c] = float32(g * shapes[shape](i))
		}
	}
	return t
}

// poissonTrain is a Poisson train of the given rate in [t0, t1) seconds
// with a 2-ms dead time.
func poissonTrain(r *rand.Rand, rate, t0, t1 float64) []int64 {
	var out []int64
	t := t0
	for {
		t += r.ExpFloat64()/rate + 0.002
		if t >= t1 {
			return out
		}
		out = append(out, int64(t*testFS))
	}
}

// labelInput builds four units: 0 somatic and clean, 1 noise-shaped, 2
// somatic but present only in the first minute, 3 axonal.
func labelInput() Input {
	r := rand.New(rand.NewPCG(1, 2))
	in := Input{SampleRate: testFS, NumSamples: int64(testDur * testFS), TemplateSamples: testNT, Channels: testNC}
	trains := [][]int64{
		poissonTrain(r, 2, 0, testDur), poissonTrain(r, 2, 0, testDur),
		poissonTrain(r, 5, 0, 60), poissonTrain(r, 2, 0, testDur),
	}
	for u, tr := range trains {
		for _, t := range tr {
			in.SpikeTimes = append(in.SpikeTimes, t)
			in.SpikeUnits = append(in.SpikeUnits, int32(u))
			in.Amplitudes = append(in.Amplitudes, float32(-100*math.Exp(0.2*r.NormFloat64())))
			in.SpikeDepths = append(in.SpikeDepths, float32(100+2*r.NormFloat64()))
		}
	}
	for _, s := range []string{"somatic", "noise", "somatic", "axonal"} {
		in.Templates = append(in.Templates, testTemplate(s)...)
	}
	for c := range testNC {
		in.ChannelPositions = append(in.ChannelPositions, 0, float64(c)*20)
		in.NoiseLevels = append(in.NoiseLevels, 5)
	}
	return in
}

func TestLabels(t *testing.T) {
	tab, err := Compute(labelInput(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"good", "noise", "mua", "non_soma"}
	if !slices.Equal(tab.Labels, want) {
		for _, c := range tab.Columns {
			t.Logf("%-32s %v", c.Name, c.Values)
		}
		t.Fatalf("labels %v, want %v", tab.Labels, want)
	}
	if v := tab.Column("presence_ratio")[2]; v != 0.1 {
		t.Errorf("presence_ratio of the early unit %v, want 0.1", v)
	}
	if v := tab.Column("num_negative_peaks")[1]; v <= 1 {
		t.Errorf("noise template has %v troughs", v)
	}
	if v := tab.Column("exp_decay")[0]; math.Abs(v-0.03) > 0.003 {
		t.Errorf("exp_decay %v, want ≈ 0.03 /µm", v)
	}
}

func TestLabelsWithoutTemplates(t *testing.T) {
	in := labelInput()
	in.Templates, in.NoiseLevels = nil, nil
	tab, err := Compute(in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"good", "good", "mua", "good"}; !slices.Equal(tab.Labels, want) {
		t.Fatalf("labels %v, want %v", tab.Labels, want)
	}
	for _, name := range []string{"snr", "sd_ratio", "exp_decay", "num_positive_peaks", "isolation_distance"} {
		if v := tab.Column(name); !slices.ContainsFunc(v, math.IsNaN) {
			t.Errorf("%s = %v without its input, want NaN", name, v)
		}
	}
}

func TestFewSpikes(t *testing.T) {
	in := Input{
		SampleRate: testFS, NumSamples: int64(testDur * testFS),
		SpikeTimes: []int64{1000}, SpikeUnits: []int32{7},
		Amplitudes: []float32{-50}, SpikeDepths: []float32{10},
		UnitIDs: []int32{3, 7},
	}
	tab, err := Compute(in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{
		"num_spikes":           {0, 1},
		"firing_rate":          {nan, 1 / testDur},
		"presence_ratio":       {nan, 0.1},
		"isi_violations_ratio": {nan, 0},
		"isi_violations_count": {-1, 0},
		"rp_contamination":     {nan, nan},
		"rp_violations":        {-1, 0},
		"sliding_rp_violation": {nan, nan},
		"firing_range":         {nan, 0},
		"amplitude_cutoff":     {nan, nan},
		"amplitude_median":     {nan, -50},
		"amplitude_cv_median":  {nan, nan},
		"drift_ptp":            {nan, nan},
	}
	for name, w := range want {
		got := tab.Column(name)
		for i := range 2 {
			if !(got[i] == w[i] || math.IsNaN(got[i]) && math.IsNaN(w[i])) {
				t.Errorf("%s of unit %d = %v, want %v", name, tab.UnitIDs[i], got[i], w[i])
			}
		}
	}
}

func TestShortRecording(t *testing.T) {
	in := Input{SampleRate: testFS, NumSamples: int64(30 * testFS), SpikeTimes: []int64{10, 5000, 90000}, SpikeUnits: []int32{0, 0, 0}}
	tab, err := Compute(in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"presence_ratio"} {
		if v := tab.Column(name)[0]; !math.IsNaN(v) {
			t.Errorf("%s = %v on a 30-s recording, want NaN", name, v)
		}
	}
}

func TestInputChecks(t *testing.T) {
	good := Input{SampleRate: testFS, NumSamples: 100, SpikeTimes: []int64{1, 2}, SpikeUnits: []int32{0, 0}}
	for name, mod := range map[string]func(*Input){
		"rate":        func(in *Input) { in.SampleRate = 0 },
		"samples":     func(in *Input) { in.NumSamples = 0 },
		"units":       func(in *Input) { in.SpikeUnits = in.SpikeUnits[:1] },
		"amplitudes":  func(in *Input) { in.Amplitudes = []float32{1} },
		"templates":   func(in *Input) { in.Templates, in.TemplateSamples, in.Channels = make([]float32, 5), 2, 2 },
		"pc features": func(in *Input) { in.PCFeatures, in.NPC, in.NFeat = make([]float32, 3), 1, 1 },
		"noise":       func(in *Input) { in.NoiseLevels = []float32{1} },
	} {
		in := good
		mod(&in)
		if _, err := Compute(in, DefaultOptions()); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Compute(good, DefaultOptions()); err != nil {
		t.Errorf("valid input: %v", err)
	}
	empty := Input{SampleRate: testFS, NumSamples: 100}
	if tab, err := Compute(empty, DefaultOptions()); err != nil || len(tab.UnitIDs) != 0 {
		t.Errorf("no spikes: %v units, %v", tab, err)
	}
}

// TestDeterministic checks that the number of cores does not change a
// bit of the result.
func TestDeterministic(t *testing.T) {
	in := labelInput()
	addPCs(&in)
	a, err := Compute(in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	old := runtime.GOMAXPROCS(1)
	b, err := Compute(in, DefaultOptions())
	runtime.GOMAXPROCS(old)
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range a.Columns {
		for i, v := range c.Values {
			w := b.Columns[k].Values[i]
			if math.Float64bits(v) != math.Float64bits(w) && !(math.IsNaN(v) && math.IsNaN(w)) {
				t.Errorf("%s[%d]: %v with all cores, %v with one", c.Name, i, v, w)
			}
		}
	}
	if v := a.Column("nn_hit_rate"); slices.ContainsFunc(v, math.IsNaN) {
		t.Errorf("nn_hit_rate %v", v)
	}
	// A unit without spikes and without a feature row gets NaN.
	in.UnitIDs = []int32{0, 1, 2, 3, 9}
	in.Templates = append(in.Templates, make([]float32, testNT*testNC)...)
	c, err := Compute(in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Column("silhouette")[4]; !math.IsNaN(v) || c.Labels[4] != "noise" {
		t.Errorf("unit without spikes: silhouette %v, label %s", v, c.Labels[4])
	}
}

// addPCs gives every spike 3 PCs on its unit's 4 feature channels.
func addPCs(in *Input) {
	r := rand.New(rand.NewPCG(3, 4))
	in.NPC, in.NFeat = 3, 4
	for u := range 4 {
		in.PCFeatureInd = append(in.PCFeatureInd, 4, 5, 6, int32(u))
	}
	for _, u := range in.SpikeUnits {
		for k := range 12 {
			in.PCFeatures = append(in.PCFeatures, float32(float64(int(u)*(k%5))+r.NormFloat64()))
		}
	}
}

func TestWriteTSV(t *testing.T) {
	dir := t.TempDir()
	tab := &Table{
		UnitIDs: []int32{0, 4},
		Columns: []Column{{Name: "num_spikes", Values: []float64{3, 0}, Integer: true}, {Name: "snr", Values: []float64{2.5, nan}}},
		Labels:  []string{"good", "mua"},
	}
	if err := WriteTSV(dir, tab); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"cluster_num_spikes.tsv": "cluster_id\tnum_spikes\n0\t3\n4\t0\n",
		"cluster_snr.tsv":        "cluster_id\tsnr\n0\t2.5\n4\tnan\n",
		LabelFile:                "cluster_id\tbc_label\n0\tgood\n4\tmua\n",
		WideFile:                 "unit_id\tnum_spikes\tsnr\tbc_label\n0\t3\t2.5\tgood\n4\t0\tnan\tmua\n",
	} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", name, b, err, want)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
}

// TestReadSortFolder writes a small Kilosort folder and checks that the
// metrics read from it equal those of the arrays it was written from.
func TestReadSortFolder(t *testing.T) {
	in := labelInput()
	addPCs(&in)
	dir := t.TempDir()
	n, N := len(in.SpikeTimes), 4
	winv := make([]float32, testNC*testNC)
	for c := range testNC {
		winv[c*testNC+c] = 2
	}
	half := make([]float32, len(in.Templates))
	for i, v := range in.Templates {
		half[i] = v / 2
	}
	// amplitudes.npy holds ‖tF‖: each spike as large as its whitened
	// template, so that its amplitude is the template's extremum.
	norms := make([]float64, N)
	for u := range N {
		for _, v := range half[u*testNT*testNC : (u+1)*testNT*testNC] {
			norms[u] += float64(v) * float64(v)
		}
		norms[u] = math.Sqrt(norms[u])
	}
	amps := make([]float32, n)
	for i := range amps {
		amps[i] = float32(norms[in.SpikeUnits[i]])
	}
	for name, a := range map[string]struct {
		shape []int
		data  any
	}{
		"spike_times.npy":       {[]int{n}, in.SpikeTimes},
		"spike_clusters.npy":    {[]int{n}, in.SpikeUnits},
		"spike_templates.npy":   {[]int{n}, in.SpikeUnits},
		"amplitudes.npy":        {[]int{n}, amps},
		"templates.npy":         {[]int{N, testNT, testNC}, half},
		"whitening_mat_inv.npy": {[]int{testNC, testNC}, winv},
		"pc_features.npy":       {[]int{n, 3, 4}, in.PCFeatures},
		"pc_feature_ind.npy":    {[]int{N, 4}, in.PCFeatureInd},
		"channel_positions.npy": {[]int{testNC, 2}, in.ChannelPositions},
	} {
		if err := export.WriteNPYFile(filepath.Join(dir, name), a.shape, a.data); err != nil {
			t.Fatal(err)
		}
	}
	params := "dat_path = 'missing.bin'\nn_channels_dat = 16\ndtype = 'int16'\noffset = 0\nsample_rate = 30000.0\nhp_filtered = False\n"
	if err := os.WriteFile(filepath.Join(dir, "params.py"), []byte(params), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSortFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.SampleRate != testFS || !slices.Equal(got.UnitIDs, []int32{0, 1, 2, 3}) {
		t.Fatalf("rate %v, units %v", got.SampleRate, got.UnitIDs)
	}
	for i, v := range got.Templates {
		if math.Abs(float64(v-in.Templates[i])) > 1e-6 {
			t.Fatalf("template value %d: %v, want %v (unwhitened)", i, v, in.Templates[i])
		}
	}
	last := slices.Max(in.SpikeTimes) + 1
	if got.NumSamples != last {
		t.Errorf("%d samples, want %d (last spike + 1)", got.NumSamples, last)
	}
	// Amplitude = ‖tF‖/‖template‖ (1 here) × the template's signed
	// extremum on channel 5.
	if a := got.Amplitudes[0]; math.Abs(float64(a)+97.5) > 0.1 {
		t.Errorf("first amplitude %v, want ≈ −97.5", a)
	}
	got.NoiseLevels = in.NoiseLevels
	tab, err := Compute(*got, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"good", "noise", "mua", "non_soma"}; !slices.Equal(tab.Labels, want) {
		t.Errorf("labels %v, want %v", tab.Labels, want)
	}
}
