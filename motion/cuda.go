package motion

import (
	_ "embed"
	"fmt"
	"math"

	"dspk/compute"
)

//go:embed kernels/motion.cu
var gpuSource string

// scoreThreads is the block size of the scores kernel: one thread per
// lane of the summation order.
const scoreThreads = scoreLanes

// cudaEstimator is the Estimator's CUDA back end: device histograms for
// AddDevice and the registration scores (float64, kernels/motion.cu). The
// histograms of Add, the reference means, the smoothing and the sub-bin
// refinement stay on the host: they are O(windows·Y·20) and O(windows·B)
// against the scores' 31 shifts × 9 iterations.
type cudaEstimator struct {
	dev                    *compute.Device
	rows, nb               int
	bin, score             *compute.Kernel
	hist, spikes, bad      compute.Mem // AddDevice's counts
	rowEdge, ampEdge       compute.Mem
	g, r, s, starts, out   compute.Mem
	used                   bool // AddDevice was called since the last collect
	gBytes, outBytes, nsts int
}

func newCUDAEstimator(dev *compute.Device, g *geometry, nb int, p Params) (*cudaEstimator, error) {
	ce := &cudaEstimator{dev: dev, rows: g.rows, nb: nb}
	rowEdge := make([]float32, g.rows-1)
	for k := range rowEdge {
		rowEdge[k] = smallestFloat32(func(v float32) bool { return g.row(v) >= k+1 })
	}
	ampEdge := make([]float32, AmpBins-1)
	for k := range ampEdge {
		ampEdge[k] = smallestFloat32(func(v float32) bool { return ampCol(v, p.ThUniversal) >= k+1 })
	}
	cells := g.rows * AmpBins
	B := 2*p.NBlocks - 1
	ce.outBytes = max(2*RigidShifts+1, (2*BlockShifts+1)*B) * nb * 8
	err := dev.Do(func(c *compute.Ctx) error {
		mod, err := c.Compile("motion/kernels/motion.cu", gpuSource, fmt.Sprintf("-DSCORE_THREADS=%d", scoreThreads))
		if err != nil {
			return err
		}
		if ce.bin, err = mod.Kernel("bin"); err != nil {
			return err
		}
		if ce.score, err = mod.Kernel("scores"); err != nil {
			return err
		}
		alloc := func(m *compute.Mem, bytes int) {
			if err == nil {
				*m, err = c.Alloc(bytes)
			}
		}
		alloc(&ce.hist, nb*cells*4)
		alloc(&ce.spikes, nb*4)
		alloc(&ce.bad, 4)
		alloc(&ce.rowEdge, max(1, len(rowEdge))*4)
		alloc(&ce.ampEdge, len(ampEdge)*4)
		alloc(&ce.r, cells*8)
		alloc(&ce.s, nb*4)
		alloc(&ce.starts, B*4)
		alloc(&ce.out, ce.outBytes)
		if err != nil {
			return err
		}
		if err := ce.zero(c); err != nil {
			return err
		}
		if len(rowEdge) > 0 {
			if err := compute.Upload(c, ce.rowEdge.Ptr, rowEdge); err != nil {
				return err
			}
		}
		return compute.Upload(c, ce.ampEdge.Ptr, ampEdge)
	})
	if err != nil {
		ce.close()
		return nil, err
	}
	return ce, nil
}

// zero clears the device counts.
func (ce *cudaEstimator) zero(c *compute.Ctx) error {
	if err := c.Memset32(ce.hist.Ptr, 0, ce.hist.Bytes/4); err != nil {
		return err
	}
	if err := c.Memset32(ce.spikes.Ptr, 0, ce.nb); err != nil {
		return err
	}
	return c.Memset32(ce.bad.Ptr, 0, 1)
}

// collect adds the device counts of AddDevice to the host's and clears
// them.
func (ce *cudaEstimator) collect(counts []uint32, spikes []int) error {
	if !ce.used {
		return nil
	}
	h := make([]uint32, len(counts))
	sp := make([]int32, ce.nb)
	bad := make([]int32, 1)
	err := ce.dev.Do(func(c *compute.Ctx) error {
		if err := compute.Download(c, h, ce.hist.Ptr); err != nil {
			return err
		}
		if err := compute.Download(c, sp, ce.spikes.Ptr); err != nil {
			return err
		}
		if err := compute.Download(c, bad, ce.bad.Ptr); err != nil {
			return err
		}
		return ce.zero(c)
	})
	if err != nil {
		return err
	}
	ce.used = false
	if bad[0] > 0 {
		return fmt.Errorf("motion: AddDevice: %d spikes with a non-finite depth or amplitude", bad[0])
	}
	for i, v := range h {
		counts[i] += v
	}
	for i, v := range sp {
		spikes[i] += int(v)
	}
	return nil
}

