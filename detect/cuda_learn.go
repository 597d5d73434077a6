package detect

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"dspk/compute"
)

//go:embed kernels/clips.cu
var clipsSource string

// initClips is the first capacity of the GPU clip list; it grows when a
// window has more isolated peaks (and the window is redone).
const initClips = 1 << 14

// gpuClipFinder is the CUDA back end of [Learner.AddWindow]: it finds the
// isolated single-channel peaks of a whitened window that stays on the
// device and their unit-norm clips, exactly as [FindClips] (the same
// comparisons in float32, the norms in float64 in the same order, IEEE
// square root and division), and downloads only the clips, which the host
// orders by channel, then time, as FindClips returns them. It owns C·T
// bytes of peak flags and the clip list.
type gpuClipFinder struct {
	dev         *compute.Device
	c, t, nt    int
	th          float32
	fPeaks, fIs *compute.Kernel

	flag, keys, clips, count compute.Mem
	cap                      int
	hCount, hKeys, hClips    *compute.HostMem
	order                    []int32
}

// newGPUClipFinder compiles the kernels for prm's sizes and allocates the
// buffers of C×T windows on dev.
func newGPUClipFinder(dev *compute.Device, C, T int, prm Params) (*gpuClipFinder, error) {
	if int64(C)*int64(T) > math.MaxInt32 {
		return nil, fmt.Errorf("detect: GPU clips: window of %d channels × %d samples is too large", C, T)
	}
	f := &gpuClipFinder{dev: dev, c: C, t: T, nt: prm.NT, th: float32(prm.ThSingleCh)}
	err := dev.Do(func(c *compute.Ctx) error {
		mod, err := c.Compile("detect/kernels/clips.cu", clipsSource,
			fmt.Sprintf("-DDNT=%d", prm.NT), fmt.Sprintf("-DDT0=%d", prm.NT0Min),
			fmt.Sprintf("-DPCR=%d", peakChanRadius), fmt.Sprintf("-DPTR=%d", peakTimeRadius),
			fmt.Sprintf("-DICR=%d", isoChanRadius), fmt.Sprintf("-DITR=%d", isoTimeRadius))
		if err != nil {
			return err
		}
		if f.fPeaks, err = mod.Kernel("peaks"); err != nil {
			return err
		}
		if f.fIs, err = mod.Kernel("isolated"); err != nil {
			return err
		}
		if f.flag, err = c.Alloc(C * T); err != nil {
			return err
		}
		if f.count, err = c.Alloc(4); err != nil {
			return err
		}
		if f.hCount, err = c.AllocHost(4); err != nil {
			return err
		}
		return f.grow(c, initClips)
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// grow (re)allocates the clip list for n clips.
func (f *gpuClipFinder) grow(c *compute.Ctx, n int) error {
	for _, m := range []*compute.Mem{&f.keys, &f.clips} {
		if err := c.Free(*m); err != nil {
			return err
		}
		*m = compute.Mem{}
	}
	for _, h := range []**compute.HostMem{&f.hKeys, &f.hClips} {
		if *h != nil {
			if err := c.FreeHost(*h); err != nil {
				return err
			}
			*h = nil
		}
	}
	var err error
	if f.keys, err = c.Alloc(n * 4); err != nil {
		return err
	}
	if f.clips, err = c.Alloc(n * f.nt * 4); err != nil {
		return err
	}
	if f.hKeys, err = c.AllocHost(n * 4); err != nil {
		return err
	}
	if f.hClips, err = c.AllocHost(n * f.nt * 4); err != nil {
		return err
	}
	f.cap = n
	return nil
}

// find appends to dst the clips of the window at x on the device ([C][T]
// float32), as FindClips would of the same values.
func (f *gpuClipFinder) find(dst []float32, x compute.Ptr) ([]float32, error) {
	var n int
	err := f.dev.Do(func(c *compute.Ctx) error {
		for {
			steps := []func() error{
				func() error { return c.Memset32(f.count.Ptr, 0, 1) },
				func() error {
					return c.Launch(f.fPeaks, compute.D1(2048), compute.D1(256), 0, f.flag, x, int32(f.c), int32(f.t), f.th)
				},
				func() error {
					return c.Launch(f.fIs, compute.D1(2048), compute.D1(256), 0,
						f.keys, f.clips, f.count, int32(f.cap), f.flag, x, int32(f.c), int32(f.t))
				},
				func() error { return c.CopyDtoH(f.hCount, 0, f.count.Ptr, 4) },
				func() error { return c.SyncOp("detect: GPU clips") },
			}
			for _, s := range steps {
				if err := s(); err != nil {
					return err
				}
			}
			n = int(*(*int32)(f.hCount.Ptr()))
			if n <= f.cap {
				break
			}
			if err := f.grow(c, n+n/4); err != nil {
				return err
			}
		}
		if n == 0 {
			return nil
		}
		if err := c.CopyDtoH(f.hKeys, 0, f.keys.Ptr, n*4); err != nil {
			return err
		}
		if err := c.CopyDtoH(f.hClips, 0, f.clips.Ptr, n*f.nt*4); err != nil {
			return err
		}
		return c.SyncOp("detect: GPU clip download")
	})
	if err != nil || n == 0 {
		return dst, err
	}
	keys := unsafe.Slice((*int32)(f.hKeys.Ptr()), n)
	clips := unsafe.Slice((*float32)(f.hClips.Ptr()), n*f.nt)
	f.order = f.order[:0]
	for i := range n {
		f.order = append(f.order, int32(i))
	}
	slices.SortFunc(f.order, func(a, b int32) int { return int(keys[a] - keys[b]) })
	for _, i := range f.order {
		dst = append(dst, clips[int(i)*f.nt:int(i+1)*f.nt]...)
	}
	return dst, nil
}

// Close frees the finder's device and pinned buffers; it may be called
// more than once.
func (f *gpuClipFinder) Close() error {
	if f.dev == nil {
		return nil
	}
	err := f.dev.Do(func(c *compute.Ctx) error {
		first := c.Sync()
		for _, m := range []*compute.Mem{&f.flag, &f.keys, &f.clips, &f.count} {
			if err := c.Free(*m); err != nil && first == nil {
				first = err
			}
			*m = compute.Mem{}
		}
		for _, h := range []**compute.HostMem{&f.hCount, &f.hKeys, &f.hClips} {
			if *h != nil {
				if err := c.FreeHost(*h); err != nil && first == nil {
					first = err
				}
				*h = nil
			}
		}
		return first
	})
	f.dev = nil
	return err
}
