package linalg

import (
	"fmt"
	"math"

	"dspk/compute"
)

// SecondMoment accumulates Kilosort4's whitening statistic, the mean over
// windows of the uncentred second moment of each window:
//
//	CC = (1/k) Σ_w X_w X_wᵀ / n_w
//
// where X_w is the C×n_w block of window w (no centring). Each window's
// product is formed as in [Covariance32] (split products, float64
// accumulation of partial sums), divided by n_w and added in float64 to the
// running sum. The zero value is not usable; call [NewSecondMoment]. A
// SecondMoment reuses its scratch between windows and is not safe for
// concurrent use.
//
// Windows are added from host slices ([SecondMoment.Add32],
// [SecondMoment.Add64], always computed on the host) or where they live
// ([SecondMoment.AddWindow]): on a CUDA device the window's product is
// formed on the GPU (gram_cuda.go: the float64 product of the float32
// samples by DGEMM where FP64 runs at full rate, [GramDefault]) and summed
// there in float64, so that only the C×C result crosses PCIe. A GPU
// product differs from the host's by float32 rounding (relative ~1e-7).
type SecondMoment struct {
	c   int
	k   int       // windows added on the host
	sum []float64 // Σ_w X_w X_wᵀ / n_w over host windows, upper triangle
	acc []float64 // one window's X Xᵀ, upper triangle
	w32 *gramWork[float32]
	w64 *gramWork[float64]

	dev *compute.Device
	gpu *cudaSecondMoment // nil until the first AddWindow on a CUDA device
}

// NewSecondMoment returns an empty accumulator for C channels on dev (nil
// means the CPU). On a CUDA device the GPU buffers, which depend on the
// window length, are allocated by the first AddWindow. It panics if C < 1.
// Call Close when done.
func NewSecondMoment(dev *compute.Device, C int) *SecondMoment {
	if C < 1 {
		panic(fmt.Sprintf("linalg: NewSecondMoment: C = %d", C))
	}
	if dev != nil && dev.Kind() != compute.CUDA {
		dev = nil
	}
	return &SecondMoment{c: C, sum: make([]float64, C*C), acc: make([]float64, C*C), dev: dev}
}

// AddWindow adds the window made of columns [c0, c1) of win's working
// array (C×T, channel-major) on win's device, which must be m's; on a GPU
// nothing crosses PCIe. It panics unless win has C channels and
// 0 ≤ c0 < c1 ≤ T.
func (m *SecondMoment) AddWindow(win *compute.Window, c0, c1 int) error {
	T := win.Len()
	if win.Channels() != m.c {
		panic(fmt.Sprintf("linalg: SecondMoment.AddWindow: window of %d channels for %d", win.Channels(), m.c))
	}
	if gpuWin := win.Device().Kind() == compute.CUDA; gpuWin != (m.dev != nil) {
		panic(fmt.Sprintf("linalg: SecondMoment.AddWindow: window on %s, accumulator on %s", win.Device().Spec(), m.spec()))
	}
	if m.dev == nil {
		x, err := win.Data()
		if err != nil {
			return err
		}
		m.Add32(x, T, c0, c1)
		return nil
	}
	if c0 < 0 || c1 <= c0 || c1 > T {
		panic(fmt.Sprintf("linalg: SecondMoment.AddWindow: columns [%d, %d) of a %d-sample window", c0, c1, T))
	}
	return m.dev.Do(func(c *compute.Ctx) error {
		if m.gpu == nil || m.gpu.g.MaxN() < c1-c0 {
			grown, err := newCUDASecondMoment(c, m.c, T, GPUGramOptions{Method: secondMomentMethod(c.Device().GPU())})
			if err != nil {
				return err
			}
			if m.gpu != nil {
				// Keep the sum of the windows already added.
				if err := c.CopyDtoD(grown.sum.Ptr, m.gpu.sum.Ptr, m.c*m.c*8); err != nil {
					grown.Free(c)
					return err
				}
				grown.k = m.gpu.k
				if err := m.gpu.Free(c); err != nil {
					grown.Free(c)
					return err
				}
			}
			m.gpu = grown
		}
		return m.gpu.Add(c, win.DataMem().Ptr, T, c0, c1)
	})
}

