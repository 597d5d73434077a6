package curate

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
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

// countdownCtx is a context whose Err reports Canceled from its left-th
// call on, so that a test can stop a run at every point where it looks.
type countdownCtx struct {
	context.Context
	left atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestRunContextStops stops RunContext at each of its checks in turn (in
// the merges, between stages, in the similarity rows and the PC
// features, with one and with several workers): each stop returns the
// context's error and no result, and a context that never stops gives
// Run's result.
func TestRunContextStops(t *testing.T) {
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		scene := func() *scene { return mergeScene(rand.New(rand.NewPCG(71, 72)), 6, 7, 13, 15, 4, false) }
		prm := DefaultParams()
		ref := func() *Result {
			sc := scene()
			return Run(sc.s, sc.u, NewBasis(sc.wpca, 13, 15), sc.ch, prm, false)
		}()
		// Count the checks of a whole run.
		never := &countdownCtx{Context: context.Background()}
		never.left.Store(math.MaxInt64)
		sc := scene()
		if _, err := RunContext(never, sc.s, sc.u, NewBasis(sc.wpca, 13, 15), sc.ch, prm, false); err != nil {
			t.Fatal(err)
		}
		checks := int(math.MaxInt64 - never.left.Load())
		// The merges, the similarity rows and the PC features look
		// between their units.
		count := func(f func(ctx context.Context)) int {
			c := &countdownCtx{Context: context.Background()}
			c.left.Store(math.MaxInt64)
			f(c)
			return int(math.MaxInt64 - c.left.Load())
		}
		sc = scene()
		nm := count(func(ctx context.Context) { merge(ctx, sc.s, sc.u, NewBasis(sc.wpca, 13, 15), sc.ch, prm) })
		ns := count(func(ctx context.Context) { similarTemplates(ctx, ref.Units, NewBasis(sc.wpca, 13, 15)) })
		np := count(func(ctx context.Context) { pcFeatures(ctx, ref.Spikes, sc.ch, ref.Units.N, false) })
		if nm < sc.u.N || ns < ref.Units.N || np < ref.Units.N || checks < nm+ns+np {
			t.Fatalf("checks: %d in merge (%d units), %d in the similarities and %d in the PC features (%d units), %d in all",
				nm, sc.u.N, ns, np, ref.Units.N, checks)
		}
		for k := 0; k < checks+5; k++ {
			ctx := &countdownCtx{Context: context.Background()}
			ctx.left.Store(int64(k))
			sc := scene()
			r, err := RunContext(ctx, sc.s, sc.u, NewBasis(sc.wpca, 13, 15), sc.ch, prm, false)
			switch {
			case k < checks && (err == nil || r != nil):
				t.Fatalf("GOMAXPROCS %d, stopped at check %d of %d: result %v, error %v", procs, k, checks, r != nil, err)
			case err != nil && (!errors.Is(err, context.Canceled) || r != nil):
				t.Fatalf("GOMAXPROCS %d, check %d: %v", procs, k, err)
			case k >= checks && (err != nil || !slices.Equal(r.Spikes.Cluster, ref.Spikes.Cluster) ||
				!slices.Equal(r.PCFeatures, ref.PCFeatures) || !slices.Equal(r.Similar, ref.Similar)):
				t.Fatalf("GOMAXPROCS %d, check %d of %d: the run differs from Run's (%v)", procs, k, checks, err)
			}
		}
		runtime.GOMAXPROCS(old)
	}
}
