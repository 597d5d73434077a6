package preprocess

import (
	"fmt"
	"unsafe"

	"dspk/compute"
	"dspk/linalg"
)

// Upload enqueues the copy of one padded raw window, src[t*NChanFile+c]
// for t in [0, T) (a recording.Batch's Data), into the next of g's two
// device input buffers, on g's copy stream, after the Process that last
// read that buffer has read it. From a pinned buffer of g
// ([cudaPreprocessor.PinnedWindows]) the copy is asynchronous and src must
// stay untouched until the Process of this window returns; from any other
// memory Upload waits for the copy (at pageable speed). It panics if
// len(src) ≠ T·NChanFile or two uploaded windows await Process.
func (g *cudaPreprocessor) Upload(c *compute.Ctx, src []int16) error {
	g.check("Upload")
	n := g.t * g.cf
	if len(src) != n {
		panic(fmt.Sprintf("preprocess: cudaPreprocessor.Upload: len(src) = %d, want T·NChanFile = %d·%d", len(src), g.t, g.cf))
	}
	if g.pending == 2 {
		panic("preprocess: cudaPreprocessor.Upload: two uploaded windows await Process")
	}
	slot := (g.head + g.pending) % 2
	if g.in[slot].Ptr == 0 {
		var err error
		if g.in[slot], err = c.Alloc(n * 2); err != nil {
			return err
		}
	}
	cc := c.WithStream(g.copyStream)
	if err := cc.Wait(g.consumed[slot]); err != nil {
		return err
	}
	var err error
	if h, off, ok := g.pinnedOf(unsafe.Pointer(&src[0]), n*2); ok {
		err = cc.CopyHtoD(g.in[slot].Ptr, h, off, n*2)
	} else {
		err = compute.Upload(cc, g.in[slot].Ptr, src)
	}
	if err != nil {
		return err
	}
	if err := cc.Record(g.uploaded[slot]); err != nil {
		return err
	}
	g.pending++
	return nil
}

// Process enqueues, on c's stream, the preprocessing of the oldest
// uploaded window not yet processed (see [cpuPreprocessor.Run] for the
// steps), with the whitening of the last SetWhitening, and returns the
// device address of the result, [C][T] float32 channel-major. The result
// stays valid until the next Process; work on other streams that reads it
// must be ordered by the caller. Process returns once the window's upload
// has finished, so that its host buffer may be reused. It panics if no
// window awaits processing.
func (g *cudaPreprocessor) Process(c *compute.Ctx) (compute.Ptr, error) {
	g.check("Process")
	if g.pending == 0 {
		panic("preprocess: cudaPreprocessor.Process: no window uploaded")
	}
	slot := g.head
	if err := c.Wait(g.uploaded[slot]); err != nil {
		return 0, err
	}
	out := g.y.Ptr
	if g.white {
		out = g.z.Ptr
	}
	if err := g.apply(c, g.in[slot].Ptr, out, g.consumed[slot]); err != nil {
		return 0, err
	}
	g.head = (g.head + 1) % 2
	g.pending--
	if err := c.EventSync(g.uploaded[slot]); err != nil {
		return 0, err
	}
	return g.out, nil
}

// apply enqueues, on c's stream, the preprocessing of the raw window at in
// (T·NChanFile int16 on the device) into dst (C·T float32), whitened by
// the last SetWhitening; consumed, unless zero, is recorded once in has
// been read.
func (g *cudaPreprocessor) apply(c *compute.Ctx, in, dst compute.Ptr, consumed compute.Event) error {
	if err := g.mark(c, 0); err != nil {
		return err
	}
	if err := c.Memset8(g.sums.Ptr, 0, g.sums.Bytes); err != nil {
		return err
	}
	g.fSums.Set(1, in)
	if err := g.fSums.Launch(c); err != nil {
		return err
	}
	if err := g.fMeans.Launch(c); err != nil {
		return err
	}
	if err := g.mark(c, 1); err != nil {
		return err
	}
	g.fCAR.Set(1, in)
	if err := g.fCAR.Launch(c); err != nil {
		return err
	}
	if consumed != (compute.Event{}) {
		if err := c.Record(consumed); err != nil {
			return err
		}
	}
	if err := g.mark(c, 2); err != nil {
		return err
	}
	hp := dst // the high-pass writes the result unless whitening follows
	if g.white {
		hp = g.y.Ptr
	}
	if g.fast {
		if err := g.fFwd.Launch(c); err != nil {
			return err
		}
		if err := g.mark(c, 3); err != nil {
			return err
		}
		g.fBwd.Set(0, hp)
		if err := g.fBwd.Launch(c); err != nil {
			return err
		}
	} else {
		if err := g.mark(c, 3); err != nil {
			return err
		}
		g.fDirect.Set(0, hp)
		if err := g.fDirect.Launch(c); err != nil {
			return err
		}
	}
	if err := g.mark(c, 4); err != nil {
		return err
	}
	if g.white {
		var err error
		if g.cfg.dense {
			err = c.Sgemm(compute.NoTrans, compute.NoTrans, g.t, g.c, g.c, 1, g.y.Ptr, g.t, g.wDense.Ptr, g.c, 0, dst, g.t)
		} else {
			g.fWhite.Set(0, dst)
			err = g.fWhite.Launch(c)
		}
		if err != nil {
			return err
		}
	}
	g.out = dst
	return g.mark(c, 5)
}

