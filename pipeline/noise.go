package pipeline

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"dspk/internal/par"
	"dspk/kilosort"
	"dspk/preprocess"
	"dspk/probe"
	"dspk/recording"
)

// Noise-level sampling, as SpikeInterface 0.105's get_noise_levels does by
// default (method "mad", get_random_sample_slices): NoiseChunks chunks of
// NoiseChunkS seconds at random starts, each channel's median absolute
// deviation over 0.6745 per chunk, averaged over the chunks.
const (
	NoiseChunks = 20
	NoiseChunkS = 0.5
	// NoiseSeed seeds the chunks' starts, so that a folder's noise levels
	// do not change from run to run.
	NoiseSeed = 0
	// noiseMarginS is the context preprocessed on each side of a chunk
	// and then dropped: the high-pass's response decays well within it
	// (package preprocess), so a chunk's samples are those of the sort's
	// own windows.
	noiseMarginS = 0.1
	// madScale is the MAD of a unit normal, scipy's and SpikeInterface's
	// constant.
	madScale = 0.6744897501960817
)

// ErrNoiseTooShort is returned by [NoiseLevels] for a recording too short
// to sample chunks from.
var ErrNoiseTooShort = errors.New("too short to sample noise levels")

// NoiseLevels returns each site's noise level (probe order) in the
// recording's units, from the data preprocessed as the sort preprocesses
// them (cfg's sign, mean removal, common average reference and
// high-pass) but not whitened: NoiseChunks chunks of NoiseChunkS seconds
// (shorter in a recording too short for them) start at uniformly random
// samples of cfg's time range (seed NoiseSeed), each read with
// noiseMarginS of context on both sides; a site's level is the mean over
// the chunks of its median absolute deviation from its median over
// 0.6745. Errors name the recording; one too short for a chunk and its
// context is [ErrNoiseTooShort].
func NoiseLevels(rec recording.Recording, pr *probe.Probe, cfg Config) ([]float32, error) {
	fs := rec.SampleRate()
	imin, imax := int64(cfg.Tmin*fs), rec.Samples()
	if !cfg.Tmax.None() {
		imax = min(imax, int64(float64(cfg.Tmax)*fs))
	}
	margin := int(noiseMarginS * fs)
	chunk := int(NoiseChunkS * fs)
	if avail := imax - imin - int64(2*margin); avail < int64(chunk) {
		chunk = int(avail) - 1
	}
	if chunk < 2 {
		return nil, fmt.Errorf("%s: %d samples: %w", rec.Name(), imax-imin, ErrNoiseTooShort)
	}
	ks := cfg.Settings
	ks.Fs, ks.BatchSize, ks.NT = fs, chunk, margin
	pp := preprocess.Params{Settings: ks, ChanMap: pr.ChanMap, NChanFile: pr.NChanFile, HighpassOrder: kilosort.HighpassOrder}
	if cfg.CARGroups {
		pp.Groups = pr.Shank
	}
	pre, err := preprocess.New(nil, pp)
	if err != nil {
		return nil, fmt.Errorf("%s: noise levels: %w", rec.Name(), err)
	}
	defer pre.Close()
	// SpikeInterface's starts: integers in [low, high] with both ends
	// possible, sorted.
	rng := rand.New(rand.NewPCG(NoiseSeed, NoiseSeed))
	lo, hi := imin+int64(margin), imax-int64(chunk+margin)
	starts := make([]int64, NoiseChunks)
	for k := range starts {
		starts[k] = lo + rng.Int64N(hi-lo+1)
	}
	slices.Sort(starts)
	C, T, cf := pre.Channels(), pre.Len(), rec.Channels()
	raw := make([]int16, T*cf)
	x := make([]float32, C*T)
	sum := make([]float64, C)
	work := make([][]float32, par.Workers(C))
	for w := range work {
		work[w] = make([]float32, chunk)
	}
	for _, s := range starts {
		if err := rec.ReadInt16(raw, s-int64(margin), T); err != nil {
			return nil, fmt.Errorf("%s: noise levels: %w", rec.Name(), err)
		}
		if err := pre.Run(x, raw, nil); err != nil {
			return nil, fmt.Errorf("%s: noise levels: %w", rec.Name(), err)
		}
		par.Each(C, len(work), func(w, c int) {
			sum[c] += mad(work[w], x[c*T+margin:c*T+margin+chunk])
		})
	}
	out := make([]float32, C)
	for c := range out {
		out[c] = float32(sum[c] / NoiseChunks)
	}
	return out, nil
}

// mad returns numpy's median(|x − median(x)|) / 0.6745 of x, using buf
// (len(x)) as scratch.
func mad(buf, x []float32) float64 {
	copy(buf, x)
	m := medianOf(buf)
	for k, v := range x {
		d := float64(v) - m
		if d < 0 {
			d = -d
		}
		buf[k] = float32(d)
	}
	return medianOf(buf) / madScale
}

// medianOf returns numpy's median of x (the mean of the two middle
// values for an even length), reordering x.
func medianOf(x []float32) float64 {
	n := len(x)
	lo := preprocess.LowerMedian(x) // rank (n−1)/2
	if n%2 == 1 {
		return float64(lo)
	}
	// The upper middle, rank n/2: lo again if more than n/2 values are
	// at most lo, else the least value above it.
	atMost, hi := 0, float32(math.Inf(1))
	for _, v := range x {
		if v <= lo {
			atMost++
		} else if v < hi {
			hi = v
		}
	}
	if atMost > n/2 {
		hi = lo
	}
	return (float64(lo) + float64(hi)) / 2
}
