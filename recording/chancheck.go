package recording

import (
	"fmt"
	"math"
	"slices"

	"dspk/probe"
)

// Limits of [CheckChannels]: a channel count is refused when another
// count that also divides the file reads the data with a median lag-1
// correlation (of each channel's consecutive samples) of at least
// ChanCorrMin, ChanCorrMargin more than the given count does, and with
// a lag-1 correlation of the first differences ChanDiffCorrMargin more.
// Extracellular data sampled at 10 kHz or more are oversampled, so that
// consecutive samples of one channel correlate; a wrong count puts
// different channels, or samples two or more apart, next to each other,
// and the correlation drops.
const (
	ChanCorrMin        = 0.3
	ChanCorrMargin     = 0.1
	ChanDiffCorrMargin = 0.02
)

// chanChunks and chanChunkLen are the number and length (in samples
// under the given count) of the evenly spaced stretches of a recording
// [CheckChannels] reads.
const (
	chanChunks   = 8
	chanChunkLen = 1000
)

// ChannelCheck is what the data of a recording say about its number of
// channels per sample.
type ChannelCheck struct {
	// Given is the channel count the recording was opened with.
	Given int
	// Corr maps each count tried (the given one, its divisors and small
	// multiples, and extra counts such as a probe's sites and sites+1,
	// each only if it divides the file) to the median over its channels
	// of the lag-1 correlation of consecutive samples.
	Corr map[int]float64
	// DiffCorr maps each count tried to the median lag-1 correlation of
	// the channels' first differences: slow signals shared by all
	// channels (mains, a common reference, an LFP) do not reach it, and
	// a wrong count makes the differences look like white noise's
	// (about −0.5).
	DiffCorr map[int]float64
	// Likely is the count whose correlation is highest.
	Likely int
}

// Wrong reports whether the data read as Likely channels per sample
// beyond doubt rather than as Given (see [ChanCorrMin]).
func (c ChannelCheck) Wrong() bool {
	l, g := c.Likely, c.Given
	return l != g && c.Corr[l] >= ChanCorrMin && c.Corr[l]-c.Corr[g] >= ChanCorrMargin && c.DiffCorr[l]-c.DiffCorr[g] >= ChanDiffCorrMargin
}

// AtLeast returns c with Likely chosen among the counts of at least n
// only (the given count always among them): a file cannot hold a probe's
// sites in fewer channels than it has sites, however the bytes
// correlate. Data whose channels share noise (a common reference,
// spatially correlated noise) correlate when read with a divisor of
// their count, since each "sample" is then a neighbouring channel.
func (c ChannelCheck) AtLeast(n int) ChannelCheck {
	best := c.Given
	for k, v := range c.Corr {
		if k >= n && (v > c.Corr[best] || (v == c.Corr[best] && k < best)) {
			best = k
		}
	}
	c.Likely = best
	return c
}

// String describes the evidence in words.
func (c ChannelCheck) String() string {
	return fmt.Sprintf("consecutive samples of a channel correlate at %.2f (their differences at %.2f; medians over the channels) read as %d channels per sample, "+
		"at %.2f (%.2f) read as %d", c.Corr[c.Likely], c.DiffCorr[c.Likely], c.Likely, c.Corr[c.Given], c.DiffCorr[c.Given], c.Given)
}

