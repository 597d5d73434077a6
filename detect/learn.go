package detect

import (
	"fmt"
	"math"
	"slices"

	"dspk/compute"
	"dspk/linalg"
)

// The boxes of Kilosort4's single-channel peak finder (kilosort4.md §6a),
// in channel indices (not geometry) and samples.
const (
	// peakChanRadius and peakTimeRadius: a peak is the maximum of |x|
	// over ±4 channels × ±5 samples (max_pool2d 9×11).
	peakChanRadius = 4
	peakTimeRadius = 5
	// isoChanRadius and isoTimeRadius: an isolated peak is the only peak
	// in ±6 channels × ±30 samples (avg_pool2d 13×61).
	isoChanRadius = 6
	isoTimeRadius = 30
)

// MinClips is the fewest clips [Learner.Templates] accepts: five per
// template of Kilosort4's six; fewer give templates that are mostly
// noise (Kilosort4 itself fails below n_templates). Small probes
// (tetrodes, stereotrodes) with few isolated peaks in the sampled windows
// use what there is down to this number.
const MinClips = 30

// FewClips is the number of clips below which templates are learned but
// deserve a warning: Kilosort4's runs on large probes have thousands.
const FewClips = 100

// FindClips appends to dst the clips of the isolated single-channel peaks
// of one whitened window x ([C][T] row-major) and returns the extended
// slice. Following Kilosort4 (kilosort4.md §6a):
//
//   - a peak is a sample with |x| > prm.ThSingleCh that equals the maximum
//     of |x| over ±4 channel indices × ±5 samples (clipped at the edges);
//   - it is isolated if no other peak lies within ±6 channel indices ×
//     ±30 samples (peaks in the padding columns count as neighbours);
//   - isolated peaks in the first or last prm.NT columns are dropped;
//   - each clip is x[c, t−NT0Min … t−NT0Min+NT−1] (the peak at index
//     NT0Min, either polarity), scaled to unit L2 norm.
//
// Clips come channel by channel, in time order within a channel. FindClips
// panics if len(x) != C·T or T ≤ 2·prm.NT.
func FindClips(dst []float32, x []float32, C, T int, prm Params) []float32 {
	nt, t0 := prm.NT, prm.NT0Min
	if C < 1 || T <= 2*nt || len(x) != C*T {
		panic(fmt.Sprintf("detect: FindClips of %d values as %d channels × %d samples (nt %d)", len(x), C, T, nt))
	}
	th := float32(prm.ThSingleCh)
	abs := func(v float32) float32 { return float32(math.Abs(float64(v))) }
	// Peaks, per channel in time order.
	peaks := make([][]int, C)
	for c := range C {
		row := x[c*T : (c+1)*T]
		for t, v := range row {
			a := abs(v)
			if !(a > th) {
				continue
			}
			isPeak := true
			for cc := max(c-peakChanRadius, 0); cc <= min(c+peakChanRadius, C-1) && isPeak; cc++ {
				r := x[cc*T : (cc+1)*T]
				for tt := max(t-peakTimeRadius, 0); tt <= min(t+peakTimeRadius, T-1); tt++ {
					if abs(r[tt]) > a {
						isPeak = false
						break
					}
				}
			}
			if isPeak {
				peaks[c] = append(peaks[c], t)
			}
		}
	}
	for c := range C {
		for _, t := range peaks[c] {
			if t < nt || t >= T-nt {
				continue
			}
			count := 0
			for cc := max(c-isoChanRadius, 0); cc <= min(c+isoChanRadius, C-1); cc++ {
				p := peaks[cc]
				i, _ := slices.BinarySearch(p, t-isoTimeRadius)
				for ; i < len(p) && p[i] <= t+isoTimeRadius; i++ {
					count++
				}
			}
			if count != 1 {
				continue
			}
			clip := x[c*T+t-t0 : c*T+t-t0+nt]
			var ss float64
			for _, v := range clip {
				ss += float64(v) * float64(v)
			}
			norm := math.Sqrt(ss)
			for _, v := range clip {
				dst = append(dst, float32(float64(v)/norm))
			}
		}
	}
	return dst
}

// Learner collects the clips of whitened windows and learns the universal
// templates from them (kilosort4.md §6a). Feed it windows 0, 25, 50, … of
// the recording with [Learner.Add] until [Learner.Full], then call
// [Learner.Templates].
type Learner struct {
	prm     Params
	c, t    int
	clips   []float32
	scratch []float32
	windows int
	full    bool
	gpu     *gpuClipFinder // made by the first AddWindow of a GPU window
}

// NewLearner returns a Learner for windows of C channels × T samples. It
// panics if the parameters are invalid or T ≤ 2·prm.NT.
func NewLearner(C, T int, prm Params) *Learner {
	if err := prm.Validate(); err != nil {
		panic(err.Error())
	}
	if C < 1 || T <= 2*prm.NT {
		panic(fmt.Sprintf("detect: NewLearner for %d channels × %d samples (nt %d)", C, T, prm.NT))
	}
	return &Learner{prm: prm, c: C, t: T}
}

// Add finds the clips of one whitened window ([C][T] row-major, see
// [FindClips]) and keeps them, unless that would take the total past
// prm.MaxClips: then it keeps none and the learner is full, as Kilosort4
// stops before the window that would overflow. It returns the number of
// clips added.
func (l *Learner) Add(x []float32) int {
	if l.full {
		return 0
	}
	l.scratch = FindClips(l.scratch[:0], x, l.c, l.t, l.prm)
	return l.keep()
}