func (m *SecondMoment) spec() string {
	if m.dev == nil {
		return "cpu"
	}
	return m.dev.Spec()
}

// Close releases m's device buffers; it may be called more than once.
func (m *SecondMoment) Close() error {
	if m.gpu == nil {
		return nil
	}
	err := m.dev.Do(m.gpu.Free)
	m.gpu = nil
	return err
}

// C returns the number of channels.
func (m *SecondMoment) C() int { return m.c }

// Windows returns the number of windows added since creation or the last
// Reset.
func (m *SecondMoment) Windows() int {
	if m.gpu != nil {
		return m.k + m.gpu.k
	}
	return m.k
}

// Reset forgets all windows; scratch is kept.
func (m *SecondMoment) Reset() error {
	clear(m.sum)
	m.k = 0
	if m.gpu == nil {
		return nil
	}
	return m.dev.Do(m.gpu.Reset)
}

func (m *SecondMoment) addAcc(n int) {
	inv := 1 / float64(n)
	for i := 0; i < m.c; i++ {
		s := m.sum[i*m.c+i : i*m.c+m.c]
		for j, v := range m.acc[i*m.c+i : i*m.c+m.c] {
			s[j] += v * inv
		}
	}
	m.k++
}

// Add32 adds the window made of columns [c0, c1) of the C×ld row-major
// float32 slice x. Products are float32 over at most 256 samples, summed in
// float64 (see [Covariance32]). It panics unless 0 ≤ c0 < c1 ≤ ld and
// len(x) ≥ (C−1)·ld+c1.
func (m *SecondMoment) Add32(x []float32, ld, c0, c1 int) {
	checkWindow("SecondMoment.Add32", len(x), m.c, ld, c0, c1)
	if m.w32 == nil {
		m.w32 = newGramWork[float32](m.c)
	}
	clear(m.acc)
	m.w32.add(m.acc, x, ld, c0, c1, nil)
	m.addAcc(c1 - c0)
}

// Add64 is [SecondMoment.Add32] for float64 samples, computed in float64.
func (m *SecondMoment) Add64(x []float64, ld, c0, c1 int) {
	checkWindow("SecondMoment.Add64", len(x), m.c, ld, c0, c1)
	if m.w64 == nil {
		m.w64 = newGramWork[float64](m.c)
	}
	clear(m.acc)
	m.w64.add(m.acc, x, ld, c0, c1, nil)
	m.addAcc(c1 - c0)
}

// Result returns the C×C row-major mean second moment over the windows
// added. With no windows it is all NaN, as Kilosort4's 0/0 (a recording of
// one batch has no whitening windows); [LocalZCA] rejects it. The error is
// a device's, downloading the GPU's sum.
func (m *SecondMoment) Result() ([]float64, error) {
	dst := make([]float64, m.c*m.c)
	err := m.ResultTo(dst)
	return dst, err
}

// ResultTo writes [SecondMoment.Result] to dst, which must hold C*C values.
func (m *SecondMoment) ResultTo(dst []float64) error {
	if len(dst) != m.c*m.c {
		panic(fmt.Sprintf("linalg: SecondMoment.ResultTo: len(dst) = %d, want C*C = %d", len(dst), m.c*m.c))
	}
	k := m.Windows()
	if k == 0 {
		for i := range dst {
			dst[i] = math.NaN()
		}
		return nil
	}
	if m.gpu == nil || m.gpu.k == 0 {
		mirror(dst, m.sum, m.c, 1/float64(k))
		return nil
	}
	// The GPU's sum (full and exactly symmetric), plus any host windows'.
	if err := m.dev.Do(func(c *compute.Ctx) error { return compute.Download(c, dst, m.gpu.sum.Ptr) }); err != nil {
		return err
	}
	var host []float64
	if m.k > 0 {
		host = make([]float64, m.c*m.c)
		mirror(host, m.sum, m.c, 1)
	}
	s := 1 / float64(k)
	for i := range dst {
		if host != nil {
			dst[i] += host[i]
		}
		dst[i] *= s
	}
	return nil
}