// CheckChannels reads up to 8 evenly spaced stretches of 1000 samples of
// rec and measures, for the count rec has and for every other plausible
// count that divides the file (divisors and multiples up to 4 times of
// rec's count, and extra), how strongly consecutive samples of each
// channel correlate when the same bytes are read with that count (see
// [ChannelCheck]).
func CheckChannels(rec Recording, extra ...int) (ChannelCheck, error) {
	C := rec.Channels()
	c := ChannelCheck{Given: C, Corr: map[int]float64{}, DiffCorr: map[int]float64{}, Likely: C}
	n := rec.Samples()
	total := n * int64(C)
	var cands []int
	add := func(k int) {
		if k >= 1 && k <= 1<<16 && total%int64(k) == 0 && total/int64(k) >= 16 && !slices.Contains(cands, k) {
			cands = append(cands, k)
		}
	}
	add(C)
	for d := 2; d < C; d++ {
		if C%d == 0 {
			add(d)
		}
	}
	for k := 2; k <= 4; k++ {
		add(k * C)
	}
	for _, k := range extra {
		add(k)
	}
	if n < 16 {
		return c, nil
	}
	chunk := min(int64(chanChunkLen), n)
	var starts []int64
	for i := range int64(chanChunks) {
		starts = append(starts, i*(n-chunk)/max(chanChunks-1, 1))
	}
	starts = slices.Compact(starts)
	bufs := make([][]int16, 0, len(starts))
	for _, s := range starts {
		b := make([]int16, int(chunk)*C)
		if err := rec.ReadInt16(b, s, int(chunk)); err != nil {
			return c, err
		}
		bufs = append(bufs, b)
	}
	for _, k := range cands {
		c.Corr[k] = lagCorr(bufs, k, 0)
		c.DiffCorr[k] = lagCorr(bufs, k, 1)
		if c.Corr[k] > c.Corr[c.Likely] {
			c.Likely = k
		}
	}
	return c, nil
}

// lagCorr is the median over the k columns of the flat blocks bufs, read
// as k interleaved channels, of the correlation of each column's
// consecutive values, or with diff 1 of its consecutive first
// differences (columns without variance are left out).
func lagCorr(bufs [][]int16, k, diff int) float64 {
	s, s2, sxy, m := make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	for _, b := range bufs {
		frames := len(b) / k
		for t := 0; t+diff+1 < frames; t++ {
			r0, r1 := b[t*k:(t+1)*k], b[(t+1)*k:(t+2)*k]
			for j := range r0 {
				x, y := float64(r0[j]), float64(r1[j])
				if diff == 1 {
					r2 := b[(t+2)*k : (t+3)*k]
					x, y = y-x, float64(r2[j])-y
				}
				s[j] += x
				s2[j] += x * x
				sxy[j] += x * y
				m[j]++
			}
		}
	}
	var corr []float64
	for j := range k {
		if m[j] < 2 {
			continue
		}
		mu := s[j] / m[j]
		v := s2[j]/m[j] - mu*mu
		if v <= 1e-9*max(1, mu*mu) {
			continue
		}
		corr = append(corr, (sxy[j]/m[j]-mu*mu)/v)
	}
	if len(corr) == 0 {
		return math.Inf(-1)
	}
	slices.Sort(corr)
	return corr[len(corr)/2]
}

// checkChannels checks the channel count of a raw file (the SpikeGLX
// .meta and Open Ephys structure.oebin state theirs, and [Open] refuses a
// count that contradicts them) against the probe's site count and the
// data themselves: a count the data contradict beyond doubt
// ([ChannelCheck.Wrong]) is refused, naming the count they suggest; one
// of twice the probe's sites or more is only warned of (a file may hold
// several probes).
func (in Input) checkChannels(rec Recording, pr *probe.Probe) ([]string, error) {
	if rec.Format() != "raw" {
		return nil, nil
	}
	C, sites := rec.Channels(), pr.Len()
	what := fmt.Sprintf("-channels %d", C)
	fix := func(n int) string { return fmt.Sprintf("pass -channels %d", n) }
	if in.Channels == 0 {
		info := rawInfoPath(rec.Name())
		what = fmt.Sprintf("%s states %d channels per sample", info, C)
		fix = func(n int) string { return fmt.Sprintf("fix its shape to [-1, %d]", n) }
	}
	c, err := CheckChannels(rec, sites, sites+1, 384, 385)
	if err != nil {
		return nil, err
	}
	c = c.AtLeast(sites)
	if c.Wrong() {
		return nil, &OptionError{fmt.Sprintf("%s: %s: the data look like %d channels per sample (%s); %s",
			rec.Name(), what, c.Likely, c, fix(c.Likely))}
	}
	if C >= 2*sites {
		return []string{fmt.Sprintf("%s: %s, but probe %s has %d sites: a file usually holds one row per site, and perhaps a sync row; check the channel count",
			rec.Name(), what, pr.Name, sites)}, nil
	}
	return nil, nil
}
