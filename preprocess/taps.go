package preprocess

// Kilosort4's high-pass impulse response (kilosort4.md §4 step 5).
const (
	// TapsLen is the length of the vector whose filtfilt response gives
	// Kilosort4's high-pass taps.
	TapsLen = 30122
	// TapsCentre is the index of the unit impulse in that vector, and so
	// the zero lag of the taps.
	TapsCentre = TapsLen / 2
)

// ImpulseResponse returns Kilosort4's high-pass taps before they are fitted
// to a window: FiltFilt of the Butterworth high-pass ([ButterHighpass]) of
// a unit impulse at index TapsCentre of a vector of TapsLen zeros. Entry
// TapsCentre+j is the filter's weight at lag j; the response is symmetric
// about TapsCentre to rounding. It panics on the conditions of
// ButterHighpass.
func ImpulseResponse(fs, cutoff float64, order int) []float64 {
	b, a := ButterHighpass(order, cutoff, fs)
	x := make([]float64, TapsLen)
	x[TapsCentre] = 1
	return FiltFilt(b, a, x)
}

// HighpassTaps returns Kilosort4's high-pass taps fitted to a window of n
// samples: the [ImpulseResponse] zero-padded (n ≥ TapsLen, (n−TapsLen)/2
// zeros in front, rounded down, the rest behind) or centre-cropped
// (n < TapsLen, entries TapsCentre−n/2 … TapsCentre−n/2+n−1), so that the
// zero lag lands at index n/2 (rounded down) in both cases. Kilosort4
// filters a window x of n samples by
//
//	y = fftshift(real(ifft(fft(x)·conj(fft(h)))))
//
// which is the circular correlation
//
//	y[m] = Σ_i h[i] · x[(m + i − n/2) mod n].
//
// For n = 60122 there are 15000 zeros on each side. Kilosort4 fixes the
// convention only for even n (n = NT + 2·nt with NT even); the one here
// keeps the filter zero-phase for odd n as well. It panics if n < 1 or on
// the conditions of ButterHighpass.
func HighpassTaps(fs, cutoff float64, order, n int) []float64 {
	if n < 1 {
		panic("preprocess: HighpassTaps: window length < 1")
	}
	return fitTaps(ImpulseResponse(fs, cutoff, order), n)
}

// fitTaps zero-pads or centre-crops the TapsLen-long response h to n
// samples with its centre at n/2.
func fitTaps(h []float64, n int) []float64 {
	out := make([]float64, n)
	if n >= TapsLen {
		copy(out[(n-TapsLen)/2:], h)
	} else {
		copy(out, h[TapsCentre-n/2:])
	}
	return out
}
