package quality

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// unitMetrics computes every metric of unit u (row i) into cols.
func (in *Input) unitMetrics(u unit, i int, tm *templateInfo, pc *pcData, opt Options, cols *columns) {
	n := len(u.times)
	T := in.NumSamples
	fs := in.SampleRate
	dur := float64(T) / fs
	cols.set("num_spikes", i, float64(n))
	if n > 0 {
		cols.set("firing_rate", i, float64(n)/dur)
	}
	cols.set("presence_ratio", i, presenceRatio(u.times, T, fs, opt))
	r, c := isiViolations(u.times, T, fs, opt)
	cols.set("isi_violations_ratio", i, r)
	cols.set("isi_violations_count", i, c)
	r, c = rpViolations(u.times, T, fs, opt)
	cols.set("rp_contamination", i, r)
	cols.set("rp_violations", i, c)
	cols.set("sliding_rp_violation", i, slidingRP(u.times, T, fs, opt))
	cols.set("fraction_rpvs", i, fractionRPVs(u.times, T, fs, opt))
	cols.set("firing_range", i, firingRange(u.times, T, fs, opt))
	if in.Amplitudes != nil {
		amps := make([]float64, n)
		for k, s := range u.idx {
			amps[k] = float64(in.Amplitudes[s])
		}
		m, rg := amplitudeCV(u.times, amps, T, fs, opt)
		cols.set("amplitude_cv_median", i, m)
		cols.set("amplitude_cv_range", i, rg)
		cols.set("amplitude_cutoff", i, amplitudeCutoff(amps, opt))
		cols.set("amplitude_median", i, median(amps))
		if tm != nil && in.NoiseLevels != nil {
			cols.set("sd_ratio", i, in.sdRatio(u, amps, i, tm, opt))
		}
	}
	if tm != nil && in.NoiseLevels != nil {
		cols.set("snr", i, tm.peak[i]/float64(in.NoiseLevels[tm.main[i]]))
	}
	if in.SpikeDepths != nil {
		d := make([]float64, n)
		for k, s := range u.idx {
			d[k] = float64(in.SpikeDepths[s])
		}
		p, sd, mad := drift(u.times, d, T, fs, opt)
		cols.set("drift_ptp", i, p)
		cols.set("drift_std", i, sd)
		cols.set("drift_mad", i, mad)
	}
	if pc != nil {
		pc.unitMetrics(i, opt, cols)
	}
	if tm != nil {
		in.shapeMetrics(i, tm, opt.Shape, cols)
	}
}

// presenceRatio is SpikeInterface's presence_ratio of one unit.
func presenceRatio(t []int64, T int64, fs float64, opt Options) float64 {
	bin := int64(opt.PresenceRatioBinS * fs)
	if T < bin || len(t) == 0 {
		return nan
	}
	edges := arangeEdges(T/bin*bin+1, bin)
	if len(edges) < 2 {
		return 0
	}
	fr := float64(len(t)) / (float64(T) / fs)
	thr := int64(math.Floor(fr * opt.PresenceRatioBinS * opt.PresenceRatioMeanFRRatio))
	active := 0
	for _, c := range histogramEdges(t, edges) {
		if c > thr {
			active++
		}
	}
	return float64(active) / float64(len(edges)-1)
}

// isiViolations is SpikeInterface's isi_violations_ratio and
// isi_violations_count (-1 without spikes).
func isiViolations(t []int64, T int64, fs float64, opt Options) (ratio, count float64) {
	n := len(t)
	if n == 0 {
		return nan, -1
	}
	thr := opt.ISIThresholdMs / 1000
	minISI := opt.MinISIMs / 1000
	nv := 0
	for k := 1; k < n; k++ {
		if float64(t[k])/fs-float64(t[k-1])/fs < thr {
			nv++
		}
	}
	violationTime := 2 * float64(n) * (thr - minISI)
	totalRate := float64(n) / (float64(T) / fs)
	return float64(nv) / violationTime / totalRate, float64(nv)
}

// rpViolations is SpikeInterface's rp_contamination and rp_violations:
// every pair of spikes at most round(refractory period) samples apart
// counts (the censored period enters only the contamination formula).
func rpViolations(t []int64, T int64, fs float64, opt Options) (contamination, count float64) {
	n := int64(len(t))
	if n == 0 {
		return nan, -1
	}
	tc := int64(math.RoundToEven(opt.CensoredPeriodMs * fs * 1e-3))
	tr := int64(math.RoundToEven(opt.RefractoryPeriodMs * fs * 1e-3))
	var nv int64
	for i := range t {
		for j := i + 1; j < len(t) && t[j]-t[i] <= tr; j++ {
			nv++
		}
	}
	if n <= 1 {
		return nan, float64(nv)
	}
	den := 1 - float64(nv*(T-2*n*tc))/float64(n*n*(tr-tc))
	if den < 0 {
		return 1, float64(nv)
	}
	return 1 - math.Sqrt(den), float64(nv)
}

