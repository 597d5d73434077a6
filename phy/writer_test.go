package phy

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dspk/export"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
	"dspk/sim"
)

// run detects rec into the folder out with a fresh pipeline.
func run(t *testing.T, rec recording.Recording, pr *probe.Probe, cfg pipeline.Config, out string, opt Options) (*pipeline.Summary, error) {
	t.Helper()
	p, err := pipeline.New(nil, rec, pr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Create(out, opt)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	return p.Run(context.Background(), w, pipeline.RunOptions{})
}

// smallProbe is the first 32 sites of Neuropixels 1.0 in a 33-row file,
// for tests that need whole runs but not a whole probe.
func smallProbe() *probe.Probe {
	np1 := probe.NP1()
	const n = 32
	p := &probe.Probe{Name: "np1-32", X: np1.X[:n], Y: np1.Y[:n], Shank: np1.Shank[:n], NChanFile: n + 1}
	for i := range n {
		p.ChanMap = append(p.ChanMap, i)
	}
	return p
}

// TestSecondRunIdentical checks that two runs write identical files
// (dspk.json differs only in timings and is left out).
func TestSecondRunIdentical(t *testing.T) {
	rec := simulate(t, 2.1, 6, smallProbe())
	dir := t.TempDir()
	var outs []string
	for i := range 2 {
		out := filepath.Join(dir, string(rune('a'+i)))
		if _, err := run(t, rec, rec.Probe(), shortConfig(), out, Options{}); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	entries, err := os.ReadDir(outs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 25 {
		t.Fatalf("only %d files written", len(entries))
	}
	for _, e := range entries {
		if e.Name() == "dspk.json" || e.Name() == export.ManifestName {
			continue
		}
		a, _ := os.ReadFile(filepath.Join(outs[0], e.Name()))
		b, err := os.ReadFile(filepath.Join(outs[1], e.Name()))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs (%v)", e.Name(), err)
		}
	}
}

// TestBadInputLeavesNothing checks that failing runs leave no folder,
// temporary or final, and keep an existing one intact; so does a failing
// Extra hook.
func TestBadInputLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	// Noise-free data: no clips to learn templates from.
	rec := recording.NewMemory("flat.bin", make([]int16, 33*40000), 33, 30000, nil)
	out := filepath.Join(dir, "det")
	_, err := run(t, rec, smallProbe(), shortConfig(), out, Options{})
	if err == nil || !strings.Contains(err.Error(), "flat.bin") {
		t.Fatalf("flat recording: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("failed run left %v", left)
	}
	// An existing folder is refused before any work and left intact.
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, "keep"), []byte("x"), 0o644)
	if _, err := Create(out, Options{}); err == nil || !strings.Contains(err.Error(), "overwrite") {
		t.Fatalf("existing folder: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "keep")); err != nil || string(b) != "x" {
		t.Fatal("existing folder damaged")
	}
	// A run whose last step fails leaves nothing either.
	srec := simulate(t, 2.1, 7, smallProbe())
	out2 := filepath.Join(dir, "det2")
	_, err = run(t, srec, srec.Probe(), shortConfig(), out2, Options{Extra: func(string) error { return errors.New("no plot") }})
	if err == nil || !strings.Contains(err.Error(), "no plot") {
		t.Fatalf("failing Extra: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Fatalf("refused runs left %v", left)
	}
}

// TestFewChannels runs the whole detection on a tetrode-like probe, where
// Kilosort4's 10 nearest channels are clipped to the 4 there are: the
// per-spike and per-cluster arrays have 4 channel columns.
func TestFewChannels(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seconds = 6
	cfg.Seed = 2
	cfg.Units = 30
	cfg.Probe = &probe.Probe{Name: "tetrode", X: []float64{0, 10, 0, 10}, Y: []float64{0, 0, 10, 10},
		Shank: []int{0, 0, 0, 0}, ChanMap: []int{0, 1, 2, 3}, NChanFile: 5}
	rec, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := shortConfig()
	c.NSkip = 1
	dir, tw := detectFolder(t, rec, rec.Probe(), c)
	checkFolder(t, dir, tw)
	shape(t, dir, "spike_channels.npy", "<i4", tw.spikes.Len(), 4)
}

// TestSimilarityPlain compares similarity with a plain float64
// computation on dense templates, on random features of odd sizes with
// overlapping and disjoint channel sets.
func TestSimilarityPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range []struct{ K, C, nc, p, nt int }{{1, 3, 3, 1, 1}, {7, 13, 4, 3, 11}, {12, 31, 5, 2, 61}} {
		wpca := make([]float32, sz.p*sz.nt)
		for i := range wpca {
			wpca[i] = float32(rng.NormFloat64())
		}
		w := make([][]float64, sz.K)
		chans := make([][]int32, sz.K)
		dense := make([][]float32, sz.K)
		for k := range sz.K {
			w[k] = make([]float64, sz.nc*sz.p)
			for i := range w[k] {
				w[k][i] = rng.NormFloat64()
			}
			start := rng.IntN(sz.C - sz.nc + 1)
			for j := range sz.nc {
				chans[k] = append(chans[k], int32(start+j))
			}
			dense[k] = make([]float32, sz.nt*sz.C)
			for i := range dense[k] {
				dense[k][i] = float32(math.NaN()) // denseTemplate must overwrite all
			}
			denseTemplate(dense[k], w[k], chans[k], wpca, sz.p, sz.nt, sz.C)
		}
		for k := range sz.K {
			for i, v := range dense[k] {
				c := i % sz.C
				if on := slices.Contains(chans[k], int32(c)); math.IsNaN(float64(v)) || !on && v != 0 {
					t.Fatalf("%+v: template %d holds %g on channel %d (its channels %v)", sz, k, v, c, chans[k])
				}
			}
		}
		got := similarity(w, chans, wpca, sz.p, sz.nt, sz.C)
		for a := range sz.K {
			for b := range sz.K {
				var na, nb float64
				for i := range dense[a] {
					na += float64(dense[a][i]) * float64(dense[a][i])
					nb += float64(dense[b][i]) * float64(dense[b][i])
				}
				best := math.Inf(-1)
				for tau := -(sz.nt - 1); tau < sz.nt; tau++ {
					var s float64
					for tt := range sz.nt {
						if tt+tau < 0 || tt+tau >= sz.nt {
							continue
						}
						for c := range sz.C {
							s += float64(dense[a][tt*sz.C+c]) * float64(dense[b][(tt+tau)*sz.C+c])
						}
					}
					best = max(best, s)
				}
				want := best / math.Sqrt(na*nb)
				if !slices.ContainsFunc(chans[a], func(c int32) bool { return slices.Contains(chans[b], c) }) {
					want = 0
				}
				if d := math.Abs(float64(got[a*sz.K+b]) - want); !(d <= 1e-5) {
					t.Fatalf("%+v: similarity[%d, %d] = %g, plain %g", sz, a, b, got[a*sz.K+b], want)
				}
			}
		}
	}
}

// TestWriterMisuse checks the errors of calls out of order or of
// mismatched spikes.
func TestWriterMisuse(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "det"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.End(&pipeline.Summary{}); err == nil {
		t.Error("End before Begin accepted")
	}
	if err := w.Close(); err != nil {
		t.Error(err)
	}
}
