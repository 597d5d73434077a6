package pipeline

import (
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/recording"
)

// TestRailCounter compares the parallel count of railed samples with a
// direct count over the owned samples, for a channel map that skips and
// reorders rows and for windows too short to split.
func TestRailCounter(t *testing.T) {
	const c, pad = 7, 13
	rows := []int{5, 0, 3, 6}
	for _, owned := range []int{1, 4095, 50001} {
		rng := rand.New(rand.NewPCG(uint64(owned), 1))
		T := owned + 2*pad
		data := make([]int16, T*c)
		for i := range data {
			switch rng.IntN(50) {
			case 0:
				data[i] = 32767
			case 1:
				data[i] = -32768
			default:
				data[i] = int16(rng.IntN(2000) - 1000)
			}
		}
		want := make([]int64, len(rows))
		for t := pad; t < pad+owned; t++ {
			for i, f := range rows {
				if v := data[t*c+f]; v == 32767 || v == -32768 {
					want[i]++
				}
			}
		}
		r := newRailCounter(rows)
		win := recording.Window{OwnStart: 0, OwnEnd: int64(owned)}
		r.add(win, data, c, pad)
		r.add(win, data, c, pad)
		for i := range want {
			want[i] *= 2
		}
		if !slices.Equal(r.rails, want) || r.samples != int64(2*owned) {
			t.Errorf("owned %d: rails %v, samples %d; want %v, %d", owned, r.rails, r.samples, want, 2*owned)
		}
	}
}
