package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ErrLoaderClosed is returned by [Loader.Next] after [Loader.Close].
var ErrLoaderClosed = errors.New("recording: loader closed")

// LoaderOptions configures a [Loader].
type LoaderOptions struct {
	// Windows lists the windows to load, in the order to hand them out;
	// nil means every window of the schedule in order.
	Windows []int
	// InFlight is the number of windows loaded ahead of the caller
	// (default 2). At most InFlight+1 buffers are ever allocated.
	InFlight int
	// Alloc returns a buffer of n int16 values, for example pinned host
	// memory for a GPU; nil means make. It is called at most InFlight+1
	// times, from the loader's goroutine.
	Alloc func(n int) []int16
	// Readers is the number of goroutines that read each window, in
	// contiguous pieces (see [ReadWindowParts]); 0 or 1 means one.
	Readers int
}

// Loader reads padded windows of a schedule ahead of the caller on its
// own goroutine. Next hands them out in order; Release gives a buffer
// back for reuse. The caller must Close the loader.
type Loader struct {
	rec      Recording
	sched    Schedule
	order    []int
	size     int
	maxBufs  int
	alloc    func(n int) []int16
	readers  int
	ready    chan loaded
	free     chan *Batch // each keeps its buffer in buf
	parts    partReader
	done     chan struct{}
	exited   chan struct{}
	stopOnce sync.Once

	mu        sync.Mutex
	out       map[*Batch]struct{} // handed out, not yet released
	err       error               // sticky error from Next
	allocated int
}

type loaded struct {
	b   *Batch
	err error
}

// NewLoader starts loading windows of s from rec. It allocates the first
// buffer before it returns and panics if a window index in opt.Windows is
// out of range or opt.Alloc returns a buffer of the wrong length.
func NewLoader(rec Recording, s Schedule, opt LoaderOptions) *Loader {
	order := opt.Windows
	if order == nil {
		order = make([]int, s.Windows)
		for i := range order {
			order[i] = i
		}
	} else {
		order = append([]int(nil), order...)
		for _, w := range order {
			if w < 0 || w >= s.Windows {
				panic(fmt.Sprintf("recording: loader window %d of %d", w, s.Windows))
			}
		}
	}
	inFlight := opt.InFlight
	if inFlight <= 0 {
		inFlight = 2
	}
	alloc := opt.Alloc
	if alloc == nil {
		alloc = func(n int) []int16 { return make([]int16, n) }
	}
	l := &Loader{
		rec: rec, sched: s, order: order,
		size:    s.Len() * rec.Channels(),
		maxBufs: inFlight + 1,
		alloc:   alloc,
		readers: opt.Readers,
		ready:   make(chan loaded, inFlight),
		free:    make(chan *Batch, inFlight+1),
		done:    make(chan struct{}),
		exited:  make(chan struct{}),
		out:     map[*Batch]struct{}{},
	}
	// The first buffer is allocated here so that a wrong Alloc panics in
	// the caller's goroutine, not the loader's.
	l.free <- l.newBuffer()
	l.allocated = 1
	go l.run()
	return l
}

// newBuffer allocates a buffer and the Batch that carries it, reused for
// every window the buffer holds.
func (l *Loader) newBuffer() *Batch {
	buf := l.alloc(l.size)
	if len(buf) != l.size {
		panic(fmt.Sprintf("recording: loader Alloc(%d) returned %d values", l.size, len(buf)))
	}
	return &Batch{buf: buf}
}

// buffer returns a free buffer, allocating while fewer than maxBufs
// exist; ok is false if the loader was closed while waiting.
func (l *Loader) buffer() (b *Batch, ok bool) {
	select {
	case b = <-l.free:
		return b, true
	default:
	}
	l.mu.Lock()
	grow := l.allocated < l.maxBufs
	if grow {
		l.allocated++
	}
	l.mu.Unlock()
	if grow {
		return l.newBuffer(), true
	}
	select {
	case b = <-l.free:
		return b, true
	case <-l.done:
		return nil, false
	}
}

func (l *Loader) run() {
	defer close(l.exited)
	defer close(l.ready)
	for _, wi := range l.order {
		select {
		case <-l.done:
			return
		default:
		}
		b, ok := l.buffer()
		if !ok {
			return
		}
		var r loaded
		if err := l.parts.window(l.rec, l.sched, wi, b.buf, l.readers); err != nil {
			r.err = err
		} else {
			b.Window, b.Data = l.sched.Window(wi), b.buf
			r.b = b
		}
		select {
		case l.ready <- r:
		case <-l.done:
			return
		}
		if r.err != nil {
			return
		}
	}
}

// Next returns the next window in order, io.EOF after the last, the
// first load error (a *[WindowError] naming the window and file) from then
// on, ctx.Err() if ctx ends first, or [ErrLoaderClosed] after Close. The
// batch's Data stays valid until it is released.
func (l *Loader) Next(ctx context.Context) (*Batch, error) {
	l.mu.Lock()
	err := l.err
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case <-l.done:
		return nil, ErrLoaderClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case r, ok := <-l.ready:
		return l.take(r, ok)
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.done:
		return nil, ErrLoaderClosed
	}
}

// TryNext is Next without waiting: ready is false (and b and err nil) if
// the next window is not loaded yet.
func (l *Loader) TryNext() (b *Batch, ready bool, err error) {
	l.mu.Lock()
	err = l.err
	l.mu.Unlock()
	if err != nil {
		return nil, true, err
	}
	select {
	case <-l.done:
		return nil, true, ErrLoaderClosed
	default:
	}
	select {
	case r, ok := <-l.ready:
		b, err = l.take(r, ok)
		return b, true, err
	default:
		return nil, false, nil
	}
}

// take hands out what the loader's goroutine sent (ok false: it is done).
func (l *Loader) take(r loaded, ok bool) (*Batch, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case !ok:
		select {
		case <-l.done:
			l.err = ErrLoaderClosed
		default:
			l.err = io.EOF
		}
		return nil, l.err
	case r.err != nil:
		l.err = r.err
		return nil, r.err
	}
	l.out[r.b] = struct{}{}
	return r.b, nil
}

// Release gives a batch returned by Next back to the loader, which will
// reuse its buffer; the caller must not use it afterwards. Release
// panics if b was not handed out by this loader or was already released.
func (l *Loader) Release(b *Batch) {
	l.mu.Lock()
	_, ok := l.out[b]
	delete(l.out, b)
	l.mu.Unlock()
	if !ok {
		panic("recording: Release of a batch this loader did not hand out, or released twice")
	}
	b.Data = nil
	l.free <- b // never blocks: at most maxBufs buffers exist
}

// Close stops the loader's goroutine and waits for it to finish. Batches
// already handed out stay valid. Close may be called more than once.
func (l *Loader) Close() {
	l.stopOnce.Do(func() { close(l.done) })
	<-l.exited
}
