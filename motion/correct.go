package motion

import (
	"fmt"
	"math"
	"slices"

	"dspk/compute"
	"dspk/internal/par"
	"dspk/linalg"

	"gonum.org/v1/gonum/mat"
)

// Rule names how a window is interpolated to undo its shift.
type Rule int

const (
	// CorrectionKilosort is Kilosort4's rule (kilosort4-sort.md §3.4):
	// kriging with the Gaussian kernel exp(−d²/2σ²), σ = sig_interp, and a
	// ridge of 0.01: M = Kyx·(Kxx + 0.01·I)⁻¹, applied to whitened data.
	CorrectionKilosort Rule = iota
	// CorrectionSmooth is kriging with twice the kernel width (σ =
	// 2·sig_interp, 40 µm by default) and a ridge of 0.1, each row of M
	// then scaled to unit norm, applied after the whitening. The wider,
	// more regularised kernel blurs every window alike, whatever its
	// shift, so that a unit's footprint and the noise change little with
	// the sub-pitch part of the shift (docs/motion.md: at a 20-µm shift
	// on NP1 the footprint error is 4 % against Kilosort4's 10 %, and the
	// noise variance is constant where Kilosort4's falls by a third); the
	// unit row norm keeps whitened noise at unit variance, the scale
	// detection thresholds assume. The price is a spatial blur of about
	// 40 µm.
	CorrectionSmooth
)

// SmoothThresholdScale is the factor by which [CorrectionSmooth] raises
// the detection and matching thresholds (Th_universal, Th_learned) on the
// windows it corrects. Its 40-µm blur keeps each channel's whitened noise
// at unit variance but correlates neighbouring channels, and a template's
// score sums a footprint over channels assuming independent noise: the
// score's noise grows (by about 1.66 for a unit's footprint on NP1, the
// product MMᵀ of the correction), and noise crosses the thresholds. On
// drifting CPU sorts (docs/perf-sort.md, "Thresholds under the smooth
// rule") 1.25 removed nearly all noise units and lost no neuron.
const SmoothThresholdScale = 1.25

// ThresholdScale returns the factor the rule applies to the detection and
// matching thresholds on the windows it corrects: [SmoothThresholdScale]
// for CorrectionSmooth, 1 for Kilosort4's rule.
func (r Rule) ThresholdScale() float64 {
	if r == CorrectionSmooth {
		return SmoothThresholdScale
	}
	return 1
}

// String returns the rule's name.
func (r Rule) String() string {
	switch r {
	case CorrectionKilosort:
		return "kilosort"
	case CorrectionSmooth:
		return "smooth"
	}
	return fmt.Sprintf("Rule(%d)", int(r))
}

// kernelCut is the smallest kernel value kept in Kyx: entries below it
// (sites farther than σ·√(2·ln 10¹²) ≈ 7.4σ from a target) are dropped,
// which changes M by less than 10⁻¹² times a row of (Kxx + ridge·I)⁻¹,
// whose entries are at most 1/ridge = 100.
const kernelCut = 1e-12

// BandTol is the relative tolerance of the CPU's banded product: each row
// of M keeps its largest entries and drops the smallest ones whose
// magnitudes add up to at most BandTol times the row's sum of magnitudes,
// so that every output sample is within BandTol·Σ_j|M_cj|·max_j|x_j| of
// the dense product.
const BandTol = 1e-6

