package detect

import (
	"math"
	"math/rand/v2"
	"testing"

	"dspk/compute"
	"dspk/probe"
)

// twoColumnProbe is n sites in two columns 32 µm apart, rows 20 µm apart.
func twoColumnProbe(n int) *probe.Probe {
	p := &probe.Probe{Name: "test2col", NChanFile: n}
	for i := range n {
		p.X = append(p.X, float64(32*(i%2)))
		p.Y = append(p.Y, float64(20*(i/2)))
		p.Shank = append(p.Shank, 0)
		p.ChanMap = append(p.ChanMap, i)
	}
	return p
}

// shape returns one synthetic spike waveform of length nt with its trough
// (the largest magnitude, negative) at t0, unit L2 norm. Parameters vary
// the width and the after-hyperpolarisation.
func shape(nt, t0 int, width, ahp, delay float64) []float64 {
	w := make([]float64, nt)
	var ss float64
	for j := range nt {
		d := float64(j - t0)
		v := -math.Exp(-d*d/(2*width*width)) + ahp*math.Exp(-(d-delay)*(d-delay)/(2*4*width*width))
		w[j] = v
		ss += v * v
	}
	for j := range w {
		w[j] /= math.Sqrt(ss)
	}
	return w
}

// synthShapes returns k distinct unit-norm spike shapes, k×nt row-major.
func synthShapes(k, nt, t0 int) [][]float64 {
	params := [][3]float64{{1.5, 0.3, 6}, {3, 0.2, 10}, {1, 0.5, 4}, {2, 0.0, 0}, {4, 0.4, 12}, {2.5, 0.6, 7}, {1.2, 0.1, 3}, {3.5, 0.0, 0}}
	out := make([][]float64, k)
	for i := range k {
		p := params[i%len(params)]
		out[i] = shape(nt, t0, p[0]*(1+0.3*float64(i/len(params))), p[1], p[2])
	}
	return out
}

// synthTemplates returns templates with k synthetic shapes and an
// orthonormal PCA basis of p smooth functions (Gram–Schmidt).
func synthTemplates(k, p, nt, t0 int) *Templates {
	tm := &Templates{NT: nt, K: k, P: p, WTEMP: make([]float32, k*nt), WPCA: make([]float32, p*nt)}
	for i, s := range synthShapes(k, nt, t0) {
		for j, v := range s {
			tm.WTEMP[i*nt+j] = float32(v)
		}
	}
	basis := make([][]float64, 0, p)
	for i := 0; len(basis) < p; i++ {
		v := make([]float64, nt)
		for j := range v {
			v[j] = math.Cos(math.Pi*float64(i)*(float64(j)+0.5)/float64(nt)) * math.Exp(-float64((j-t0)*(j-t0))/800)
		}
		for _, b := range basis {
			var dot float64
			for j := range v {
				dot += v[j] * b[j]
			}
			for j := range v {
				v[j] -= dot * b[j]
			}
		}
		var ss float64
		for _, x := range v {
			ss += x * x
		}
		if ss < 1e-6 {
			continue
		}
		big := 0
		for j := range v {
			if math.Abs(v[j]) > math.Abs(v[big]) {
				big = j
			}
		}
		div := math.Copysign(math.Sqrt(ss), v[big])
		for j := range v {
			v[j] /= div
		}
		basis = append(basis, v)
	}
	for i, b := range basis {
		for j, v := range b {
			tm.WPCA[i*nt+j] = float32(v)
		}
	}
	return tm
}

// injected is one synthetic spike: trough at column tau, on a footprint
// centred at (x, y), amplitude amp (whitened SD at the centre), shape k.
type injected struct {
	tau  int
	x, y float64
	amp  float64
	k    int
	sign float64
}

// synthWindow returns a whitened-like window: unit Gaussian noise plus the
// injected spikes with a Gaussian footprint of SD sd µm.
func synthWindow(rng *rand.Rand, p *probe.Probe, T int, shapes [][]float64, t0 int, spikes []injected, noise, sd float64) []float32 {
	C := p.Len()
	x := make([]float32, C*T)
	for i := range x {
		x[i] = float32(noise * rng.NormFloat64())
	}
	for _, s := range spikes {
		w := shapes[s.k]
		for c := range C {
			dx, dy := p.X[c]-s.x, p.Y[c]-s.y
			g := s.amp * s.sign * math.Exp(-(dx*dx+dy*dy)/(2*sd*sd))
			if g*g < 1e-6 {
				continue
			}
			for j, v := range w {
				t := s.tau - t0 + j
				if t >= 0 && t < T {
					x[c*T+t] += float32(g * v)
				}
			}
		}
	}
	return x
}

// randomSpikes draws n spikes at random times in [lo, hi), positions on
// the probe, amplitudes in [amin, amax], shapes < k, both signs if mixed.
func randomSpikes(rng *rand.Rand, p *probe.Probe, n, lo, hi int, amin, amax float64, k int, mixed bool) []injected {
	ymin, ymax := math.Inf(1), math.Inf(-1)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for i := range p.Y {
		ymin, ymax = min(ymin, p.Y[i]), max(ymax, p.Y[i])
		xmin, xmax = min(xmin, p.X[i]), max(xmax, p.X[i])
	}
	out := make([]injected, n)
	for i := range out {
		sign := 1.0
		if mixed && rng.IntN(4) == 0 {
			sign = -1
		}
		out[i] = injected{
			tau: lo + rng.IntN(hi-lo),
			x:   xmin + rng.Float64()*(xmax-xmin), y: ymin + rng.Float64()*(ymax-ymin),
			amp: amin + rng.Float64()*(amax-amin), k: rng.IntN(k), sign: sign,
		}
	}
	return out
}

// newCPUDetector is NewDetector on the CPU, which cannot fail.
func newCPUDetector(g *Grid, tm *Templates, T int, prm Params) *Detector {
	d, err := NewDetector(nil, g, tm, T, prm)
	if err != nil {
		panic(err)
	}
	return d
}

// deviceWindow returns a C×T window on dev holding x (its working array
// written), closed when the test ends.
func deviceWindow(t *testing.T, dev *compute.Device, C, T int, x []float32) *compute.Window {
	t.Helper()
	win, err := dev.NewWindow(C, T, C)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { win.Close() })
	if err := dev.Do(func(cc *compute.Ctx) error { return compute.Upload(cc, win.DataMem().Ptr, x) }); err != nil {
		t.Fatal(err)
	}
	win.MarkWritten()
	return win
}
