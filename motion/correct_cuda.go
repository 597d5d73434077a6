package motion

import (
	"fmt"

	"dspk/compute"
)

// cudaCorrector is the Corrector's CUDA back end: the matrix of the
// current shifts in device memory (uploaded from pinned memory, two of
// each so that the next upload does not wait for the products still
// reading the last), cuBLAS SGEMM for the product, and the scratch
// working array Window swaps into the window.
type cudaCorrector struct {
	dev      *compute.Device
	c        int
	mats     [2]compute.Mem
	pins     [2]*compute.HostMem
	evs      [2]compute.Event
	recorded [2]bool
	cur      int // index of the device matrix in use
	gen      int // Corrector.gen of mats[cur]; 0 = none
	buf      compute.Mem
}

func newCUDACorrector(dev *compute.Device, C int) (*cudaCorrector, error) {
	g := &cudaCorrector{dev: dev, c: C}
	err := dev.Do(func(c *compute.Ctx) error {
		for i := range 2 {
			var err error
			if g.mats[i], err = c.Alloc(C * C * 4); err != nil {
				return err
			}
			if g.pins[i], err = c.AllocHost(C * C * 4); err != nil {
				return err
			}
			if g.evs[i], err = c.NewEvent(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		g.close()
		return nil, err
	}
	return g, nil
}

// scratch returns the C·T float32 device buffer Window writes into.
func (g *cudaCorrector) scratch(c *compute.Ctx, n int) (compute.Mem, error) {
	if g.buf.Bytes != n*4 {
		if err := c.Free(g.buf); err != nil {
			return compute.Mem{}, err
		}
		g.buf = compute.Mem{}
		m, err := c.Alloc(n * 4)
		if err != nil {
			return compute.Mem{}, err
		}
		g.buf = m
	}
	return g.buf, nil
}

// ApplyDevice writes window w's correction of src into dst on the CUDA
// device, both C·T float32 channel-major ([C][T], the layout of
// [compute.Window.DataMem]), as dst = M_w·src by cuBLAS SGEMM in float32
// (FP32, not TF32), on c's stream inside the caller's Do, without
// synchronising. dst and src must not overlap. The matrix is uploaded (C²
// float32 from pinned memory, asynchronously) only when the window's
// shifts differ from the last window's. It panics on the CPU or if w is
// out of range.
func (k *Corrector) ApplyDevice(c *compute.Ctx, dst, src compute.Ptr, T, w int) error {
	g := k.gpu
	if g == nil {
		panic("motion: ApplyDevice on the CPU")
	}
	if T <= 0 {
		panic(fmt.Sprintf("motion: ApplyDevice: %d samples", T))
	}
	k.matrix(w)
	C := g.c
	if g.gen != k.gen {
		n := 1 - g.cur
		if g.recorded[n] {
			if err := c.EventSync(g.evs[n]); err != nil {
				return err
			}
		}
		copy(g.pins[n].Float32(), k.m)
		if err := c.CopyHtoD(g.mats[n].Ptr, g.pins[n], 0, C*C*4); err != nil {
			return err
		}
		if err := c.Record(g.evs[n]); err != nil {
			return err
		}
		g.recorded[n] = true
		g.cur, g.gen = n, k.gen
	}
	// Column-major: dst (T×C) = src (T×C) · B, B[j, c] = M[c][j] (M
	// row-major read with ld C).
	return c.Sgemm(compute.NoTrans, compute.NoTrans, T, C, C, 1, src, T, g.mats[g.cur].Ptr, C, 0, dst, T)
}

func (g *cudaCorrector) close() error {
	return g.dev.Do(func(c *compute.Ctx) error {
		var first error
		keep := func(err error) {
			if err != nil && first == nil {
				first = err
			}
		}
		if err := c.Sync(); err != nil {
			keep(err)
		}
		for i := range 2 {
			keep(c.Free(g.mats[i]))
			g.mats[i] = compute.Mem{}
			if g.pins[i] != nil {
				keep(c.FreeHost(g.pins[i]))
				g.pins[i] = nil
			}
			if g.evs[i] != (compute.Event{}) {
				keep(c.DestroyEvent(g.evs[i]))
				g.evs[i] = compute.Event{}
			}
		}
		keep(c.Free(g.buf))
		g.buf = compute.Mem{}
		return first
	})
}