// stageNames name the intervals between the events of g.stages.
var stageNames = []string{"sums", "CAR", "hp-forward", "hp-backward", "whiten"}

// mark records stage event i when timing.
func (g *cudaPreprocessor) mark(c *compute.Ctx, i int) error {
	if g.stages == nil {
		return nil
	}
	return c.Record(g.stages[i])
}

// Output returns the device address of the last Process's result.
func (g *cudaPreprocessor) Output() compute.Ptr { return g.out }

// Download copies the last Process's result into dst (C·T values,
// dst[c*T+t]) after the work on c's stream, and waits for it. A dst from
// [cudaPreprocessor.PinnedOutput] is copied at full speed. It panics if
// len(dst) ≠ C·T.
func (g *cudaPreprocessor) Download(c *compute.Ctx, dst []float32) error {
	g.check("Download")
	n := g.c * g.t
	if len(dst) != n {
		panic(fmt.Sprintf("preprocess: cudaPreprocessor.Download: len(dst) = %d, want C·T = %d·%d", len(dst), g.c, g.t))
	}
	if h, off, ok := g.pinnedOf(unsafe.Pointer(&dst[0]), n*4); ok {
		if err := c.CopyDtoH(h, off, g.out, n*4); err != nil {
			return err
		}
		return c.SyncOp("preprocess: GPU download")
	}
	return compute.Download(c, dst, g.out)
}

// Run preprocesses one padded window on the GPU as [cpuPreprocessor.Run]
// does on the CPU: src holds it interleaved as stored, dst receives the
// result channel-major, dst[c*T+t], and w (nil: none) whitens it. Run
// uploads w and src, processes, downloads and waits; src and dst may be
// any memory (pinned buffers of g are copied faster). It panics as
// cpuPreprocessor.Run does, or if uploaded windows await Process.
func (g *cudaPreprocessor) Run(dst []float32, src []int16, w *linalg.Whitening) error {
	g.check("Run")
	C, T := g.c, g.t
	if len(src) != T*g.cf {
		panic(fmt.Sprintf("preprocess: cudaPreprocessor.Run: len(src) = %d, want T·NChanFile = %d·%d", len(src), T, g.cf))
	}
	if len(dst) != C*T {
		panic(fmt.Sprintf("preprocess: cudaPreprocessor.Run: len(dst) = %d, want C·T = %d·%d", len(dst), C, T))
	}
	if w != nil && w.C != C {
		panic(fmt.Sprintf("preprocess: cudaPreprocessor.Run: whitening of %d channels for %d", w.C, C))
	}
	if g.pending != 0 {
		panic("preprocess: cudaPreprocessor.Run while uploaded windows await Process")
	}
	return g.dev.Do(func(c *compute.Ctx) error {
		if err := g.SetWhitening(c, w); err != nil {
			return err
		}
		if err := g.Upload(c, src); err != nil {
			return err
		}
		if _, err := g.Process(c); err != nil {
			return err
		}
		return g.Download(c, dst)
	})
}

// poison fills g's device work buffers with NaN (all bits set), so that a
// test sees any element a kernel fails to write.
func (g *cudaPreprocessor) poison(c *compute.Ctx) error {
	for _, b := range []compute.Mem{g.sums, g.mean, g.x, g.f, g.y, g.z} {
		if err := c.Memset8(b.Ptr, 0xff, b.Bytes); err != nil {
			return err
		}
	}
	return nil
}
