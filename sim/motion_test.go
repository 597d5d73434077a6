package sim

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/export"
)

// refAt is bilinear interpolation written out with a linear scan.
func refAt(m *Motion, t, y float64) float64 {
	t = math.Max(m.Times[0], math.Min(t, m.Times[len(m.Times)-1]))
	y = math.Max(m.Depths[0], math.Min(y, m.Depths[len(m.Depths)-1]))
	cell := func(g []float64, x float64) (int, float64) {
		for i := 0; i+1 < len(g); i++ {
			if x <= g[i+1] {
				return i, (x - g[i]) / (g[i+1] - g[i])
			}
		}
		return 0, 0
	}
	i, a := cell(m.Times, t)
	j, b := cell(m.Depths, y)
	nD := len(m.Depths)
	at := func(i, j int) float64 {
		if i >= len(m.Times) || j >= nD {
			return 0
		}
		return m.Disp[i*nD+j]
	}
	v := (1 - a) * (1 - b) * at(i, j)
	if b > 0 {
		v += (1 - a) * b * at(i, j+1)
	}
	if a > 0 {
		v += a * (1 - b) * at(i+1, j)
		if b > 0 {
			v += a * b * at(i+1, j+1)
		}
	}
	return v
}

func randomMotion(r *rand.Rand, nT, nD int) *Motion {
	m := &Motion{Times: make([]float64, nT), Depths: make([]float64, nD), Disp: make([]float64, nT*nD)}
	x := r.Float64()
	for i := range m.Times {
		m.Times[i] = x
		x += 0.01 + r.Float64()
	}
	x = -50 * r.Float64()
	for j := range m.Depths {
		m.Depths[j] = x
		x += 1 + 30*r.Float64()
	}
	for k := range m.Disp {
		m.Disp[k] = 20 * r.NormFloat64()
	}
	return m
}

func TestMotionAt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][2]int{{1, 1}, {1, 5}, {4, 1}, {7, 13}, {30, 2}} {
		m := randomMotion(r, sz[0], sz[1])
		for range 500 {
			tt := m.Times[0] - 1 + (m.Times[len(m.Times)-1]-m.Times[0]+2)*r.Float64()
			y := m.Depths[0] - 5 + (m.Depths[len(m.Depths)-1]-m.Depths[0]+10)*r.Float64()
			if got, want := m.At(tt, y), refAt(m, tt, y); math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
				t.Fatalf("%v grid: At(%g, %g) = %g, want %g", sz, tt, y, got, want)
			}
		}
		// Grid points are exact.
		for i, tt := range m.Times {
			for j, y := range m.Depths {
				if got := m.At(tt, y); got != m.Disp[i*len(m.Depths)+j] {
					t.Fatalf("%v grid: At at node (%d, %d) = %g, want %g", sz, i, j, got, m.Disp[i*len(m.Depths)+j])
				}
			}
		}
	}
}

func TestTruthMotionFilesRoundTrip(t *testing.T) {
	rec, err := Generate(shortConfig(0.3))
	if err != nil {
		t.Fatal(err)
	}
	tr := *rec.Truth()
	r := rand.New(rand.NewPCG(5, 6))
	tr.Motion = randomMotion(r, 9, 11)
	n := len(tr.SpikeTimes)
	tr.SpikePos = make([]float32, 3*n)
	tr.SpikeScale = make([]float32, n)
	for i := range tr.SpikePos {
		tr.SpikePos[i] = float32(100 * r.NormFloat64())
	}
	for i := range tr.SpikeScale {
		tr.SpikeScale[i] = float32(0.5 + r.Float64())
	}
	dir := t.TempDir()
	if err := tr.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTruthDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := back.Motion
	if m == nil || !equalF64(m.Times, tr.Motion.Times) || !equalF64(m.Depths, tr.Motion.Depths) || !equalF64(m.Disp, tr.Motion.Disp) {
		t.Fatalf("motion changed through the files")
	}
	for i := range tr.SpikePos {
		if back.SpikePos[i] != tr.SpikePos[i] {
			t.Fatalf("SpikePos[%d] = %g, want %g", i, back.SpikePos[i], tr.SpikePos[i])
		}
	}
	for i := range tr.SpikeScale {
		if back.SpikeScale[i] != tr.SpikeScale[i] {
			t.Fatalf("SpikeScale[%d] = %g, want %g", i, back.SpikeScale[i], tr.SpikeScale[i])
		}
	}

	// Broken files are named in the error.
	for _, c := range []struct {
		file  string
		shape []int
		data  any
		want  string
	}{
		{FileMotionTimes, []int{8}, make([]float64, 8), "shape"},
		{FileMotionDepths, []int{11}, make([]float64, 11), "not above"},
		{FileSpikePositions, []int{n, 2}, make([]float32, 2*n), "shape"},
		{FileSpikeScales, []int{n}, make([]float32, n), "want > 0"},
		{FileMotion, []int{9, 11}, make([]float32, 99), "<f4"},
	} {
		d := t.TempDir()
		if err := tr.WriteDir(d); err != nil {
			t.Fatal(err)
		}
		if err := export.WriteNPYFile(filepath.Join(d, c.file), c.shape, c.data); err != nil {
			t.Fatal(err)
		}
		_, err := ReadTruthDir(d)
		if err == nil || !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("broken %s: error %v, want one naming it and %q", c.file, err, c.want)
		}
	}
	d := t.TempDir()
	if err := tr.WriteDir(d); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(d, FileSpikePositions))
	if _, err := ReadTruthDir(d); err == nil || !strings.Contains(err.Error(), FileSpikePositions) {
		t.Errorf("missing %s: error %v", FileSpikePositions, err)
	}
}

func equalF64(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
