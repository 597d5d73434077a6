package curate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunInvariants runs every stage on a scene with split neurons and
// duplicated spikes and checks what the folder's files must satisfy.
func TestRunInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	sc := mergeScene(rng, 6, 7, 13, 15, 4, false)
	s := sc.s
	// Duplicate some spikes 3 samples later (a residual fitted again).
	n0 := s.Len()
	m := s.NC * s.P
	for i := 0; i < n0; i += 17 {
		s.Time = append(s.Time, s.Time[i]+3)
		s.Template = append(s.Template, s.Template[i])
		s.Cluster = append(s.Cluster, s.Cluster[i])
		s.Features = append(s.Features, s.Features[i*m:(i+1)*m]...)
	}
	prm := DefaultParams()
	r := Run(s, sc.u, NewBasis(sc.wpca, 13, 15), sc.ch, prm, false)
	n, N := r.Spikes.Len(), r.Units.N
	if len(r.Merges) == 0 || N != sc.u.N-len(r.Merges) {
		t.Fatalf("%d merges, %d → %d units", len(r.Merges), sc.u.N, N)
	}
	kept := 0
	for _, k := range r.Kept {
		if k {
			kept++
		}
	}
	if len(r.Kept) != n0+(n0+16)/17 || kept != n || n > n0 {
		t.Fatalf("kept %d of %d, %d spikes left (%d before duplication)", kept, len(r.Kept), n, n0)
	}
	if !slices.IsSorted(r.Spikes.Time) || len(r.Positions) != 2*n || len(r.Amplitudes) != n ||
		len(r.PCFeatures) != n*m || len(r.PCFeatureInd) != N*s.NC || len(r.Similar) != N*N ||
		len(r.Templates) != N*15*7 || len(r.Good) != N || len(r.ContamPct) != N || len(r.Amplitude) != N {
		t.Fatal("array sizes")
	}
	last := map[int32]int64{}
	for i, c := range r.Spikes.Cluster {
		if c < 0 || int(c) >= N {
			t.Fatalf("label %d", c)
		}
		if l, ok := last[c]; ok && r.Spikes.Time[i]-l < 7 {
			t.Fatalf("cluster %d keeps spikes %d samples apart", c, r.Spikes.Time[i]-l)
		}
		last[c] = r.Spikes.Time[i]
	}
	good, contam := Refract(r.Spikes.Cluster, Seconds(r.Spikes.Time, prm.FS), prm)
	for k := range N {
		if k < len(good) && (good[k] != r.Good[k] || 100*contam[k] != r.ContamPct[k]) {
			t.Fatalf("unit %d label", k)
		}
		if math.Abs(float64(r.Similar[k*N+k])-1) > 1e-4 {
			t.Fatalf("similarity diagonal %g", r.Similar[k*N+k])
		}
	}
	if tb := r.Tables(); len(tb) != 4 {
		t.Fatal("tables")
	}
}
