package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

func loaderFixture(t *testing.T, channels, samples, nt, pad int) (Recording, Schedule) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(channels), uint64(samples)))
	data := make([]int16, channels*samples)
	for i := range data {
		data[i] = int16(rng.Uint32())
	}
	rec := NewMemory("loader-rec", data, channels, 1000, nil)
	s, err := NewSchedule(0, int64(samples), nt, pad)
	if err != nil {
		t.Fatal(err)
	}
	return rec, s
}

// countingAlloc counts allocations and the distinct buffers it made.
type countingAlloc struct {
	mu sync.Mutex
	n  int
}

func (a *countingAlloc) alloc(n int) []int16 {
	a.mu.Lock()
	a.n++
	a.mu.Unlock()
	return make([]int16, n)
}

func (a *countingAlloc) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

func checkBatch(t *testing.T, rec Recording, s Schedule, b *Batch, want int) {
	t.Helper()
	if b.Window.Index != want || b.Window != s.Window(want) {
		t.Fatalf("got window %d, want %d", b.Window.Index, want)
	}
	ref := naiveWindow(rec, s, want)
	for k := range ref {
		if b.Data[k] != ref[k] {
			t.Fatalf("window %d value %d = %d, want %d", want, k, b.Data[k], ref[k])
		}
	}
}

func TestLoaderOrderAndReuse(t *testing.T) {
	t.Parallel()
	rec, s := loaderFixture(t, 5, 1003, 50, 7)
	for _, tc := range []struct {
		windows  []int
		inFlight int
	}{
		{nil, 0}, {nil, 1}, {[]int{3, 0, 19, 19, 7}, 2}, {[]int{}, 3}, {[]int{5}, 4},
	} {
		t.Run(fmt.Sprint(tc.windows, tc.inFlight), func(t *testing.T) {
			want := tc.windows
			if want == nil {
				for i := range s.Windows {
					want = append(want, i)
				}
			}
			var a countingAlloc
			l := NewLoader(rec, s, LoaderOptions{Windows: tc.windows, InFlight: tc.inFlight, Alloc: a.alloc})
			defer l.Close()
			bufs := map[*int16]bool{}
			for _, w := range want {
				b, err := l.Next(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				checkBatch(t, rec, s, b, w)
				bufs[unsafe.SliceData(b.Data)] = true
				l.Release(b)
				if b.Data != nil {
					t.Fatal("Release left Data set")
				}
			}
			for range 2 {
				if b, err := l.Next(context.Background()); err != io.EOF {
					t.Fatalf("after the last window: %v, %v", b, err)
				}
			}
			inFlight := tc.inFlight
			if inFlight == 0 {
				inFlight = 2
			}
			if a.count() > inFlight+1 || len(bufs) > inFlight+1 {
				t.Errorf("%d allocations, %d distinct buffers; bound is %d", a.count(), len(bufs), inFlight+1)
			}
		})
	}
}

// TestLoaderInFlightBound holds every batch without releasing: the loader
// must stop at InFlight+1 buffers and resume after a release.
func TestLoaderInFlightBound(t *testing.T) {
	t.Parallel()
	rec, s := loaderFixture(t, 3, 2000, 40, 5)
	for _, inFlight := range []int{1, 2, 3} {
		var a countingAlloc
		l := NewLoader(rec, s, LoaderOptions{InFlight: inFlight, Alloc: a.alloc})
		var held []*Batch
		for i := range inFlight + 1 {
			b, err := l.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			checkBatch(t, rec, s, b, i)
			held = append(held, b)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		if b, err := l.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("InFlight %d: Next with every buffer held = %v, %v", inFlight, b, err)
		}
		cancel()
		if a.count() != inFlight+1 {
			t.Errorf("InFlight %d: %d allocations, want %d", inFlight, a.count(), inFlight+1)
		}
		l.Release(held[0])
		b, err := l.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, rec, s, b, inFlight+1)
		if a.count() != inFlight+1 {
			t.Errorf("InFlight %d: allocated again after a release (%d)", inFlight, a.count())
		}
		l.Close()
		l.Close() // twice is fine
		if _, err := l.Next(context.Background()); err != ErrLoaderClosed {
			t.Errorf("Next after Close: %v", err)
		}
		l.Release(b) // batches handed out stay releasable
	}
}

func TestLoaderCancel(t *testing.T) {
	t.Parallel()
	rec, s := loaderFixture(t, 2, 500, 30, 4)
	l := NewLoader(rec, s, LoaderOptions{})
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Next(ctx); err != context.Canceled {
		t.Fatalf("cancelled context: %v", err)
	}
	// The loader is still usable with a live context.
	b, err := l.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, rec, s, b, 0)
	// Cancel while Next waits (every buffer held).
	var held []*Batch
	held = append(held, b)
	for range 2 {
		b, err := l.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, b)
	}
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if _, err := l.Next(ctx); err != context.Canceled {
		t.Fatalf("cancel while waiting: %v", err)
	}
	// Close with the goroutine blocked on a free buffer must return.
	done := make(chan struct{})
	go func() { l.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
}

// failingRec fails reads that touch sample bad.
type failingRec struct {
	Recording
	bad int64
}

func (f failingRec) ReadInt16(dst []int16, start int64, n int) error {
	if start <= f.bad && f.bad < start+int64(n) {
		return errors.New("device on fire")
	}
	return f.Recording.ReadInt16(dst, start, n)
}