// Corrector applies a motion estimate to whitened windows: window i's C
// channels become M_i·x (Kilosort4's drift matrix, §3.4): the estimate
// of the whitened field at each site's depth minus the window's shift
// there ([Estimate.Shift]), interpolated from all sites by kriging.
//
// M_i = Kyx·(Kxx + 0.01·I)⁻¹ with Kxx[i, j] = k(site_i, site_j), Kyx[c,
// j] = k((x_c, y_c − shift_c), site_j) and k(p, q) = exp(−‖p − q‖²/2σ²),
// σ = sig_interp. (Kxx + 0.01·I)⁻¹ is computed once in float64 (Cholesky)
// and M_i in float64 from it, then rounded to float32 (Kilosort4 inverts
// in float32 on the device: the two differ by about 10⁻⁵ relative).
//
// On the CPU [Corrector.Apply] multiplies by M_i kept banded (see
// BandTol); on a CUDA device [Corrector.Window] and
// [Corrector.ApplyDevice] multiply by the dense M_i with cuBLAS SGEMM
// (17.7 GFLOP per NP1 window). The matrix of the last window is kept, so
// windows of equal shifts (Kilosort's shifts are multiples of 0.5 µm)
// reuse it. A Corrector is not safe for concurrent use.
type Corrector struct {
	dev   *compute.Device
	rule  Rule
	x, y  []float64
	sigma float64
	norm  bool // rows scaled to unit norm
	est   *Estimate
	ikxx  []float64         // (Kxx + ridge·I)⁻¹, C×C row-major
	shift []float64         // scratch for the window's shifts
	cur   int               // window of m, or −1
	curSh []float64         // shifts of m
	m     []float32         // M of window cur, [C][C]
	band  *linalg.Whitening // m banded (BandTol), for Apply
	tmp   []float32         // Window's scratch on the CPU
	gen   int               // counts the matrices computed

	fold    *linalg.Whitening // Fold's result, of foldW and matrix foldGen
	foldW   *linalg.Whitening
	foldGen int
	gpu     *cudaCorrector
}

// NewCorrector returns a corrector on dev (nil means the CPU) for the
// sites at (x, y) µm, in the channel order of the windows it corrects, by
// Kilosort4's rule with p.SigInterp and the shifts of est. It returns an
// error if the sites are empty, their lengths differ or a position is not
// finite, sig_interp is not positive, Kxx + 0.01·I cannot be factorised,
// est has no windows or blocks, or (on a CUDA device) the device fails.
// Call Close when done.
func NewCorrector(dev *compute.Device, x, y []float64, p Params, est *Estimate) (*Corrector, error) {
	return NewCorrectorRule(dev, x, y, p, est, CorrectionKilosort)
}

