package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"dspk/export"
)

// folderSpec describes a synthetic sort folder: Kilosort's files for
// units firing Poisson trains (2-ms dead time) with one template each,
// a trough on the unit's main channel decaying with distance.
type folderSpec struct {
	units, channels int
	seconds, rate   float64 // rate: the mean firing rate; unit u fires at rate·(0.5 + u/units)
	pcFeatures      bool
	seed            uint64
}

// folderTruth is what the synthetic folder holds, for the checks.
type folderTruth struct {
	times  []int64
	units  []int32
	depths []float32
	main   []int // each unit's main channel
	fs     float64
	n      int64
}

const testNT = 61

// writeFolder writes the folder of s into dir.
func writeFolder(tb testing.TB, dir string, s folderSpec) folderTruth {
	tb.Helper()
	r := rand.New(rand.NewPCG(s.seed, 7))
	fs := 30000.0
	tr := folderTruth{fs: fs, n: int64(s.seconds * fs)}
	C := s.channels
	pos := make([]float32, 2*C)
	for c := range C {
		pos[2*c], pos[2*c+1] = float32(16*(c%2)), float32(20*(c/2))
	}
	tmpl := make([]float32, s.units*testNT*C)
	type spike struct {
		t int64
		u int32
	}
	var sp []spike
	for u := range s.units {
		main := r.IntN(C)
		tr.main = append(tr.main, main)
		for c := range C {
			dy := float64(pos[2*c+1] - pos[2*main+1])
			dx := float64(pos[2*c] - pos[2*main])
			g := math.Exp(-math.Hypot(dx, dy) / 25)
			if math.Hypot(dx, dy) > 50 {
				g = 0 // as Kilosort's templates, exactly zero away from the unit
			}
			if c == main {
				g = 1.2 // the main channel is the largest
			}
			for k := range testNT {
				x := float64(k-20) / 4
				tmpl[(u*testNT+k)*C+c] = float32(-g * (1 - x*x) * math.Exp(-x*x/2) * 100)
			}
		}
		rate := s.rate * (0.5 + float64(u)/float64(s.units))
		for t := 0.0; ; {
			t += 0.002 + r.ExpFloat64()/rate
			if t >= s.seconds {
				break
			}
			sp = append(sp, spike{int64(t * fs), int32(u)})
		}
	}
	slices.SortStableFunc(sp, func(a, b spike) int { return cmpInt64(a.t, b.t) })
	n := len(sp)
	amps := make([]float32, n)
	spos := make([]float32, 2*n)
	for i, x := range sp {
		tr.times = append(tr.times, x.t)
		tr.units = append(tr.units, x.u)
		amps[i] = float32(1 + 0.1*r.NormFloat64())
		m := tr.main[x.u]
		spos[2*i], spos[2*i+1] = pos[2*m], pos[2*m+1]+float32(3*r.NormFloat64())
		tr.depths = append(tr.depths, spos[2*i+1])
	}
	winv := make([]float32, C*C)
	for c := range C {
		winv[c*C+c] = 1
	}
	files := []npyFile{
		{"spike_times.npy", []int{n}, tr.times},
		{"spike_clusters.npy", []int{n}, tr.units},
		{"spike_templates.npy", []int{n}, tr.units},
		{"amplitudes.npy", []int{n}, amps},
		{"spike_positions.npy", []int{n, 2}, spos},
		{"templates.npy", []int{s.units, testNT, C}, tmpl},
		{"whitening_mat_inv.npy", []int{C, C}, winv},
		{"channel_positions.npy", []int{C, 2}, pos},
	}
	if s.pcFeatures {
		files = append(files, pcFiles(s, tr.main, n)...)
	}
	for _, f := range files {
		if err := export.WriteNPYFile(filepath.Join(dir, f.name), f.shape, f.data); err != nil {
			tb.Fatal(err)
		}
	}
	// The raw file only sets the recording's length: a sparse file.
	raw := filepath.Join(dir, "raw.bin")
	if err := os.WriteFile(raw, nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Truncate(raw, tr.n*int64(C)*2); err != nil {
		tb.Fatal(err)
	}
	params := fmt.Sprintf("dat_path = 'raw.bin'\nn_channels_dat = %d\ndtype = 'int16'\noffset = 0\nsample_rate = %g\nhp_filtered = False\n", C, fs)
	if err := os.WriteFile(filepath.Join(dir, "params.py"), []byte(params), 0o644); err != nil {
		tb.Fatal(err)
	}
	ks := "cluster_id\tKSLabel\n"
	for u := range s.units {
		ks += fmt.Sprintf("%d\t%s\n", u, []string{"good", "mua"}[u%2])
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster_KSLabel.tsv"), []byte(ks), 0o644); err != nil {
		tb.Fatal(err)
	}
	return tr
}

// npyFile is one array of a synthetic folder.
type npyFile struct {
	name  string
	shape []int
	data  any
}

// pcFiles returns PC features of the size Kilosort writes (6 PCs on 10
// channels, the unit's main channel first), their values a cheap pattern.
func pcFiles(s folderSpec, main []int, n int) []npyFile {
	C := s.channels
	ind := make([]int32, s.units*10)
	for u := range s.units {
		for k := range 10 {
			ind[u*10+k] = int32((main[u] + k) % C)
		}
	}
	pcf := make([]float32, n*6*10)
	for i := range pcf {
		pcf[i] = float32(i%13) - 6
	}
	return []npyFile{{"pc_features.npy", []int{n, 6, 10}, pcf}, {"pc_feature_ind.npy", []int{s.units, 10}, ind}}
}
