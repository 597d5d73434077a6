package pipeline

import (
	"context"
	"math"
	"sort"
	"strings"
	"testing"

	"dspk/probe"
	"dspk/recording"
	"dspk/sim"
)

// simRecording returns a short simulated Neuropixels 1.0 recording.
func simRecording(t *testing.T, seconds float64, seed uint64) *sim.Recording {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seconds = seconds
	cfg.Seed = seed
	r, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWhiteningWhitensNoise checks pass 1 end to end: after whitening, the
// noise of every channel has unit robust SD (Kilosort4's thresholds are in
// whitened SD) and neighbouring channels are nearly uncorrelated.
func TestWhiteningWhitensNoise(t *testing.T) {
	rec := simRecording(t, 2.2, 3)
	cfg := DefaultConfig()
	cfg.BatchSize = 20000
	cfg.NSkip = 1
	p, err := New(nil, rec, rec.Probe(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.StatWindows(); len(got) != p.Schedule().Windows-1 {
		t.Fatalf("stat windows %v of %d", got, p.Schedule().Windows)
	}
	w, cc, _, err := p.Whitening(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	C := rec.Probe().Len()
	if w.C != C || len(cc) != C*C {
		t.Fatalf("whitening of %d channels, cc %d", w.C, len(cc))
	}
	var sds []float64
	var corr float64
	var ncorr int
	err = p.Whitened(context.Background(), "test", w, func(win recording.Window, x []float32) error {
		T := p.Schedule().Len()
		for c := 0; c < C; c++ {
			row := x[c*T+cfg.NT : c*T+cfg.NT+win.Owned()]
			sds = append(sds, robustSD(row))
		}
		for c := 0; c+2 < C; c += 7 {
			a := x[c*T+cfg.NT : c*T+cfg.NT+win.Owned()]
			b := x[(c+2)*T+cfg.NT : (c+2)*T+cfg.NT+win.Owned()]
			corr += pearson(a, b)
			ncorr++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Float64s(sds)
	med := sds[len(sds)/2]
	if med < 0.85 || med > 1.15 {
		t.Errorf("median robust SD of whitened channels %.3f, want ≈ 1", med)
	}
	if m := corr / float64(ncorr); math.Abs(m) > 0.1 {
		t.Errorf("mean correlation of channels two apart %.3f after whitening, want ≈ 0", m)
	}
}

func robustSD(x []float32) float64 {
	a := make([]float64, len(x))
	for i, v := range x {
		a[i] = math.Abs(float64(v))
	}
	sort.Float64s(a)
	return a[len(a)/2] / 0.6744897501960817
}

func pearson(a, b []float32) float64 {
	var sa, sb, saa, sbb, sab float64
	n := float64(len(a))
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		sa += x
		sb += y
		saa += x * x
		sbb += y * y
		sab += x * y
	}
	return (sab/n - sa/n*sb/n) / math.Sqrt((saa/n-sa*sa/n/n)*(sbb/n-sb*sb/n/n))
}

func TestNewRefusesBadInput(t *testing.T) {
	rec := recording.NewMemory("short.bin", make([]int16, 385*1000), 385, 30000, nil)
	if _, err := New(nil, rec, probe.NP1(), DefaultConfig()); err == nil || !strings.Contains(err.Error(), "short.bin") ||
		!strings.Contains(err.Error(), "two") {
		t.Errorf("one-window recording: %v", err)
	}
	rec = recording.NewMemory("ok.bin", make([]int16, 64*130000), 64, 30000, nil)
	if _, err := New(nil, rec, probe.NP1(), DefaultConfig()); err == nil || !strings.Contains(err.Error(), "385") {
		t.Errorf("probe/channel mismatch: %v", err)
	}
}
