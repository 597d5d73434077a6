package curate

import "math"

// DoubleCountDefault is dspk's default of [Settings.DoubleCount], in µm:
// two units whose templates peak on channels this close may count one
// event twice (docs/curate.md §12).
const DoubleCountDefault = 50

// doubleCounts marks the spikes that are a second count of an event
// another unit holds: of two spikes of different units at most
// p.DuplicateSpikeBins apart whose templates' best channels (the largest
// ‖W_k[c, :]‖) lie within p.DoubleCount µm of each other, the spike of
// the unit with the smaller template norm ‖W_k‖ (the earlier unit on a
// tie) is marked, unless it is marked already. s is in time order. The
// template matching fits one waveform with two templates when neither
// alone explains it (a colliding neighbour, a shape the drift changed);
// the second fit lands within a fraction of a millisecond of the first and,
// in the smaller unit, reads as a refractory violation. The Allen
// Institute's post-processing of Kilosort removes such between-unit
// double counts the same way (within 0.17 ms and 5 channels).
func doubleCounts(s *Spikes, u *Units, ch *Channels, p Params, skip []bool) []bool {
	bins := p.DuplicateSpikeBins()
	if !(p.DoubleCount > 0) || bins <= 0 || ch == nil || s.Len() == 0 {
		return skip
	}
	m := u.C * u.P
	best := make([]int, u.N)
	norm := make([]float64, u.N)
	for k := range u.N {
		top := -1.0
		for c := range u.C {
			var ss float64
			for _, v := range u.W[k*m+c*u.P : k*m+(c+1)*u.P] {
				ss += float64(v) * float64(v)
			}
			norm[k] += ss
			if ss > top {
				top, best[k] = ss, c
			}
		}
	}
	near := func(a, b int32) bool {
		ca, cb := best[a], best[b]
		return math.Hypot(ch.X[ca]-ch.X[cb], ch.Y[ca]-ch.Y[cb]) <= p.DoubleCount
	}
	out := skip
	if out == nil {
		out = make([]bool, s.Len())
	}
	for i, t := range s.Time {
		if out[i] {
			continue
		}
		for k := i + 1; k < s.Len() && s.Time[k]-t <= bins; k++ {
			a, b := s.Cluster[i], s.Cluster[k]
			if out[k] || a == b || !near(a, b) {
				continue
			}
			if norm[a] < norm[b] || norm[a] == norm[b] && a < b {
				out[i] = true
				break
			}
			out[k] = true
		}
	}
	return out
}
