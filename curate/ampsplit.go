package curate

import (
	"math"
	"slices"

	"dspk/internal/par"
)

// AmplitudeSplitDefault is dspk's default of [Settings.AmplitudeSplit]:
// the least separation d′ of a unit's two amplitude modes at which it is
// split in two (docs/curate.md §11).
const AmplitudeSplitDefault = 10

// The amplitude split's other tests (docs/curate.md §11). They were set
// on SpikeInterface's drift generator (250 units, seed 7: still, zigzag
// and bumps; 120 units, seeds 3 and 14) and dspk's own simulations: every
// split they allow there is two neurons of different size on one
// template, or leaves the counts of well-detected neurons unchanged.
const (
	// splitMinSpikes is the least number of spikes of a unit tested.
	splitMinSpikes = 200
	// splitMinShare is the least fraction of the unit's spikes in the
	// smaller mode.
	splitMinShare = 0.1
	// splitBins and splitCopresence: both modes must have spikes in at
	// least splitCopresence of splitBins equal spans of the sort's
	// spikes (two neurons fire side by side; one neuron whose amplitude
	// changes as the probe moves is in one mode at a time).
	splitBins       = 10
	splitCopresence = 0.8
	// splitEMRounds is the number of expectation-maximisation rounds of
	// the two-Gaussian fit.
	splitEMRounds = 100
)

// splitAmplitudeModes splits, after the merges, every unit whose spikes'
// amplitudes (‖tF‖, as amplitudes.npy) form two modes: a two-Gaussian fit
// to the log amplitudes with means d′ ≥ p.AmplitudeSplit pooled standard
// deviations apart, the smaller mode holding at least splitMinShare of
// the spikes and both modes present in splitCopresence of the time bins.
// Such a unit is a large neuron and a small one near it on one template,
// which the matching joins when the small one's own cluster was lost (it
// peels the small spikes with the large template at a fraction of its
// amplitude). The spikes of the lower mode become a new unit, numbered
// after the others, its template the mean of their features on their
// templates' channels. It returns the units (u itself when none split)
// and the number of splits. Deterministic; s keeps its order.
func splitAmplitudeModes(s *Spikes, u *Units, ch *Channels, p Params) (*Units, int) {
	if !(p.AmplitudeSplit > 0) || s.Len() == 0 || ch == nil {
		return u, 0
	}
	amp := Amplitudes(s)
	byUnit := make([][]int, u.N)
	for i, c := range s.Cluster {
		byUnit[c] = append(byUnit[c], i)
	}
	t0, t1 := slices.Min(s.Time), slices.Max(s.Time)
	// The fits on every core, each unit's on its own; the splits then in
	// unit order, so that the new units' numbers do not depend on the
	// cores.
	cuts := make([]float64, u.N)
	split := make([]bool, u.N)
	logs := make([][]float64, u.N)
	par.Each(u.N, par.Workers(u.N), func(_, k int) {
		rows := byUnit[k]
		if len(rows) < splitMinSpikes {
			return
		}
		x := make([]float64, len(rows))
		for j, i := range rows {
			x[j] = math.Log(max(float64(amp[i]), 1e-12))
		}
		cut, ok := amplitudeModes(x, p.AmplitudeSplit)
		if ok && copresent(s.Time, rows, x, cut, t0, t1) {
			cuts[k], split[k], logs[k] = cut, true, x
		}
	})
	out := u
	splits := 0
	for k, rows := range byUnit {
		if !split[k] {
			continue
		}
		x, cut := logs[k], cuts[k]
		if splits == 0 {
			out = &Units{N: u.N, C: u.C, P: u.P, W: slices.Clone(u.W)}
		}
		splits++
		w := make([]float64, u.C*u.P)
		n := 0
		for j, i := range rows {
			if x[j] >= cut {
				continue
			}
			s.Cluster[i] = int32(out.N)
			n++
			f := s.Features[i*s.NC*s.P : (i+1)*s.NC*s.P]
			for r, c := range ch.Chans[s.Template[i]][:s.NC] {
				for q := range s.P {
					w[int(c)*u.P+q] += float64(f[r*s.P+q])
				}
			}
		}
		for _, v := range w {
			out.W = append(out.W, float32(v/float64(n)))
		}
		out.N++
	}
	return out, splits
}

