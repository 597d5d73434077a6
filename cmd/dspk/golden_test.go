package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"dspk/probe"
	"dspk/sim"
)

// The golden test pins the CPU detection path's results: it runs
// `dspk detect -device cpu` on a small simulation committed under
// testdata/golden/rec (32 sites of Neuropixels 1.0 geometry, 4.5 s, three
// windows) and compares every array the run writes that carries a result
// (spikes, features, positions, whitening matrix, templates) byte for byte
// with the copies in testdata/golden/want, written before any refactoring
// or vectorisation of that path. A change that moves one bit of one spike
// fails it. Regenerate (only on purpose, with a reason in the commit) with
//
//	DSPK_GOLDEN_UPDATE=1 go test ./cmd/dspk -run TestGolden
const (
	goldenRec  = "testdata/golden/rec"
	goldenWant = "testdata/golden/want"
)

// goldenRuns are the command lines of the golden test: the default
// settings and one that learns templates from every window with a lower
// threshold (more spikes, more template clips).
var goldenRuns = map[string][]string{
	"default": {"-device", "cpu"},
	"nskip1":  {"-device", "cpu", "-nskip", "1", "-threshold", "7"},
}

// goldenProbe is the first 32 sites of Neuropixels 1.0 in a 33-row file
// whose last row is the sync channel.
func goldenProbe() *probe.Probe {
	np1 := probe.NP1()
	const n = 32
	p := &probe.Probe{Name: "golden32", X: np1.X[:n], Y: np1.Y[:n], Shank: np1.Shank[:n], NChanFile: n + 1}
	for i := range n {
		p.ChanMap = append(p.ChanMap, i)
	}
	return p
}

func TestGolden(t *testing.T) {
	bin := filepath.Join(goldenRec, simBase+".imec0.ap.bin")
	if os.Getenv("DSPK_GOLDEN_UPDATE") != "" {
		writeGoldenRecording(t)
	}
	for name, flags := range goldenRuns {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "det")
			args := append([]string{"detect", "-o", out}, flags...)
			if code, _, stderr := dspk(t, append(args, bin)...); code != 0 {
				t.Fatalf("detect: exit %d: %s", code, stderr)
			}
			want := filepath.Join(goldenWant, name)
			if os.Getenv("DSPK_GOLDEN_UPDATE") != "" {
				updateGolden(t, out, want)
				return
			}
			files, err := filepath.Glob(filepath.Join(want, "*.npy"))
			if err != nil || len(files) < 8 {
				t.Fatalf("golden files: %v (%d found); regenerate with DSPK_GOLDEN_UPDATE=1", err, len(files))
			}
			for _, f := range files {
				w, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(out, filepath.Base(f)))
				if err != nil {
					t.Errorf("%s: %v", filepath.Base(f), err)
					continue
				}
				if !bytes.Equal(got, w) {
					t.Errorf("%s differs from the golden copy (%d bytes, want %d)", filepath.Base(f), len(got), len(w))
				}
			}
		})
	}
}

// goldenArrays are the result arrays the golden test pins.
var goldenArrays = []string{
	"spike_times.npy", "spike_centres.npy", "spike_positions.npy", "amplitudes.npy",
	"pc_features.npy", "whitening_mat.npy", "wTEMP.npy", "wPCA.npy",
}

func updateGolden(t *testing.T, out, want string) {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if err := os.RemoveAll(want); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if filepath.Ext(name) != ".npy" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(want, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range goldenArrays {
		if !slices.Contains(names, name) {
			t.Errorf("the detect folder has no %s (it has %v)", name, names)
		}
	}
}

func writeGoldenRecording(t *testing.T) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seconds = 4.5
	cfg.Units = 24
	cfg.Seed = 11
	cfg.Probe = goldenProbe()
	if err := os.RemoveAll(goldenRec); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(goldenRec, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sim.WriteSpikeGLX(goldenRec, simBase, cfg); err != nil {
		t.Fatal(err)
	}
}