// NewCorrectorRule is [NewCorrector] with the correction rule named.
func NewCorrectorRule(dev *compute.Device, x, y []float64, p Params, est *Estimate, rule Rule) (*Corrector, error) {
	C := len(x)
	if C == 0 || len(y) != C {
		return nil, fmt.Errorf("motion: NewCorrector: %d x and %d y site positions", len(x), len(y))
	}
	for i := range x {
		if math.IsNaN(x[i]+y[i]) || math.IsInf(x[i]+y[i], 0) {
			return nil, fmt.Errorf("motion: NewCorrector: site %d at (%v, %v)", i, x[i], y[i])
		}
	}
	if !(p.SigInterp > 0) || math.IsInf(p.SigInterp, 0) {
		return nil, fmt.Errorf("motion: NewCorrector: sig_interp %v µm is not positive", p.SigInterp)
	}
	if est == nil || est.Windows < 1 || est.Blocks < 1 || len(est.Dshift) != est.Windows*est.Blocks || len(est.Yblk) != est.Blocks {
		return nil, fmt.Errorf("motion: NewCorrector: no estimate, or an estimate of inconsistent sizes")
	}
	sigma, ridge, norm, ok := ruleKernel(rule, p)
	if !ok {
		return nil, fmt.Errorf("motion: NewCorrector: unknown rule %v", rule)
	}
	k := &Corrector{dev: dev, rule: rule, x: slices.Clone(x), y: slices.Clone(y), sigma: sigma, norm: norm, est: est, cur: -1}
	ikxx, err := inverseKernel(k.x, k.y, sigma, ridge)
	if err != nil {
		return nil, err
	}
	k.ikxx = ikxx
	if dev != nil && dev.Kind() == compute.CUDA {
		if k.gpu, err = newCUDACorrector(dev, C); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// ruleKernel returns a rule's kernel width, ridge and whether its rows
// are normalised; ok is false for an unknown rule.
func ruleKernel(r Rule, p Params) (sigma, ridge float64, norm, ok bool) {
	switch r {
	case CorrectionKilosort:
		return p.SigInterp, Ridge, false, true
	case CorrectionSmooth:
		return 2 * p.SigInterp, 0.1, true, true
	}
	return 0, 0, false, false
}

// Rule returns the corrector's rule.
func (k *Corrector) Rule() Rule { return k.rule }

// Channels returns C.
func (k *Corrector) Channels() int { return len(k.x) }

// inverseKernel returns (Kxx + ridge·I)⁻¹ row-major in float64.
func inverseKernel(x, y []float64, sigma, ridge float64) ([]float64, error) {
	C := len(x)
	K := mat.NewSymDense(C, nil)
	for i := range C {
		for j := i; j < C; j++ {
			v := kern(x[i]-x[j], y[i]-y[j], sigma)
			if i == j {
				v += ridge
			}
			K.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(K) {
		return nil, fmt.Errorf("motion: NewCorrector: Kxx + %g·I of the %d sites is not positive definite (sites at equal positions?)", ridge, C)
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		return nil, fmt.Errorf("motion: NewCorrector: inverting Kxx + %g·I: %v", ridge, err)
	}
	out := make([]float64, C*C)
	for i := range C {
		for j := range C {
			out[i*C+j] = inv.At(i, j)
		}
	}
	return out, nil
}

// kern is the kriging kernel exp(−(dx² + dy²)/2σ²).
func kern(dx, dy, sigma float64) float64 {
	return math.Exp(-(dx*dx + dy*dy) / (2 * sigma * sigma))
}

// Matrix returns M_w, window w's correction, row-major [C][C] float32
// (a new slice): output channel c = Σ_j M_w[c*C+j]·x_j. It panics if w is
// out of the estimate's range.
func (k *Corrector) Matrix(w int) []float32 {
	k.matrix(w)
	return slices.Clone(k.m)
}

// matrix makes k.m window w's matrix and reports whether it changed.
func (k *Corrector) matrix(w int) bool {
	if w < 0 || w >= k.est.Windows {
		panic(fmt.Sprintf("motion: window %d of an estimate of %d", w, k.est.Windows))
	}
	if w == k.cur {
		return false
	}
	k.shift = k.est.Shift(k.shift, w, k.y)
	if k.cur >= 0 && slices.Equal(k.shift, k.curSh) {
		k.cur = w
		return false
	}
	C := len(k.x)
	if k.m == nil {
		k.m = make([]float32, C*C)
	}
	krigingMatrix(k.m, k.x, k.y, k.shift, k.ikxx, k.sigma, k.norm)
	k.cur = w
	k.curSh = append(k.curSh[:0], k.shift...)
	k.band = nil
	k.gen++
	return true
}

// krigingMatrix writes M = Kyx·iK into m, for targets (x_c, y_c − sh_c),
// each row scaled to unit norm if norm.
func krigingMatrix(m []float32, x, y, sh, iK []float64, sigma float64, norm bool) {
	C := len(x)
	par.Split(C, par.Workers(C), func(_, c0, c1 int) {
		row := make([]float64, C)
		for c := c0; c < c1; c++ {
			clear(row)
			ty := y[c] - sh[c]
			for j := range C {
				v := kern(x[c]-x[j], ty-y[j], sigma)
				if v < kernelCut {
					continue
				}
				ik := iK[j*C : (j+1)*C]
				for i, a := range ik {
					row[i] += v * a
				}
			}
			g := 1.0
			if norm {
				var ss float64
				for _, v := range row {
					ss += v * v
				}
				if ss > 0 {
					g = 1 / math.Sqrt(ss)
				}
			}
			for i, v := range row {
				m[c*C+i] = float32(v * g)
			}
		}
	})
}

// newBanded returns, as a sparse operator, m without the smallest
// entries of each row whose magnitudes add up to at most BandTol of the
// row's (kept entries in ascending column order; rows padded to the
// longest with zeros).
func newBanded(m []float32, C int) *linalg.Whitening {
	d := make([]float64, C*C)
	ord := make([]int, C)
	for c := range C {
		row := m[c*C : (c+1)*C]
		var l1 float64
		for i := range ord {
			ord[i] = i
			l1 += math.Abs(float64(row[i]))
		}
		slices.SortFunc(ord, func(a, b int) int {
			fa, fb := math.Abs(float64(row[a])), math.Abs(float64(row[b]))
			switch {
			case fa < fb:
				return -1
			case fa > fb:
				return 1
			}
			return a - b
		})
		var dropped float64
		n := 0
		for n < C && dropped+math.Abs(float64(row[ord[n]])) <= BandTol*l1 {
			dropped += math.Abs(float64(row[ord[n]]))
			n++
		}
		for _, j := range ord[n:] {
			d[c*C+j] = float64(row[j])
		}
	}
	return linalg.NewWhiteningFromDense(d, C)
}

// Apply writes window w's correction of src into dst, both [C][T]
// row-major (dst[c*T+t]), on the CPU with M_w banded (BandTol): dst[c] =
// Σ_j M_w[c, j]·src[j] over the entries kept, in ascending j, as float32
// sums ([linalg.Whitening.Apply]: vector kernels, rows over GOMAXPROCS
// goroutines). dst and src must not overlap. It panics if their lengths differ
// or are not a multiple of C, or w is out of range.
func (k *Corrector) Apply(dst, src []float32, w int) {
	C := len(k.x)
	if len(dst) != len(src) || len(src)%C != 0 {
		panic(fmt.Sprintf("motion: Apply: dst of %d, src of %d values for %d channels", len(dst), len(src), C))
	}
	k.matrix(w)
	if k.band == nil {
		k.band = newBanded(k.m, C)
	}
	k.band.Apply(dst, src, len(src)/C)
}

// Kept returns the entries of window w's matrix that Apply uses (of
// C²), for measurements.
func (k *Corrector) Kept(w int) int {
	k.matrix(w)
	if k.band == nil {
		k.band = newBanded(k.m, len(k.x))
	}
	n := 0
	for _, v := range k.band.Value {
		if v != 0 {
			n++
		}
	}
	return n
}

// Window corrects the whitened working array of win (C channels, the
// corrector's) as window w, where it lives: on the CPU by Apply through a
// scratch array, on a CUDA device by [Corrector.ApplyDevice] into a
// device buffer of the corrector's that then becomes win's working array
// ([compute.Window.SwapDataMem]), with no host copy of the data. It must
// not be called inside Do. It panics if win's channels are not the
// corrector's, win is on another kind of device, or w is out of range.
func (k *Corrector) Window(win *compute.Window, w int) error {
	C, T := len(k.x), win.Len()
	if win.Channels() != C {
		panic(fmt.Sprintf("motion: Window: window of %d channels, corrector of %d", win.Channels(), C))
	}
	if (win.Device().Kind() == compute.CUDA) != (k.gpu != nil) {
		panic("motion: Window: window and corrector on different kinds of device")
	}
	if k.gpu == nil {
		x, err := win.Data()
		if err != nil {
			return err
		}
		if len(k.tmp) != C*T {
			k.tmp = make([]float32, C*T)
		}
		k.Apply(k.tmp, x, w)
		copy(x, k.tmp)
		return nil
	}
	err := k.dev.Do(func(c *compute.Ctx) error {
		buf, err := k.gpu.scratch(c, C*T)
		if err != nil {
			return err
		}
		if err := k.ApplyDevice(c, buf.Ptr, win.DataMem().Ptr, T, w); err != nil {
			return err
		}
		k.gpu.buf = win.SwapDataMem(buf)
		return nil
	})
	win.MarkWritten()
	return err
}

// Close releases the corrector's device memory.
func (k *Corrector) Close() error {
	if k.gpu != nil {
		err := k.gpu.close()
		k.gpu = nil
		return err
	}
	return nil
}