func TestLoaderError(t *testing.T) {
	t.Parallel()
	rec, s := loaderFixture(t, 4, 1000, 100, 10)
	// Sample 450 is read by window 4 (reads [390, 510)) and by no earlier
	// window (window 3 reads [290, 410)).
	bad := failingRec{rec, 450}
	l := NewLoader(bad, s, LoaderOptions{InFlight: 3})
	defer l.Close()
	for i := range 4 {
		b, err := l.Next(context.Background())
		if err != nil {
			t.Fatalf("window %d: %v", i, err)
		}
		checkBatch(t, rec, s, b, i)
		l.Release(b)
	}
	for range 2 { // sticky
		_, err := l.Next(context.Background())
		var we *WindowError
		if !errors.As(err, &we) || we.Index != 4 || !strings.Contains(err.Error(), "window 4") ||
			!strings.Contains(err.Error(), "loader-rec") || !strings.Contains(err.Error(), "device on fire") {
			t.Fatalf("error %v", err)
		}
	}
}

func TestLoaderMisuse(t *testing.T) {
	t.Parallel()
	rec, s := loaderFixture(t, 2, 300, 30, 4)
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "recording: ") {
				t.Errorf("%s: panic %v", name, r)
			}
		}()
		f()
	}
	mustPanic("window out of range", func() { NewLoader(rec, s, LoaderOptions{Windows: []int{s.Windows}}) })
	mustPanic("short Alloc", func() {
		NewLoader(rec, s, LoaderOptions{Alloc: func(n int) []int16 { return make([]int16, n-1) }})
	})
	l := NewLoader(rec, s, LoaderOptions{})
	defer l.Close()
	b, err := l.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l.Release(b)
	mustPanic("double release", func() { l.Release(b) })
	mustPanic("foreign batch", func() { l.Release(&Batch{Data: make([]int16, s.Len()*2)}) })
}

// TestReadWindowParts checks that reading a window in concurrent pieces
// gives exactly ReadWindow's result, edge padding included, and that the
// loader's Readers option does too; a failing piece is a WindowError.
func TestReadWindowParts(t *testing.T) {
	t.Parallel()
	rec, s := loaderFixture(t, 5, 70001, 20000, 61)
	want := make([]int16, s.Len()*5)
	got := make([]int16, s.Len()*5)
	for i := range s.Windows {
		if err := ReadWindow(rec, s, i, want); err != nil {
			t.Fatal(err)
		}
		for _, parts := range []int{1, 2, 3, 7, 100} {
			for j := range got {
				got[j] = -12345
			}
			if err := ReadWindowParts(rec, s, i, got, parts); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("window %d in %d parts differs from ReadWindow", i, parts)
			}
		}
	}
	l := NewLoader(rec, s, LoaderOptions{Readers: 4})
	defer l.Close()
	for i := range s.Windows {
		b, err := l.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, rec, s, b, i)
		l.Release(b)
	}
	bad := failingRec{rec, 45000}
	var we *WindowError
	if err := ReadWindowParts(bad, s, 2, got, 4); !errors.As(err, &we) || we.Index != 2 {
		t.Errorf("failing piece: %v", err)
	}
}

// TestLoaderTryNext takes every window with TryNext, polling: the windows
// come in order, ready is false only before a window is loaded, and after
// the last TryNext reports io.EOF as Next does.
func TestLoaderTryNext(t *testing.T) {
	t.Parallel()
	rec, s := loaderFixture(t, 3, 2001, 40, 5)
	l := NewLoader(rec, s, LoaderOptions{InFlight: 1})
	defer l.Close()
	deadline := time.Now().Add(10 * time.Second)
	for want := 0; want <= s.Windows; {
		b, ready, err := l.TryNext()
		if !ready {
			if b != nil || err != nil {
				t.Fatalf("not ready, yet %v, %v", b, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("window %d never became ready", want)
			}
			time.Sleep(time.Millisecond)
			continue
		}
		if want == s.Windows {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("after the last window: %v, %v", b, err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, rec, s, b, want)
		l.Release(b)
		want++
	}
	if _, ready, err := l.TryNext(); !ready || !errors.Is(err, io.EOF) {
		t.Errorf("TryNext after EOF: ready %v, %v", ready, err)
	}
	l.Close()
	if _, _, err := l.TryNext(); !errors.Is(err, io.EOF) && !errors.Is(err, ErrLoaderClosed) {
		t.Errorf("TryNext after Close: %v", err)
	}
}

// TestLoaderAllocs checks that a loader in steady state allocates nothing
// per window: its batches, buffers and the pieces of a parallel read are
// reused.
func TestLoaderAllocs(t *testing.T) {
	rec, s := loaderFixture(t, 4, 600000, 20000, 7) // 30 windows, read in 3 pieces each
	l := NewLoader(rec, s, LoaderOptions{InFlight: 2, Readers: 3})
	defer l.Close()
	ctx := context.Background()
	for range 4 { // warm: every buffer and the readers' state exist
		b, err := l.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		l.Release(b)
	}
	a := testing.AllocsPerRun(20, func() {
		b, err := l.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		l.Release(b)
	})
	if a != 0 {
		t.Errorf("%v allocations per window", a)
	}
}
