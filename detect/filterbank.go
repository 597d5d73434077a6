package detect

import "fmt"

// FilterBank correlates rows of a window with K filters of nt samples:
// B[k,t] = Σ_j row[t+j−nt/2]·w_k[j], zeros outside the row, by float64 FFT
// overlap-save rounded to float32 — the temporal stage of detection,
// offered to other stages (learned-template matching filters windows with
// the PCA basis the same way). It is read-only once built; each goroutine
// takes its own [FilterBank.Correlator].
type FilterBank struct {
	spec     []complex128
	k, nt, n int
}

// NewFilterBank returns the bank of the k filters w (k×nt row-major). It
// panics if len(w) != k·nt or nt is not odd and smaller than the FFT block.
func NewFilterBank(w []float32, k, nt int) *FilterBank {
	if k < 1 || nt < 1 || nt%2 == 0 || nt >= convBlock/2 || len(w) != k*nt {
		panic(fmt.Sprintf("detect: filter bank of %d filters of %d samples from %d values", k, nt, len(w)))
	}
	return &FilterBank{spec: convSpectra(w, k, nt, convBlock), k: k, nt: nt, n: convBlock}
}

// ShortBlock is the FFT length of [NewShortFilterBank]: 196 outputs per
// transform for 61-sample filters, where [NewFilterBank]'s 1024 give 964.
const ShortBlock = 256

// NewShortFilterBank is [NewFilterBank] with transforms of [ShortBlock]
// samples, for windows of a few hundred columns (a stream's blocks): such
// a window costs one or two short transforms per row where the long one
// spends five times as much on a single block. Its results differ from
// the long bank's in float64 rounding only. It panics unless nt <
// ShortBlock/2.
func NewShortFilterBank(w []float32, k, nt int) *FilterBank {
	if k < 1 || nt < 1 || nt%2 == 0 || nt >= ShortBlock/2 || len(w) != k*nt {
		panic(fmt.Sprintf("detect: short filter bank of %d filters of %d samples from %d values", k, nt, len(w)))
	}
	return &FilterBank{spec: convSpectra(w, k, nt, ShortBlock), k: k, nt: nt, n: ShortBlock}
}

// Filters returns K, the number of filters.
func (f *FilterBank) Filters() int { return f.k }

// Correlator returns a worker for one goroutine, with its own buffers.
func (f *FilterBank) Correlator() *Correlator {
	return &Correlator{c: newCorrelator(f.spec, f.k, f.nt, f.n), k: f.k}
}

// Correlator is one goroutine's worker of a [FilterBank].
type Correlator struct {
	c      *correlator
	k      int
	ma, mb []float32
}

// Correlate writes the filters' responses at columns e0 … e0+w−1 of rowA
// into dstA[k*w+i] (i = column − e0), and the same for rowB into dstB
// unless rowB is nil; the two rows must have the same length. Columns
// whose filter reaches past the row see zeros there.
func (c *Correlator) Correlate(dstA, rowA, dstB, rowB []float32, e0, w int) {
	if w < 1 || e0 < 0 || e0+w > len(rowA) || len(dstA) < c.k*w || (rowB != nil && (len(rowB) != len(rowA) || len(dstB) < c.k*w)) {
		panic(fmt.Sprintf("detect: correlate columns %d…%d of rows of %d samples into %d values", e0, e0+w-1, len(rowA), len(dstA)))
	}
	if cap(c.ma) < w {
		c.ma, c.mb = make([]float32, w), make([]float32, w)
	}
	c.c.correlate(dstA, c.ma[:w], rowA, dstB, c.mb[:w], rowB, e0, w)
}
