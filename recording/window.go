package recording

import (
	"fmt"
	"strings"

	"dspk/internal/par"
)

// WindowError is a failure to load one window of a schedule; it names the
// recording and the window.
type WindowError struct {
	// Name is the recording's name (its file).
	Name string
	// Index is the window's number in the schedule.
	Index int
	// Start and End are the file samples the window tried to read.
	Start, End int64
	// Err is the underlying error.
	Err error
}

// Error names the window, its samples, the recording and the cause.
func (e *WindowError) Error() string {
	msg := e.Err.Error()
	if strings.Contains(msg, e.Name) {
		return fmt.Sprintf("recording: window %d (samples [%d, %d)): %s", e.Index, e.Start, e.End, msg)
	}
	return fmt.Sprintf("recording: %s: window %d (samples [%d, %d)): %s", e.Name, e.Index, e.Start, e.End, msg)
}

// Unwrap returns the underlying error.
func (e *WindowError) Unwrap() error { return e.Err }

// ReadWindow fills dst with padded window i of sched read from rec:
// dst[t*C+c] for t in [0, sched.Len()) and C = rec.Channels(). Columns
// before the window's Offset repeat the first sample read and columns
// after the data repeat the last one (Kilosort4's edge padding). A read
// failure is a *[WindowError]. ReadWindow panics if len(dst) is not
// sched.Len()*rec.Channels() or i is out of range.
func ReadWindow(rec Recording, sched Schedule, i int, dst []int16) error {
	return ReadWindowParts(rec, sched, i, dst, 1)
}

// ReadWindowParts is ReadWindow with the samples read in up to parts
// contiguous pieces at once, one goroutine each, for storage (or a page
// cache) that delivers more to concurrent reads; rec's ReadInt16 must be
// safe for concurrent use, as every recording of this package is. The
// first error of a piece is returned.
func ReadWindowParts(rec Recording, sched Schedule, i int, dst []int16, parts int) error {
	var r partReader
	return r.window(rec, sched, i, dst, parts)
}

// window is ReadWindowParts with r's reusable state.
func (r *partReader) window(rec Recording, sched Schedule, i int, dst []int16, parts int) error {
	c := rec.Channels()
	if len(dst) != sched.Len()*c {
		panic(fmt.Sprintf("recording: ReadWindow destination holds %d values, want %d samples × %d channels", len(dst), sched.Len(), c))
	}
	w := sched.Window(i)
	n := int(w.ReadEnd - w.ReadStart)
	data := dst[w.Offset*c : (w.Offset+n)*c]
	if err := r.read(rec, data, w.ReadStart, n, parts); err != nil {
		return &WindowError{Name: rec.Name(), Index: i, Start: w.ReadStart, End: w.ReadEnd, Err: err}
	}
	first := data[:c]
	for t := range w.Offset {
		copy(dst[t*c:(t+1)*c], first)
	}
	last := data[(n-1)*c:]
	for t := w.Offset + n; t < sched.Len(); t++ {
		copy(dst[t*c:(t+1)*c], last)
	}
	return nil
}

// minPart is the fewest samples a piece of ReadWindowParts reads.
const minPart = 4096

// partReader reads a stretch of samples in pieces on several goroutines;
// kept by a Loader, it allocates nothing per window once warm.
type partReader struct {
	rec    Recording
	data   []int16
	start  int64
	c      int
	errs   []error
	loop   par.Loop
	partFn func(p, lo, hi int) // part, bound once so that a read allocates nothing
}

// read reads samples [start, start+n) into data in up to parts pieces
// concurrently.
func (r *partReader) read(rec Recording, data []int16, start int64, n, parts int) error {
	parts = max(1, min(parts, n/minPart))
	if parts == 1 {
		return rec.ReadInt16(data, start, n)
	}
	r.rec, r.data, r.start, r.c = rec, data, start, rec.Channels()
	if r.partFn == nil {
		r.partFn = r.part
	}
	for len(r.errs) < parts {
		r.errs = append(r.errs, nil)
	}
	r.loop.Split(n, parts, r.partFn)
	r.rec, r.data = nil, nil
	for p := range parts {
		if err := r.errs[p]; err != nil {
			clear(r.errs)
			return err
		}
	}
	return nil
}

// part reads piece p of the current read, samples [lo, hi) of it.
func (r *partReader) part(p, lo, hi int) {
	r.errs[p] = r.rec.ReadInt16(r.data[lo*r.c:hi*r.c], r.start+int64(lo), hi-lo)
}
