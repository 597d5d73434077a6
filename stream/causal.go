package stream

import (
	"dspk/internal/par"
	"dspk/linalg"
	"dspk/preprocess"
)

// OffsetSeconds is the time constant of the running per-channel offset
// the stream removes before the common average reference: the sort
// removes each 2-s window's mean, which a causal stream cannot know.
const OffsetSeconds = 1.0

// causal is the stream's preprocessing, each sample once, in order, with
// no look-ahead: the running offset per channel, the common average
// reference (the lower median across channels), Kilosort4's Butterworth
// high-pass run forward twice (the sort runs it forward and back, which
// needs the future; twice forward passes each frequency as much, with
// another phase, which the stream's templates take: basis.go), and the
// sort's whitening.
type causal struct {
	C, nf  int
	rows   []int
	invert bool
	car    bool
	b, a   []float64 // the filter, a[0] = 1
	z      []float64 // C·2·order filter states (two passes)
	mean   []float64
	alpha  float64
	seeded bool
	col    []float32
	pre    []float32
	w      *linalg.Whitening
}

// newCausal returns the stream preprocessing of m.
func newCausal(m *Model) *causal {
	b, a := preprocess.ButterHighpass(3, m.HighpassCutoff, m.SampleRate)
	C := len(m.ChanMap)
	return &causal{C: C, nf: m.FileChannels, rows: m.ChanMap, invert: m.InvertSign, car: m.CAR, b: b, a: a,
		z: make([]float64, 2*C*(len(a)-1)), mean: make([]float64, C), alpha: 1 / (OffsetSeconds * m.SampleRate),
		col: make([]float32, C), w: m.Whitening}
}

// step runs one sample x through the filter with state z (transposed
// direct form II, as scipy.signal.lfilter).
func (p *causal) step(z []float64, x float64) float64 {
	m := len(z)
	y := p.b[0]*x + z[0]
	for i := 0; i < m-1; i++ {
		z[i] = p.b[i+1]*x + z[i+1] - p.a[i+1]*y
	}
	z[m-1] = p.b[m]*x - p.a[m]*y
	return y
}

// third is step over a row for a third-order filter (Kilosort4's), its
// state in locals: the same operations in the same order, a third of
// step's time.
func (p *causal) third(row []float32, z []float64) {
	b0, b1, b2, b3 := p.b[0], p.b[1], p.b[2], p.b[3]
	a1, a2, a3 := p.a[1], p.a[2], p.a[3]
	z0, z1, z2 := z[0], z[1], z[2]
	for t, v := range row {
		x := float64(v)
		y := b0*x + z0
		z0 = b1*x + z1 - a1*y
		z1 = b2*x + z2 - a2*y
		z2 = b3*x - a3*y
		row[t] = float32(y)
	}
	z[0], z[1], z[2] = z0, z1, z2
}

// run preprocesses n frames of raw (interleaved, nf channels each) into
// dst, [C][n] row-major.
func (p *causal) run(dst []float32, raw []int16, n int) {
	C, nf := p.C, p.nf
	if cap(p.pre) < C*n {
		p.pre = make([]float32, C*n)
	}
	pre := p.pre[:C*n]
	sign := float64(1)
	if p.invert {
		sign = -1
	}
	if !p.seeded && n > 0 {
		for c := range C {
			s := 0.0
			for t := range n {
				s += float64(raw[t*nf+p.rows[c]])
			}
			p.mean[c] = sign * s / float64(n)
		}
		p.seeded = true
	}
	for t := range n {
		fr := raw[t*nf : (t+1)*nf]
		for c, r := range p.rows {
			v := sign * float64(fr[r])
			p.mean[c] += p.alpha * (v - p.mean[c])
			p.col[c] = float32(v - p.mean[c])
			pre[c*n+t] = p.col[c]
		}
		if p.car {
			med := preprocess.LowerMedian(p.col)
			for c := range C {
				pre[c*n+t] -= med
			}
		}
	}
	m := len(p.a) - 1
	par.Each(C, par.Workers(C), func(_, c int) {
		z1 := p.z[2*c*m : (2*c+1)*m]
		z2 := p.z[(2*c+1)*m : (2*c+2)*m]
		row := pre[c*n : (c+1)*n]
		if m == 3 {
			p.third(row, z1)
			p.third(row, z2)
			return
		}
		for t, v := range row {
			row[t] = float32(p.step(z2, p.step(z1, float64(v))))
		}
	})
	p.w.Apply(dst[:C*n], pre, n)
}
