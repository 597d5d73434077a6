package compute

import (
	"fmt"
	"unsafe"
)

// Window is one padded window of a recording held where its device works
// on it: the raw samples as stored (T rows of NChanFile int16, interleaved,
// as recording.Batch.Data holds them) and the float32 working array of C
// channels, channel-major ([C][T], x[c*T+t]) that the ops read and write
// in turn (preprocessing writes it, the second moment and detection read
// it).
//
// On the CPU both live in host memory: [Window.Load] keeps the caller's
// raw slice without copying, and [Window.Data] is the working array
// itself. On a CUDA device both live in device memory: Load uploads the
// raw samples once (asynchronously staged from memory of
// [Device.AllocHost], at pageable speed otherwise), the ops work on
// [Window.RawMem] and [Window.DataMem] inside Do and call
// [Window.MarkWritten] after writing the working array, and Data downloads
// it into pinned host memory only when a host stage asks for it, once per
// write.
//
// [Window.Prefetch] overlaps the upload of the next window with the work
// on this one: on a CUDA device it copies the next raw samples into a
// second device buffer on a stream of their own, and the Load of the same
// samples then only swaps the two buffers.
//
// A Window is built once per shape by [Device.NewWindow] and reused for
// every window of a pass; it is not safe for concurrent use. Load,
// Prefetch, Data and Close must not be called inside Do.
type Window struct {
	dev      *Device
	c, t, cf int

	raw  []int16   // the raw samples of the last Load (host)
	data []float32 // CPU: the working array; CUDA: its host copy (pinned)

	rawMem, dataMem Mem      // CUDA: the window on the device
	host            *HostMem // CUDA: pinned memory of data
	stale           bool     // CUDA: data is older than dataMem
	closed          bool

	// CUDA, for Prefetch: the second raw buffer, the host samples being
	// copied into it (nil if none), the stream of the copies, and the
	// events "the copy into spare is done" and "the work on the buffer
	// that became spare is enqueued before this point".
	spare        Mem
	spareOf      *int16
	copies       Stream
	copied, free Event
}

// NewWindow returns a window of C output channels, T samples and NChanFile
// channels per stored sample on d, allocating its buffers (on a CUDA
// device: two raw buffers of T·NChanFile int16 and C·T float32 of device
// memory, a copy stream and two events; the pinned host copy of the
// working array comes with the first Data). It panics unless C, T and
// NChanFile are positive.
func (d *Device) NewWindow(C, T, NChanFile int) (*Window, error) {
	if C < 1 || T < 1 || NChanFile < 1 {
		panic(fmt.Sprintf("compute: NewWindow(%d, %d, %d): sizes must be positive", C, T, NChanFile))
	}
	w := &Window{dev: d, c: C, t: T, cf: NChanFile}
	if d.gpu == nil {
		w.data = make([]float32, C*T)
		return w, nil
	}
	err := d.Do(func(c *Ctx) error {
		var err error
		if w.rawMem, err = c.Alloc(T * NChanFile * 2); err != nil {
			return err
		}
		if w.spare, err = c.Alloc(T * NChanFile * 2); err != nil {
			return err
		}
		if w.copies, err = c.NewStream(); err != nil {
			return err
		}
		if w.copied, err = c.NewEvent(); err != nil {
			return err
		}
		if w.free, err = c.NewEvent(); err != nil {
			return err
		}
		if err = c.Record(w.free); err != nil {
			return err
		}
		// The pinned host copy of the working array is allocated by the
		// first Data: a pass that keeps its work on the device never
		// pins it (on NP1, 92 MB that took ~40 ms to pin at start-up).
		w.dataMem, err = c.Alloc(C * T * 4)
		return err
	})
	if err != nil {
		w.release()
		return nil, err
	}
	return w, nil
}

// Device returns the device w lives on.
func (w *Window) Device() *Device { return w.dev }

// Channels returns C, the channels of the working array.
func (w *Window) Channels() int { return w.c }

// Len returns T, the samples of the padded window.
func (w *Window) Len() int { return w.t }

// FileChannels returns NChanFile, the channels per stored sample.
func (w *Window) FileChannels() int { return w.cf }

// Load makes raw (T·NChanFile values, interleaved as stored) the window's
// raw samples. On the CPU raw is kept, not copied: it must not change while
// the window is in use. On a CUDA device it is uploaded — from pinned
// memory on the window's copy stream, into the buffer the work queued on
// the window no longer reads, so that Load waits for the copy only (for no
// copy if the last Prefetch began it) — and raw may be reused when Load
// returns. It panics if len(raw) ≠ T·NChanFile.
func (w *Window) Load(raw []int16) error {
	w.checkRaw("Load", raw)
	w.raw = raw
	if w.dev.gpu == nil {
		return nil
	}
	if w.spareOf != &raw[0] {
		// Pinned samples go up as a prefetch does, on the copy stream:
		// the host waits for the copy only, not for the work queued on
		// the window before it.
		if err := w.Prefetch(raw); err != nil {
			return err
		}
	}
	prefetched := w.spareOf == &raw[0]
	w.spareOf = nil
	return w.dev.Do(func(c *Ctx) error {
		if prefetched {
			if err := c.EventSync(w.copied); err != nil {
				return err
			}
			w.rawMem, w.spare = w.spare, w.rawMem
			// Work on the buffer now spare was enqueued before this point.
			return c.Record(w.free)
		}
		return Upload(c, w.rawMem.Ptr, raw)
	})
}

