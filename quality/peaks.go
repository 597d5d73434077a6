package quality

import (
	"math"
	"sync"
)

// This file holds scipy.signal's find_peaks with a prominence and a width
// condition, and resample_poly's upsampling, as SpikeInterface's template
// metrics use them.

// peak is one peak found by findPeaks.
type peak struct {
	at                  int     // sample index (the middle of a plateau)
	prominence          float64 // height above the higher of the two bases
	leftBase, rightBase int
	width               float64 // width at half prominence, in samples
	leftIP, rightIP     float64 // interpolated ends of that width
}

// findPeaks is scipy.signal.find_peaks(x, prominence=minProm, width=0):
// the local maxima (plateaus by their middle) whose prominence is at
// least minProm, with their widths at half prominence.
func findPeaks(x []float64, minProm float64) []peak {
	var out []peak
	n := len(x)
	for i := 1; i < n-1; i++ {
		if !(x[i-1] < x[i]) {
			continue
		}
		ahead := i + 1
		for ahead < n-1 && x[ahead] == x[i] {
			ahead++
		}
		if x[ahead] < x[i] {
			p := peak{at: (i + ahead - 1) / 2}
			p.prominence, p.leftBase, p.rightBase = prominence(x, p.at)
			if minProm <= p.prominence {
				p.width, p.leftIP, p.rightIP = peakWidth(x, p)
				out = append(out, p)
			}
			i = ahead
		}
	}
	return out
}

// prominence is scipy's peak prominence of x[pk] with its bases.
func prominence(x []float64, pk int) (float64, int, int) {
	lb, lmin := pk, x[pk]
	for i := pk; i >= 0 && x[i] <= x[pk]; i-- {
		if x[i] < lmin {
			lmin, lb = x[i], i
		}
	}
	rb, rmin := pk, x[pk]
	for i := pk; i < len(x) && x[i] <= x[pk]; i++ {
		if x[i] < rmin {
			rmin, rb = x[i], i
		}
	}
	return x[pk] - max(lmin, rmin), lb, rb
}

// peakWidth is scipy's peak width at half prominence.
func peakWidth(x []float64, p peak) (w, left, right float64) {
	h := x[p.at] - p.prominence*0.5
	i := p.at
	for p.leftBase < i && h < x[i] {
		i--
	}
	left = float64(i)
	if x[i] < h {
		left += (h - x[i]) / (x[i+1] - x[i])
	}
	i = p.at
	for i < p.rightBase && h < x[i] {
		i++
	}
	right = float64(i)
	if x[i] < h {
		right -= (h - x[i]) / (x[i-1] - x[i])
	}
	return right - left, left, right
}

// upsample is scipy.signal.resample_poly(x, up, 1): zero insertion and a
// Kaiser-windowed (β = 5) sinc low-pass of 20·up+1 taps, scaled by up.
func upsample(x []float64, up int) []float64 {
	if up <= 1 {
		return x
	}
	half := 10 * up
	h := upsampleFilter(up)
	out := make([]float64, len(x)*up)
	for j := range out {
		acc := 0.0
		// Taps j + half − up·k in [0, 2·half].
		kmin := max(0, (j-half+up-1)/up)
		if j-half < 0 {
			kmin = 0
		}
		for k := kmin; k < len(x); k++ {
			t := j + half - up*k
			if t < 0 {
				break
			}
			if t <= 2*half {
				acc += x[k] * h[t]
			}
		}
		out[j] = acc
	}
	return out
}

// upsampleFilters caches the low-pass of each factor: every unit's
// channels are upsampled with the same one.
var upsampleFilters sync.Map // int → []float64

// upsampleFilter returns upsample's filter for the factor up.
func upsampleFilter(up int) []float64 {
	if h, ok := upsampleFilters.Load(up); ok {
		return h.([]float64)
	}
	half := 10 * up
	h := make([]float64, 2*half+1)
	beta := 5.0
	alpha := float64(half)
	fc := 1 / float64(up)
	s := 0.0
	for m := range h {
		t := float64(m) - alpha
		r := (float64(m) - alpha) / alpha
		h[m] = fc * sinc(fc*t) * besselI0(beta*math.Sqrt(1-r*r)) / besselI0(beta)
		s += h[m]
	}
	for m := range h {
		h[m] = h[m] / s * float64(up)
	}
	upsampleFilters.Store(up, h)
	return h
}

// sinc is numpy's normalised sinc.
func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	y := math.Pi * x
	return math.Sin(y) / y
}

// besselI0 is the modified Bessel function of the first kind, order 0,
// by its power series (exact to rounding for the small arguments here).
func besselI0(x float64) float64 {
	s, term := 1.0, 1.0
	q := x * x / 4
	for k := 1; k < 500; k++ {
		term *= q / float64(k*k)
		s += term
		if term < s*1e-17 {
			break
		}
	}
	return s
}
