package curate

import (
	"fmt"
	"math"
)

// RemoveDuplicates returns the mask of spikes to keep (Kilosort4's
// remove_duplicates, kilosort4-sort.md §7.4): scanning rows in order
// (sorted by time), a spike is kept iff it comes at least bins samples
// after the last kept spike of its cluster; the first spike of each
// cluster is kept, and bins ≤ 0 keeps everything. Of two spikes at the
// same time in one cluster the later row is dropped. It panics if the
// lengths differ or the times are not sorted.
func RemoveDuplicates(times []int64, clusters []int32, bins int64) []bool {
	return removeDuplicates(times, clusters, bins, nil)
}

// removeDuplicates is [RemoveDuplicates] where the rows marked in skip
// (nil: none) are dropped first and never mask another spike.
func removeDuplicates(times []int64, clusters []int32, bins int64, skip []bool) []bool {
	if len(times) != len(clusters) || skip != nil && len(skip) != len(times) {
		panic("curate: RemoveDuplicates times and clusters differ in length")
	}
	keep := make([]bool, len(times))
	last := map[int32]int64{}
	for i, t := range times {
		if i > 0 && t < times[i-1] {
			panic(fmt.Sprintf("curate: RemoveDuplicates: spike %d at %d before spike %d at %d", i, t, i-1, times[i-1]))
		}
		if skip != nil && skip[i] {
			continue
		}
		c := clusters[i]
		if l, ok := last[c]; ok && bins > 0 && t-l < bins {
			continue
		}
		keep[i] = true
		last[c] = t
	}
	return keep
}

// Amplitudes returns ‖tF_i‖ over the NC×P features of each spike
// (amplitudes.npy).
func Amplitudes(s *Spikes) []float32 {
	s.check()
	m := s.NC * s.P
	out := make([]float32, s.Len())
	for i := range out {
		var ss float64
		for _, v := range s.Features[i*m : (i+1)*m] {
			ss += float64(v) * float64(v)
		}
		out[i] = float32(math.Sqrt(ss))
	}
	return out
}

// Channels are the feature channels of the learned templates: Chans[u]
// lists the NC channels of template u's features, nearest to its best
// channel first (Kilosort4's iCC[:, iU_u], the best channel itself first),
// and X, Y are the sites' positions in µm, indexed by channel.
type Channels struct {
	Chans [][]int32
	X, Y  []float64
}

// Positions returns each spike's position (spike_positions.npy, [n, 2]
// float32 x, y in µm): the mean of its template's channel positions
// weighted by ‖tF[r, :]‖, channels at limit µm or more from the best
// channel (Chans[u][0]) weighted 0. A spike whose weights are all zero
// gets the best channel's position (Kilosort4: NaN).
func Positions(s *Spikes, ch *Channels, limit float64) []float32 {
	s.check()
	m := s.NC * s.P
	out := make([]float32, 2*s.Len())
	for i, u := range s.Template {
		if int(u) < 0 || int(u) >= len(ch.Chans) || len(ch.Chans[u]) != s.NC {
			panic(fmt.Sprintf("curate: spike %d of template %d: no %d channels for it", i, u, s.NC))
		}
		chans := ch.Chans[u]
		b := chans[0]
		var sw, sx, sy float64
		for r, c := range chans {
			dx, dy := ch.X[c]-ch.X[b], ch.Y[c]-ch.Y[b]
			if !(math.Sqrt(dx*dx+dy*dy) < limit) {
				continue
			}
			var ss float64
			for _, v := range s.Features[i*m+r*s.P : i*m+(r+1)*s.P] {
				ss += float64(v) * float64(v)
			}
			w := math.Sqrt(ss)
			sw += w
			sx += w * ch.X[c]
			sy += w * ch.Y[c]
		}
		if sw > 0 {
			out[2*i], out[2*i+1] = float32(sx/sw), float32(sy/sw)
		} else {
			out[2*i], out[2*i+1] = float32(ch.X[b]), float32(ch.Y[b])
		}
	}
	return out
}
