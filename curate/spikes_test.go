package curate

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestRemoveDuplicatesMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for trial := range 100 {
		n := rng.IntN(50)
		times := make([]int64, n)
		cl := make([]int32, n)
		for i := range times {
			times[i] = rng.Int64N(200)
			cl[i] = int32(rng.IntN(3))
		}
		slices.Sort(times)
		bins := int64(trial % 9)
		got := RemoveDuplicates(times, cl, bins)
		// Reference: for each cluster separately, walk its spikes in row
		// order keeping those ≥ bins after the previous kept one.
		want := make([]bool, n)
		for c := int32(0); c < 3; c++ {
			lastKept := int64(math.MinInt64)
			first := true
			for i := range n {
				if cl[i] != c {
					continue
				}
				if first || bins <= 0 || times[i]-lastKept >= bins {
					want[i] = true
					lastKept = times[i]
					first = false
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d bins %d: %v, want %v", trial, bins, got, want)
		}
	}
	// Equal times in one cluster: the later row goes; a 7-sample gap stays.
	if got := RemoveDuplicates([]int64{5, 5, 12, 18}, []int32{0, 0, 0, 0}, 7); !slices.Equal(got, []bool{true, false, true, false}) {
		t.Fatalf("ties: %v", got)
	}
	if DefaultParams().DuplicateSpikeBins() != 7 {
		t.Fatalf("duplicate_spike_bins %d, want 7", DefaultParams().DuplicateSpikeBins())
	}
	if len(RemoveDuplicates(nil, nil, 7)) != 0 {
		t.Fatal("empty input")
	}
}

// randomSpikes returns n spikes with random features on NC channels of T
// templates, their channel lists and site positions (C sites).
func randomSpikes(rng *rand.Rand, n, NC, P, T, C, clusters int) (*Spikes, *Channels) {
	ch := &Channels{X: make([]float64, C), Y: make([]float64, C)}
	for c := range C {
		ch.X[c], ch.Y[c] = float64(32*(c%2)+rng.IntN(3)), float64(20*(c/2))
	}
	for range T {
		perm := rng.Perm(C)[:NC]
		row := make([]int32, NC)
		for i, c := range perm {
			row[i] = int32(c)
		}
		ch.Chans = append(ch.Chans, row)
	}
	s := &Spikes{NC: NC, P: P}
	for range n {
		s.Time = append(s.Time, rng.Int64N(1000))
		s.Template = append(s.Template, int32(rng.IntN(T)))
		s.Cluster = append(s.Cluster, int32(rng.IntN(clusters)))
		for range NC * P {
			v := float32(rng.NormFloat64())
			if rng.IntN(10) == 0 {
				v = 0
			}
			s.Features = append(s.Features, v)
		}
	}
	return s, ch
}

func TestPositionsAndAmplitudes(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	s, ch := randomSpikes(rng, 301, 5, 3, 7, 12, 4)
	// A spike with all-zero features: its best channel's position.
	clear(s.Features[:5*3])
	pos := Positions(s, ch, 100)
	amp := Amplitudes(s)
	for i := range s.Len() {
		f := s.Features[i*15 : (i+1)*15]
		var a float64
		for _, v := range f {
			a += float64(v) * float64(v)
		}
		if math.Abs(float64(amp[i])-math.Sqrt(a)) > 1e-5 {
			t.Fatalf("spike %d amplitude %g, want %g", i, amp[i], math.Sqrt(a))
		}
		chans := ch.Chans[s.Template[i]]
		var sw, sx, sy float64
		for r, c := range chans {
			if math.Hypot(ch.X[c]-ch.X[chans[0]], ch.Y[c]-ch.Y[chans[0]]) >= 100 {
				continue
			}
			w := math.Sqrt(float64(f[r*3]*f[r*3] + f[r*3+1]*f[r*3+1] + f[r*3+2]*f[r*3+2]))
			sw += w
			sx += w * ch.X[c]
			sy += w * ch.Y[c]
		}
		wx, wy := ch.X[chans[0]], ch.Y[chans[0]]
		if sw > 0 {
			wx, wy = sx/sw, sy/sw
		}
		if math.Abs(float64(pos[2*i])-wx) > 1e-4 || math.Abs(float64(pos[2*i+1])-wy) > 1e-4 {
			t.Fatalf("spike %d at (%g, %g), want (%g, %g)", i, pos[2*i], pos[2*i+1], wx, wy)
		}
	}
	if pos[0] != float32(ch.X[ch.Chans[s.Template[0]][0]]) {
		t.Fatal("zero-feature spike not at its best channel")
	}
}

// refPCFeatures follows the description of make_pc_features literally,
// with dense [C]-channel embeddings.
func refPCFeatures(s *Spikes, ch *Channels, C, N int, overwrite bool) ([]float32, []uint32) {
	NC, P := s.NC, s.P
	feat := make([]float32, s.Len()*NC*P)
	ind := make([]uint32, N*NC)
	for k := range N {
		inT := map[int32]bool{}
		for i, c := range s.Cluster {
			if int(c) == k {
				inT[s.Template[i]] = true
			}
		}
		if len(inT) == 0 {
			for j := range NC {
				ind[k*NC+j] = uint32(j)
			}
			continue
		}
		onUnion := make([]bool, C)
		for u := range inT {
			for _, c := range ch.Chans[u] {
				onUnion[c] = true
			}
		}
		mean := make([][]float64, C)
		for c := range mean {
			mean[c] = make([]float64, P)
		}
		var sel []int
		for i, u := range s.Template {
			if inT[u] {
				sel = append(sel, i)
				for r, c := range ch.Chans[u] {
					for p := range P {
						mean[c][p] += float64(s.Features[(i*NC+r)*P+p])
					}
				}
			}
		}
		var cand []int
		for c := range C {
			if onUnion[c] {
				cand = append(cand, c)
			}
		}
		norm := func(c int) float64 {
			var x float64
			for _, v := range mean[c] {
				x += v * v
			}
			return x
		}
		sort.SliceStable(cand, func(a, b int) bool { return norm(cand[a]) > norm(cand[b]) })
		for j := range NC {
			ind[k*NC+j] = uint32(cand[j])
		}
		for _, i := range sel {
			if !overwrite && int(s.Cluster[i]) != k {
				continue
			}
			for j := range NC {
				for p := range P {
					feat[(i*P+p)*NC+j] = 0
				}
				for r, c := range ch.Chans[s.Template[i]] {
					if uint32(c) == ind[k*NC+j] {
						for p := range P {
							feat[(i*P+p)*NC+j] = s.Features[(i*NC+r)*P+p]
						}
					}
				}
			}
		}
	}
	return feat, ind
}

func TestPCFeaturesMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for trial := range 20 {
		C := 9 + rng.IntN(8)
		s, ch := randomSpikes(rng, 1+rng.IntN(200), 5, 3, 1+rng.IntN(6), C, 1+rng.IntN(5))
		N := int(slices.Max(s.Cluster)) + 2 // the last cluster has no spikes
		for _, ow := range []bool{false, true} {
			f, ind := PCFeatures(s, ch, N, ow)
			rf, rind := refPCFeatures(s, ch, C, N, ow)
			if !slices.Equal(ind, rind) {
				t.Fatalf("trial %d overwrite %v: index %v, want %v", trial, ow, ind, rind)
			}
			if !slices.Equal(f, rf) {
				t.Fatalf("trial %d overwrite %v: features differ", trial, ow)
			}
			if !ow {
				// Every spike's non-zero features sit on its cluster's channels.
				for i, c := range s.Cluster {
					row := ind[int(c)*5 : int(c)*5+5]
					for j := range 5 {
						for p := range 3 {
							if v := f[(i*3+p)*5+j]; v != 0 && !slices.Contains(ch.Chans[s.Template[i]], int32(row[j])) {
								t.Fatalf("spike %d has a feature off its channels", i)
							}
						}
					}
				}
			}
		}
	}
}

