package pipeline

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"dspk/recording"
)

// RailShareWarn is the share of a site's samples at the int16 rails
// (−32768 or 32767) in the whitening windows above which the run warns:
// clipped data distort the filter and the whitening and make spurious
// detections. Real recordings have next to none.
const RailShareWarn = 0.01

// MinWhiteningSamples is the number of owned samples in the whitening
// windows below which the run warns that the whitening matrix rests on
// too little data: 60 000, one default window (2 s at 30 kHz), which is
// the least Kilosort4 ever uses with its defaults.
const MinWhiteningSamples = 60000

// railCounter counts the samples of each site at the int16 rails.
type railCounter struct {
	rows    []int // file row of each site
	rails   []int64
	samples int64
}

func newRailCounter(rows []int) *railCounter {
	return &railCounter{rows: rows, rails: make([]int64, len(rows))}
}

// add counts the owned samples of a raw window (dst[t*C+c] as
// [recording.ReadWindow] fills it), spread over the cores: a window is
// 23 M samples for Neuropixels, and the count runs on the host while the
// device works.
func (r *railCounter) add(win recording.Window, data []int16, c, pad int) {
	n := win.Owned()
	parts := max(1, min(runtime.GOMAXPROCS(0), n/4096))
	counts := make([][]int64, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]int64, len(r.rows))
			for t := pad + p*n/parts; t < pad+(p+1)*n/parts; t++ {
				row := data[t*c : (t+1)*c]
				for i, f := range r.rows {
					if v := row[f]; v == 32767 || v == -32768 {
						local[i]++
					}
				}
			}
			counts[p] = local
		}()
	}
	wg.Wait()
	for _, local := range counts {
		for i, k := range local {
			r.rails[i] += k
		}
	}
	r.samples += int64(n)
}

// warnings describes the sites above RailShareWarn.
func (r *railCounter) warnings(name string) []string {
	if r.samples == 0 {
		return nil
	}
	var bad []string
	worst, worstShare := -1, 0.0
	for i, k := range r.rails {
		share := float64(k) / float64(r.samples)
		if share > RailShareWarn {
			bad = append(bad, fmt.Sprint(i))
			if share > worstShare {
				worst, worstShare = i, share
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	list := strings.Join(bad, ", ")
	if len(bad) > 8 {
		list = strings.Join(bad[:8], ", ") + fmt.Sprintf(", … (%d sites)", len(bad))
	}
	which := "sites " + list + " have"
	if len(bad) == 1 {
		which = "site " + list + " has"
	}
	return []string{fmt.Sprintf("%s: %s more than %g %% of the samples at the int16 rails "+
		"(site %d: %.1f %%); clipped data give spurious detections", name, which, 100*RailShareWarn, worst, 100*worstShare)}
}

// Warnings returns what the settings and the passes run so far found
// legal but suspicious: CAR over fewer than [MinCARChannels] channels,
// sites clipped at the int16 rails (above [RailShareWarn])
// and a whitening estimated from fewer than [MinWhiteningSamples]
// samples. Each is one line naming the file.
func (p *Pipeline) Warnings() []string { return append([]string(nil), p.warnings...) }
