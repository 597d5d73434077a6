package phy

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"dspk/cluster"
	"dspk/detect"
	"dspk/export"
	"dspk/linalg"
	"dspk/match"
	"dspk/motion"
	"dspk/pipeline"
)

// randomSortGlobal returns global results of random values: C channels,
// nt samples, n learned templates, windows windows and, if blocks > 0,
// a motion estimate of that many blocks.
func randomSortGlobal(rng *rand.Rand, C, nt, n, windows, blocks int) *pipeline.SortGlobal {
	f32 := func(k int) []float32 {
		v := make([]float32, k)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	K, P := 3, 2
	idx := make([]int32, C*K)
	for i := range idx {
		idx[i] = int32(rng.IntN(C))
	}
	tm := &detect.Templates{NT: nt, K: 4, P: P, WTEMP: f32(4 * nt), WPCA: f32(P * nt)}
	g := &pipeline.SortGlobal{Whitening: &linalg.Whitening{C: C, K: K, Index: idx, Value: f32(C * K)},
		Universal: tm, UniversalSource: "learned from the data", Clips: rng.IntN(1000),
		Learned:  match.Templates{N: n, C: C, P: P, U: f32(n * C * P), WPCA: tm.WPCA},
		Detected: rng.IntN(5000), Work: detect.Stats{Columns: rng.Int64N(1 << 40), Spikes: rng.Int64N(100)}, Clusters0: n + 1,
		Groups0:  []cluster.Group{{X: rng.Float64(), Y: 1e-7 * rng.Float64(), Units: 3, Spikes: 17, Channels: 5, First: 0, Clusters: 2}},
		Stages:   []pipeline.StageTime{{Name: "whitening", Seconds: rng.Float64(), Count: 2, What: "windows"}},
		Warnings: []string{"a warning"}}
	if blocks > 0 {
		m := &motion.Estimate{Windows: windows, Blocks: blocks, Dshift: make([]float64, windows*blocks),
			Yblk: make([]float64, blocks), Spikes: make([]int, windows)}
		for i := range m.Dshift {
			m.Dshift[i] = rng.NormFloat64() * 10
		}
		for i := range m.Yblk {
			m.Yblk[i] = rng.Float64() * 3840
		}
		for i := range m.Spikes {
			m.Spikes[i] = rng.IntN(10000)
		}
		g.Motion, g.Correction = m, "smooth"
	}
	return g
}

// TestSortStepFiles writes random global results and shard spikes (odd
// sizes, a shard of no spikes) and reads them back exactly, with and
// without motion; broken folders — another format, another window count,
// a wrong dtype, shards that leave a gap or overlap — are refused naming
// the file.
func TestSortStepFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for _, blocks := range []int{0, 1, 5} {
		dir := t.TempDir()
		g := randomSortGlobal(rng, 7, 61, 3, 11, blocks)
		if err := SaveSortGlobal(dir, g, 11); err != nil {
			t.Fatal(err)
		}
		back, err := LoadSortGlobal(dir, 11, 61)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, g) {
			t.Errorf("blocks %d: read back %+v, wrote %+v", blocks, back, g)
		}
		if _, err := LoadSortGlobal(dir, 12, 61); err == nil || !strings.Contains(err.Error(), "global results of 11 windows, the recording has 12") {
			t.Errorf("another window count: %v", err)
		}
	}
	dir := t.TempDir()
	g := randomSortGlobal(rng, 7, 61, 3, 11, 1)
	if err := SaveSortGlobal(dir, g, 11); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, sortGlobalFile))
	os.WriteFile(filepath.Join(dir, sortGlobalFile), []byte(strings.Replace(string(b), sortGlobalFormat, "dspk-sort-global/0", 1)), 0o644)
	if _, err := LoadSortGlobal(dir, 11, 61); err == nil || !strings.Contains(err.Error(), `format "dspk-sort-global/0"`) {
		t.Errorf("another format: %v", err)
	}
	os.WriteFile(filepath.Join(dir, sortGlobalFile), b, 0o644)
	export.WriteNPYFile(filepath.Join(dir, "U.npy"), []int{3, 7, 2}, make([]float64, 42))
	if _, err := LoadSortGlobal(dir, 11, 61); err == nil || !strings.Contains(err.Error(), "U.npy: <f8") {
		t.Errorf("U.npy of float64: %v", err)
	}

	// Shards of windows 0-2, 2-3 (no spikes) and 3-7 of 7.
	const nc, p = 4, 2
	var parts []string
	var all match.Spikes
	for k, wr := range [][2]int{{0, 2}, {2, 3}, {3, 7}} {
		n := []int{5, 0, 13}[k]
		ms := &match.Spikes{NC: nc, P: p}
		for i := range n {
			ms.Sample = append(ms.Sample, int64(1000*wr[0]+i))
			ms.Template = append(ms.Template, int32(rng.IntN(3)))
			ms.Amplitude = append(ms.Amplitude, float32(rng.NormFloat64()))
			ms.Coef = append(ms.Coef, 1)
			for range nc * p {
				ms.Features = append(ms.Features, float32(rng.NormFloat64()))
			}
		}
		d := filepath.Join(t.TempDir(), "shard")
		os.MkdirAll(d, 0o755)
		if err := SaveSortShard(d, ms, wr[0], wr[1], 7, nc, p, 0.5); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, d)
		all.Sample = append(all.Sample, ms.Sample...)
		all.Template = append(all.Template, ms.Template...)
		all.Amplitude = append(all.Amplitude, ms.Amplitude...)
		all.Features = append(all.Features, ms.Features...)
	}
	all.NC, all.P = nc, p
	ms, secs, err := LoadSortShards(parts, 7, nc, p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ms, &all) || secs != 1.5 {
		t.Errorf("read back %+v (%g s), wrote %+v (1.5 s)", ms, secs, &all)
	}
	for _, c := range []struct {
		parts []string
		total int
		want  string
	}{
		{[]string{parts[0], parts[2]}, 7, "the merge expects windows from 2 of 7"},
		{[]string{parts[0], parts[1]}, 7, "cover windows [0, 3) of 7"},
		{[]string{parts[0], parts[0]}, 7, "the merge expects windows from 2 of 7"},
		{parts, 8, "the merge expects windows from 0 of 8"},
	} {
		if _, _, err := LoadSortShards(c.parts, c.total, nc, p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v of %d: %v, want %q", c.parts, c.total, err, c.want)
		}
	}
	if _, _, err := LoadSortShards(parts, 7, nc+1, p); err == nil || !strings.Contains(err.Error(), "with 4×2 features") {
		t.Errorf("other NC: %v", err)
	}
	os.Remove(filepath.Join(parts[2], "features.npy"))
	if _, _, err := LoadSortShards(parts, 7, nc, p); err == nil || !strings.Contains(err.Error(), "features.npy") {
		t.Errorf("a missing features.npy: %v", err)
	}
}