func TestBasisAndSimilarity(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	P, nt, C, N := 3, 9, 5, 4
	wpca := make([]float32, P*nt)
	for i := range wpca {
		wpca[i] = float32(rng.NormFloat64())
	}
	bs := NewBasis(wpca, P, nt)
	for a := range P {
		for b := range P {
			for l := range 2*nt + 1 {
				var s float64
				for t := range nt {
					for u := range nt {
						if u-t == l-nt {
							s += float64(wpca[a*nt+t]) * float64(wpca[b*nt+u])
						}
					}
				}
				if math.Abs(bs.WtW[(a*P+b)*(2*nt+1)+l]-s) > 1e-9 {
					t.Fatalf("WtW[%d,%d,%d] = %g, want %g", a, b, l, bs.WtW[(a*P+b)*(2*nt+1)+l], s)
				}
			}
		}
	}
	u := &Units{N: N, C: C, P: P, W: make([]float32, N*C*P)}
	for i := range u.W {
		if rng.IntN(3) > 0 {
			u.W[i] = float32(rng.NormFloat64())
		}
	}
	clear(u.W[2*C*P : 3*C*P]) // a zero unit
	sim := SimilarTemplates(u, bs)
	amp := ClusterAmplitude(u)
	dense := DenseTemplates(u, bs)
	for a := range N {
		var ss float64
		for _, v := range u.W[a*C*P : (a+1)*C*P] {
			ss += float64(v) * float64(v)
		}
		if math.Abs(amp[a]-math.Sqrt(ss)) > 1e-9 {
			t.Fatalf("amplitude %d", a)
		}
		for c := range C {
			for tt := range nt {
				var v float64
				for p := range P {
					v += float64(u.W[(a*C+c)*P+p]) * float64(wpca[p*nt+tt])
				}
				if math.Abs(float64(dense[(a*nt+tt)*C+c])-v) > 1e-5 {
					t.Fatalf("dense template %d", a)
				}
			}
		}
		for b := range N {
			want, _ := refXcorr(u.W[a*C*P:(a+1)*C*P], u.W[b*C*P:(b+1)*C*P], wpca, C, P, nt)
			if math.Abs(float64(sim[a*N+b])-want) > 1e-5 {
				t.Fatalf("similarity %d,%d: %g, want %g", a, b, sim[a*N+b], want)
			}
		}
	}
	if sim[2*N+2] != 0 || sim[0*N+2] != 0 {
		t.Fatal("zero unit has non-zero similarity")
	}
}

func TestTables(t *testing.T) {
	tb := Tables([]bool{true, false}, []float64{1.234, 0}, []float64{12.34, 5})
	if got := string(tb["cluster_KSLabel.tsv"]); got != "cluster_id\tKSLabel\n0\tgood\n1\tmua\n" {
		t.Fatalf("KSLabel %q", got)
	}
	if got := string(tb["cluster_ContamPct.tsv"]); got != "cluster_id\tContamPct\n0\t1.2\n1\t0.0\n" {
		t.Fatalf("ContamPct %q", got)
	}
	if got := string(tb["cluster_Amplitude.tsv"]); !strings.HasSuffix(got, "0\t12.3\n1\t5.0\n") {
		t.Fatalf("Amplitude %q", got)
	}
	if string(tb["cluster_group.tsv"]) != string(tb["cluster_KSLabel.tsv"]) {
		t.Fatal("cluster_group.tsv differs from cluster_KSLabel.tsv")
	}
}