// AddWindow is Add of the working array of win, a whitened C×T window on
// any device: on a GPU the clips are found there and only they come back
// (the same clips as Add of the window's data). Call Close when done with
// a learner that was given GPU windows.
func (l *Learner) AddWindow(win *compute.Window) (int, error) {
	if win.Channels() != l.c || win.Len() != l.t {
		panic(fmt.Sprintf("detect: Learner.AddWindow of a %d×%d window for %d channels × %d samples", win.Channels(), win.Len(), l.c, l.t))
	}
	if l.full {
		return 0, nil
	}
	if win.Device().Kind() != compute.CUDA {
		x, err := win.Data()
		if err != nil {
			return 0, err
		}
		return l.Add(x), nil
	}
	if l.gpu != nil && l.gpu.dev != win.Device() {
		if err := l.gpu.Close(); err != nil {
			return 0, err
		}
		l.gpu = nil
	}
	if l.gpu == nil {
		g, err := newGPUClipFinder(win.Device(), l.c, l.t, l.prm)
		if err != nil {
			return 0, err
		}
		l.gpu = g
	}
	var err error
	if l.scratch, err = l.gpu.find(l.scratch[:0], win.DataMem().Ptr); err != nil {
		return 0, err
	}
	return l.keep(), nil
}

// Close frees what AddWindow holds on a GPU; it may be called more than
// once, and the learner stays usable.
func (l *Learner) Close() error {
	if l.gpu == nil {
		return nil
	}
	err := l.gpu.Close()
	l.gpu = nil
	return err
}

// keep keeps the clips in scratch, as Add describes.
func (l *Learner) keep() int {
	n := len(l.scratch) / l.prm.NT
	if l.Len()+n > l.prm.MaxClips {
		l.full = true
		return 0
	}
	l.clips = append(l.clips, l.scratch...)
	l.windows++
	return n
}

// Len returns the number of clips kept.
func (l *Learner) Len() int { return len(l.clips) / l.prm.NT }

// Windows returns the number of windows whose clips were kept.
func (l *Learner) Windows() int { return l.windows }

// Full reports whether the clip budget was reached.
func (l *Learner) Full() bool { return l.full }

// Clips returns the kept clips, Len()×NT row-major (not a copy).
func (l *Learner) Clips() []float32 { return l.clips }

// Templates learns the universal templates from the kept clips:
//
//   - WPCA: the NPCs leading right singular vectors of the uncentred clips
//     ([linalg.PCABasis]: float64 Gram matrix; each vector's entry of
//     largest magnitude positive);
//   - WTEMP: the NTemplates k-means centres of the clips ([linalg.KMeans]:
//     k-means++, best of 10 runs, seeded by prm.Seed), each scaled to unit
//     L2 norm, ordered by cluster size (largest first, ties by k-means
//     order).
//
// It returns an error if fewer than max(MinClips, NTemplates) clips were
// found; from that number on, any count is used as it is.
func (l *Learner) Templates() (*Templates, error) {
	return TemplatesFromClips(l.clips, l.prm, l.windows)
}

// TemplatesFromClips is [Learner.Templates] for clips gathered elsewhere
// (n×prm.NT row-major, unit-norm rows); windows is only used in the
// error message.
func TemplatesFromClips(clips []float32, prm Params, windows int) (*Templates, error) {
	nt := prm.NT
	if len(clips)%nt != 0 {
		panic(fmt.Sprintf("detect: %d clip values are not a multiple of nt = %d", len(clips), nt))
	}
	n := len(clips) / nt
	need := max(MinClips, prm.NTemplates)
	if n < need {
		return nil, fmt.Errorf("detect: only %d isolated single-channel peaks above %g SD in %d whitened windows; "+
			"learning %d universal templates needs at least %d. Noise-like data usually means a wrong channel count "+
			"or data type; otherwise supply a templates file (wTEMP/wPCA .npz, e.g. from a longer recording of the same probe; "+
			"dspk -templates), learn from a longer stretch or more windows (-tmin/-tmax, a smaller -nskip) "+
			"or lower Th_single_ch (dspk -th-single-ch)", n, prm.ThSingleCh, windows, prm.NTemplates, need)
	}
	// The feature basis and the templates are independent: the basis is
	// computed beside the k-means.
	var basis []float64
	done := make(chan struct{})
	go func() {
		defer close(done)
		basis, _ = linalg.PCABasis(clips, n, nt, prm.NPCs)
	}()
	km, err := linalg.KMeans(clips, n, nt, prm.NTemplates, linalg.KMeansOptions{Seed: prm.Seed})
	<-done
	if err != nil {
		return nil, fmt.Errorf("detect: learning templates: %w", err)
	}
	k := prm.NTemplates
	size := make([]int, k)
	for _, lab := range km.Labels {
		size[lab]++
	}
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return size[b] - size[a] })
	tm := &Templates{NT: nt, K: k, P: prm.NPCs, WTEMP: make([]float32, k*nt), WPCA: make([]float32, prm.NPCs*nt)}
	for i, j := range order {
		c := km.Centers[j*nt : (j+1)*nt]
		var ss float64
		for _, v := range c {
			ss += v * v
		}
		norm := math.Sqrt(ss)
		if !(norm > 0) {
			return nil, fmt.Errorf("detect: learned template %d has norm %g", i, norm)
		}
		for m, v := range c {
			tm.WTEMP[i*nt+m] = float32(v / norm)
		}
	}
	for i, v := range basis {
		tm.WPCA[i] = float32(v)
	}
	return tm, nil
}