// amplitudeModes fits two Gaussians to x (expectation-maximisation from
// the 15th and 85th percentiles) and reports whether they are modes d′ ≥
// least pooled standard deviations apart with the smaller one holding at
// least splitMinShare of the values, and the cut between them: the point
// between the means where the weighted densities are equal.
func amplitudeModes(x []float64, least float64) (cut float64, ok bool) {
	n := float64(len(x))
	sorted := slices.Clone(x)
	slices.Sort(sorted)
	q := func(f float64) float64 { return sorted[int(f*(n-1))] }
	mu := [2]float64{q(0.15), q(0.85)}
	var mean, ss float64
	for _, v := range x {
		mean += v
	}
	mean /= n
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	sd0 := math.Sqrt(ss/n)/2 + 1e-6
	sd := [2]float64{sd0, sd0}
	w := [2]float64{0.5, 0.5}
	for range splitEMRounds {
		var sr, sx, sxx [2]float64
		for _, v := range x {
			var d [2]float64
			for c := range 2 {
				z := (v - mu[c]) / sd[c]
				d[c] = w[c] * math.Exp(-0.5*z*z) / sd[c]
			}
			tot := d[0] + d[1]
			if !(tot > 0) {
				// Far out in both tails: the nearer mean takes it.
				if math.Abs(v-mu[0]) <= math.Abs(v-mu[1]) {
					d = [2]float64{1, 0}
				} else {
					d = [2]float64{0, 1}
				}
				tot = 1
			}
			for c := range 2 {
				r := d[c] / tot
				sr[c] += r
				sx[c] += r * v
				sxx[c] += r * v * v
			}
		}
		for c := range 2 {
			if !(sr[c] > 0) {
				return 0, false
			}
			w[c] = sr[c] / n
			mu[c] = sx[c] / sr[c]
			sd[c] = math.Sqrt(max(sxx[c]/sr[c]-mu[c]*mu[c], 0)) + 1e-6
		}
	}
	lo, hi := 0, 1
	if mu[1] < mu[0] {
		lo, hi = 1, 0
	}
	dprime := (mu[hi] - mu[lo]) / math.Sqrt((sd[lo]*sd[lo]+sd[hi]*sd[hi])/2)
	if !(dprime >= least) || min(w[0], w[1]) < splitMinShare {
		return 0, false
	}
	// Bisection for the equal-density point between the means.
	logDens := func(v float64, c int) float64 {
		z := (v - mu[c]) / sd[c]
		return math.Log(w[c]) - math.Log(sd[c]) - 0.5*z*z
	}
	a, b := mu[lo], mu[hi]
	for range 60 {
		m := (a + b) / 2
		if logDens(m, lo) > logDens(m, hi) {
			a = m
		} else {
			b = m
		}
	}
	cut = (a + b) / 2
	below := 0
	for _, v := range x {
		if v < cut {
			below++
		}
	}
	share := float64(below) / n
	return cut, share >= splitMinShare && 1-share >= splitMinShare
}

// copresent reports whether both sides of cut (x[j] for the spikes rows)
// have spikes in at least splitCopresence of splitBins equal spans of
// [t0, t1].
func copresent(times []int64, rows []int, x []float64, cut float64, t0, t1 int64) bool {
	var low, high [splitBins]bool
	span := float64(t1-t0) + 1
	for j, i := range rows {
		b := min(int(float64(times[i]-t0)/span*splitBins), splitBins-1)
		if x[j] < cut {
			low[b] = true
		} else {
			high[b] = true
		}
	}
	both := 0
	for b := range splitBins {
		if low[b] && high[b] {
			both++
		}
	}
	return float64(both) >= splitCopresence*splitBins
}
