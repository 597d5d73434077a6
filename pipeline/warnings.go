package pipeline

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"dspk/internal/par"
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

// railCounter counts the samples of each site at the int16 rails and
// keeps each site's smallest and largest value.
type railCounter struct {
	rows    []int // file row of each site
	rails   []int64
	lo, hi  []int16
	samples int64
}

func newRailCounter(rows []int) *railCounter {
	r := &railCounter{rows: rows, rails: make([]int64, len(rows)), lo: make([]int16, len(rows)), hi: make([]int16, len(rows))}
	for i := range rows {
		r.lo[i], r.hi[i] = 32767, -32768
	}
	return r
}

// add counts the owned samples of a raw window (dst[t*C+c] as
// [recording.ReadWindow] fills it), spread over the cores: a window is
// 23 M samples for Neuropixels, and the count runs on the host while the
// device works. Each part first takes every file column's smallest and
// largest value in one contiguous sweep (no per-site gather, so it runs
// at memory speed); only columns whose extremes touch a rail are swept
// again to count their rail samples, which real recordings rarely need.
func (r *railCounter) add(win recording.Window, data []int16, c, pad int) {
	n := win.Owned()
	parts := max(1, min(runtime.GOMAXPROCS(0), n/4096))
	los, his := make([][]int16, parts), make([][]int16, parts)
	counts := make([][]int64, parts)
	// Part p is the owned samples [p·n/parts, (p+1)·n/parts).
	par.Split(n, parts, func(p, first, end int) {
		t0, t1 := pad+first, pad+end
		lo, hi := make([]int16, c), make([]int16, c)
		for j := range c {
			lo[j], hi[j] = 32767, -32768
		}
		for t := t0; t < t1; t++ {
			colExtremes(data[t*c:(t+1)*c], lo, hi)
		}
		var railed []int
		for j := range c {
			if lo[j] == -32768 || hi[j] == 32767 {
				railed = append(railed, j)
			}
		}
		var cnt []int64
		if len(railed) > 0 {
			cnt = make([]int64, c)
			for t := t0; t < t1; t++ {
				row := data[t*c : (t+1)*c]
				for _, j := range railed {
					if v := row[j]; v == 32767 || v == -32768 {
						cnt[j]++
					}
				}
			}
		}
		los[p], his[p], counts[p] = lo, hi, cnt
	})
	for p := range parts {
		for i, f := range r.rows {
			r.lo[i], r.hi[i] = min(r.lo[i], los[p][f]), max(r.hi[i], his[p][f])
			if counts[p] != nil {
				r.rails[i] += counts[p][f]
			}
		}
	}
	r.samples += int64(n)
}

// colExtremes lowers lo and raises hi, element by element, to row's
// values.
func colExtremes(row, lo, hi []int16) {
	lo, hi = lo[:len(row)], hi[:len(row)]
	for j, v := range row {
		lo[j] = min(lo[j], v)
		hi[j] = max(hi[j], v)
	}
}

// flatWarnings describes the sites whose values never changed: all of
// them (no spikes can be found; the wrong file or stream, or a recording
// of nothing), or those that did not (dead or disconnected sites).
func (r *railCounter) flatWarnings(name string) []string {
	if r.samples == 0 {
		return nil
	}
	var flat []string
	for i := range r.rows {
		if r.lo[i] == r.hi[i] {
			flat = append(flat, fmt.Sprint(i))
		}
	}
	switch {
	case len(flat) == 0:
		return nil
	case len(flat) == len(r.rows):
		what := "constant"
		if slices.Max(r.hi) == 0 && slices.Min(r.lo) == 0 {
			what = "zero"
		}
		return []string{fmt.Sprintf("%s: every site is %s in the %d samples of the whitening windows: there is no signal to detect "+
			"(the wrong file, stream or -channels, or a recording of nothing)", name, what, r.samples)}
	}
	list := strings.Join(flat, ", ")
	if len(flat) > 8 {
		list = strings.Join(flat[:8], ", ") + fmt.Sprintf(", … (%d sites)", len(flat))
	}
	which := "sites " + list + " are"
	if len(flat) == 1 {
		which = "site " + list + " is"
	}
	return []string{fmt.Sprintf("%s: %s constant in the %d samples of the whitening windows (dead or disconnected?)", name, which, r.samples)}
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

// Warnings returns what the probe and the configuration make legal but
// suspicious: a CAR over fewer than [MinCARChannels] channels. Each run
// reports them first, with what its passes found (Summary.Warnings,
// Global.Warnings, SortGlobal.Warnings): sites clipped at the int16 rails
// (above [RailShareWarn]), sites whose values never change (all of them:
// no signal), a whitening estimated from fewer than [MinWhiteningSamples]
// samples ([Pipeline.Whitening]) and templates learned from fewer than
// [detect.FewClips] clips. Each is one line naming the file.
func (p *Pipeline) Warnings() []string { return append([]string(nil), p.cfgWarnings...) }

// withWarnings returns have followed by those of more not in have.
func withWarnings(have, more []string) []string {
	seen := map[string]bool{}
	for _, w := range have {
		seen[w] = true
	}
	out := append([]string(nil), have...)
	for _, w := range more {
		if !seen[w] {
			out = append(out, w)
		}
	}
	return out
}