// AddDevice bins window w's detections already on the CUDA device: n =
// min(*count, cap) spikes with depths y[0..n) and amplitudes amp[0..n)
// (float32 device arrays; count an int32 on the device), as [Estimator.Add]
// bins host slices. It runs on c's stream inside the caller's
// [compute.Device.Do] without synchronising; the counts reach the
// estimate at the next Estimate, which reports spikes with a non-finite
// value as an error. It panics on the CPU or if w is out of range.
func (e *Estimator) AddDevice(c *compute.Ctx, w int, y, amp, count compute.Ptr, cap int) error {
	if e.gpu == nil {
		panic("motion: AddDevice on the CPU")
	}
	if w < 0 || w >= e.windows {
		panic(fmt.Sprintf("motion: AddDevice: window %d of %d", w, e.windows))
	}
	if cap <= 0 {
		return nil
	}
	ce := e.gpu
	ce.used = true
	cells := ce.rows * AmpBins
	const threads = 256
	return c.Launch(ce.bin, compute.D1((cap+threads-1)/threads), compute.D1(threads), 0,
		y, amp, count, int32(cap), ce.rowEdge.Ptr, int32(ce.rows), ce.ampEdge.Ptr,
		ce.hist.Ptr.Add(w*cells*4), ce.spikes.Ptr.Add(w*4), ce.bad.Ptr)
}

// setG uploads the windows' G.
func (ce *cudaEstimator) setG(G []float64) error {
	return ce.dev.Do(func(c *compute.Ctx) error {
		if ce.gBytes != len(G)*8 {
			if err := c.Free(ce.g); err != nil {
				return err
			}
			ce.g = compute.Mem{}
			m, err := c.Alloc(len(G) * 8)
			if err != nil {
				return err
			}
			ce.g, ce.gBytes = m, len(G)*8
		}
		return compute.Upload(c, ce.g.Ptr, G)
	})
}

func (ce *cudaEstimator) scores(out []float64, starts []int, l, smax int, S []int32, R []float64) error {
	st := make([]int32, len(starts))
	for i, v := range starts {
		st[i] = int32(v)
	}
	ns := 2*smax + 1
	n := len(starts) * ns * ce.nb
	if n*8 > ce.outBytes {
		panic("motion: scores output larger than allocated")
	}
	return ce.dev.Do(func(c *compute.Ctx) error {
		if err := compute.Upload(c, ce.s.Ptr, S); err != nil {
			return err
		}
		if err := compute.Upload(c, ce.r.Ptr, R); err != nil {
			return err
		}
		if err := compute.Upload(c, ce.starts.Ptr, st); err != nil {
			return err
		}
		err := c.Launch(ce.score, compute.Dim3{X: ce.nb, Y: ns, Z: len(starts)}, compute.D1(scoreThreads), 0,
			ce.g.Ptr, ce.r.Ptr, ce.s.Ptr, ce.starts.Ptr, int32(ce.nb), int32(ce.rows), int32(l), int32(smax), ce.out.Ptr)
		if err != nil {
			return err
		}
		return compute.Download(c, out[:n], ce.out.Ptr)
	})
}

func (ce *cudaEstimator) close() error {
	return ce.dev.Do(func(c *compute.Ctx) error {
		var first error
		for _, m := range []*compute.Mem{&ce.hist, &ce.spikes, &ce.bad, &ce.rowEdge, &ce.ampEdge, &ce.g, &ce.r, &ce.s, &ce.starts, &ce.out} {
			if err := c.Free(*m); err != nil && first == nil {
				first = err
			}
			*m = compute.Mem{}
		}
		return first
	})
}

// smallestFloat32 returns the smallest finite float32 v with pred(v)
// true, for pred false then true along the float32 order, or +Inf if
// pred is false for every finite value.
func smallestFloat32(pred func(float32) bool) float32 {
	key := func(v float32) uint32 {
		b := math.Float32bits(v)
		if b&0x80000000 != 0 {
			return ^b
		}
		return b | 0x80000000
	}
	val := func(k uint32) float32 {
		if k&0x80000000 != 0 {
			return math.Float32frombits(k &^ 0x80000000)
		}
		return math.Float32frombits(^k)
	}
	lo, hi := key(-math.MaxFloat32), key(math.MaxFloat32)
	if !pred(val(hi)) {
		return float32(math.Inf(1))
	}
	for lo < hi {
		m := lo + (hi-lo)/2
		if pred(val(m)) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return val(lo)
}