// fractionRPVs is Bombcell's fractionRPVs_estimatedTauR with its default
// rpv_method "hill" and one refractory period: Hill et al.'s
// contamination f from the consecutive inter-spike intervals in
// [tauC, tauR] (Bombcell's MATLAB count; its Python counts every ISI up to
// tauR, the censored ones too), the smaller root of
// k·f² − k·f + violations·duration = 0 with k = 2·(tauR − tauC)·n². Where
// the root is complex (more violations than any contamination explains:
// two or three in a few hundred spikes of a slow unit) Bombcell takes
// violations / (2·(tauR − tauC)·(n − violations)), which is then above
// 1, and caps it at 1. NaN with fewer than two spikes, 0 without
// violations. The duration is the recording's (Bombcell's single time
// chunk spans the first to the last spike of the sort).
func fractionRPVs(t []int64, T int64, fs float64, opt Options) float64 {
	n := len(t)
	if n <= 1 {
		return nan
	}
	tauR, tauC := opt.RPVTauRMs/1000, opt.RPVTauCMs/1000
	nv := 0
	for k := 1; k < n; k++ {
		if isi := float64(t[k]-t[k-1]) / fs; isi >= tauC && isi <= tauR {
			nv++
		}
	}
	if nv == 0 {
		return 0
	}
	N, V := float64(n), float64(nv)
	k := 2 * (tauR - tauC) * N * N
	disc := 1 - 4*V*(float64(T)/fs)/k
	var f float64
	switch {
	case disc >= 0:
		f = (1 - math.Sqrt(disc)) / 2
	case nv < n:
		f = V / (2 * (tauR - tauC) * (N - V))
	default:
		f = 1
	}
	return min(f, 1)
}

// slidingRP is SpikeInterface's sliding_rp_violation: the least tested
// contamination whose expected violations make the observed count
// improbable (Poisson confidence > 0.9) at some refractory period above
// the excluded one.
func slidingRP(t []int64, T int64, fs float64, opt Options) float64 {
	n := len(t)
	if n <= opt.SlidingRPMinSpikes {
		return nan
	}
	cont := opt.SlidingRPContamination
	if cont == nil {
		for k := range 70 {
			cont = append(cont, (0.5+0.5*float64(k))/100)
		}
	}
	rpBin := opt.SlidingRPBinMs / 1000
	stop := opt.SlidingRPMaxRefMs / 1000
	nEdges := int(math.Ceil(stop / rpBin))
	if nEdges < 2 {
		return nan
	}
	edges := make([]float64, nEdges)
	for k := range edges {
		edges[k] = float64(k) * rpBin
	}
	half := (edges[1] - edges[0]) / 2
	bin := max(int64(opt.SlidingRPBinMs/1000*fs), 1)
	window := int64(opt.SlidingRPWindowS * fs)
	// The positive half of the autocorrelogram: ordered pairs i ≠ j with
	// 0 ≤ t_i − t_j < window, binned by (t_i − t_j) / bin.
	acg := make([]float64, nEdges)
	for i := range t {
		for j := i; j >= 0; j-- {
			d := t[i] - t[j]
			if d >= window || d/bin >= int64(nEdges) {
				break
			}
			if j == i {
				continue
			}
			acg[d/bin]++
		}
		// Equal times count both ways: the pairs with j after i.
		for j := i + 1; j < n && t[j] == t[i]; j++ {
			acg[0]++
		}
	}
	for k := 1; k < nEdges; k++ {
		acg[k] += acg[k-1]
	}
	fr := float64(n) / (float64(T) / fs)
	duration := float64(n) / fr
	for _, c := range cont {
		nc := float64(n) * c
		nb := float64(n) * (1 - c)
		for k := range nEdges {
			center := edges[k] + half
			if center <= opt.SlidingRPExcludeBelowMs/1000 {
				continue
			}
			ref := center + rpBin/2
			expected := 2 * ref / duration * nc * (nb + (nc-1)/2)
			if 1-poissonCDF(acg[k], expected) > 0.9 {
				return c
			}
		}
	}
	return nan
}

// poissonCDF is scipy.stats.poisson.cdf(k, mu).
func poissonCDF(k, mu float64) float64 {
	if k < 0 {
		return 0
	}
	return mathext.GammaIncRegComp(math.Floor(k)+1, mu)
}

// firingRange is SpikeInterface's firing_range.
func firingRange(t []int64, T int64, fs float64, opt Options) float64 {
	bin := int64(opt.FiringRangeBinS * fs)
	if len(t) == 0 || T < bin {
		return nan
	}
	h := histogramEdges(t, arangeEdges(T/bin*bin+1, bin))
	rates := make([]float64, len(h))
	for k, c := range h {
		rates[k] = float64(c) / opt.FiringRangeBinS
	}
	return percentile(rates, opt.FiringRangePercentiles[1]) - percentile(rates, opt.FiringRangePercentiles[0])
}