// Prefetch begins the upload of raw, the next window's samples, on a CUDA
// device, while the device still works on this one; the next Load of the
// same slice completes it. raw must be memory of [Device.AllocHost] (or
// Prefetch does nothing) and must not change until that Load returns.
// On the CPU Prefetch does nothing. It panics if len(raw) ≠ T·NChanFile.
func (w *Window) Prefetch(raw []int16) error {
	w.checkRaw("Prefetch", raw)
	w.spareOf = nil
	if w.dev.gpu == nil {
		return nil
	}
	n := len(raw) * 2
	h, off, ok := w.dev.pinnedOf(unsafe.Pointer(&raw[0]), n)
	if !ok {
		return nil
	}
	err := w.dev.Do(func(c *Ctx) error {
		cc := c.WithStream(w.copies)
		if err := cc.Wait(w.free); err != nil {
			return err
		}
		if err := cc.CopyHtoD(w.spare.Ptr, h, off, n); err != nil {
			return err
		}
		return cc.Record(w.copied)
	})
	if err == nil {
		w.spareOf = &raw[0]
	}
	return err
}

// Raw returns the host raw samples of the last Load (nil before any).
func (w *Window) Raw() []int16 { return w.raw }

// RawMem returns the raw samples on a CUDA device (the zero Mem on the
// CPU).
func (w *Window) RawMem() Mem { return w.rawMem }

// DataMem returns the working array on a CUDA device (the zero Mem on the
// CPU). An op that writes it calls MarkWritten.
func (w *Window) DataMem() Mem { return w.dataMem }

// SwapDataMem makes m, C·T float32 on the window's CUDA device, the
// window's working array and returns the one it replaces, which the
// caller then owns (and frees): an op that goes on reading a window's
// array on the device after the window moves on, such as a detection
// queued behind the next window's preprocessing, takes the array so
// instead of copying it. The new array holds no defined values until an
// op writes it; the work that writes it must wait for the work still
// reading m. It panics on the CPU or if m is not C·T float32.
func (w *Window) SwapDataMem(m Mem) Mem {
	if w.dev.gpu == nil {
		panic("compute: SwapDataMem of a window on the CPU")
	}
	if m.Bytes != w.dataMem.Bytes || m.Ptr == 0 {
		panic(fmt.Sprintf("compute: SwapDataMem of %d bytes for a working array of %d", m.Bytes, w.dataMem.Bytes))
	}
	old := w.dataMem
	w.dataMem = m
	w.stale = true
	return old
}

// MarkWritten records that an op wrote the working array on the device,
// so that the next Data downloads it. On the CPU it does nothing.
func (w *Window) MarkWritten() {
	if w.dev.gpu != nil {
		w.stale = true
	}
}

// Data returns the working array in host memory, C·T float32,
// channel-major. On the CPU it is the working array itself, which CPU ops
// write; on a CUDA device it is a copy, downloaded if the device's array
// was written since the last Data, and valid until the next write.
func (w *Window) Data() ([]float32, error) {
	w.check("Data")
	if !w.stale && w.data != nil {
		return w.data, nil
	}
	err := w.dev.Do(func(c *Ctx) error {
		if w.host == nil {
			h, err := c.AllocHost(w.c * w.t * 4)
			if err != nil {
				return err
			}
			w.host, w.data = h, h.Float32()[:w.c*w.t]
		}
		if !w.stale {
			return nil
		}
		if err := c.CopyDtoH(w.host, 0, w.dataMem.Ptr, w.c*w.t*4); err != nil {
			return err
		}
		return c.SyncOp("compute: window download")
	})
	if err != nil {
		return nil, err
	}
	w.stale = false
	return w.data, nil
}

// checkRaw panics if w is closed or raw is not T·NChanFile values.
func (w *Window) checkRaw(op string, raw []int16) {
	w.check(op)
	if n := w.t * w.cf; len(raw) != n {
		panic(fmt.Sprintf("compute: Window.%s: len(raw) = %d, want T·NChanFile = %d·%d", op, len(raw), w.t, w.cf))
	}
}

func (w *Window) check(op string) {
	if w.closed {
		panic("compute: Window." + op + " after Close")
	}
}

// release frees what a CUDA window holds.
func (w *Window) release() error {
	if w.dev.gpu == nil {
		return nil
	}
	err := w.dev.Do(func(c *Ctx) error {
		err := c.Sync()
		keep := func(e error) {
			if e != nil && err == nil {
				err = e
			}
		}
		if w.copies != (Stream{}) {
			keep(c.WithStream(w.copies).Sync())
			keep(c.DestroyStream(w.copies))
			w.copies = Stream{}
		}
		for _, e := range []*Event{&w.copied, &w.free} {
			if *e != (Event{}) {
				keep(c.DestroyEvent(*e))
				*e = Event{}
			}
		}
		for _, m := range []*Mem{&w.rawMem, &w.spare, &w.dataMem} {
			keep(c.Free(*m))
			*m = Mem{}
		}
		keep(c.FreeHost(w.host))
		return err
	})
	w.host, w.data, w.spareOf = nil, nil, nil
	return err
}

// Close frees the window's buffers; it may be called more than once.
func (w *Window) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	w.raw = nil
	return w.release()
}
