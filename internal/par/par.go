package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers returns the number of workers worth starting for n items: the
// GOMAXPROCS setting, at most n, at least 1.
func Workers(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n)) }

// Run calls f(w) for w in [0, workers) concurrently, f(0) on the calling
// goroutine, and returns when every call has. workers < 1 counts as 1.
func Run(workers int, f func(w int)) {
	var l Loop
	l.Run(workers, f)
}

// Split runs f(w, lo, hi) for the W = min(workers, n) contiguous ranges
// [w·n/W, (w+1)·n/W) of [0, n) concurrently, range 0 on the calling
// goroutine, and returns when every range is done. With W ≤ 1 it calls
// f(0, 0, n) (even for n = 0).
func Split(n, workers int, f func(w, lo, hi int)) {
	var l Loop
	l.Split(n, workers, f)
}

// Each calls f(w, k) for every item k in [0, n) on W = min(workers, n)
// goroutines, the calling one among them, each taking the next item as it
// comes free; w in [0, W) names the goroutine. It returns when every item
// is done. With W ≤ 1 the items run in order on the calling goroutine.
func Each(n, workers int, f func(w, k int)) {
	var l Loop
	l.Each(n, workers, f)
}

// A Loop runs [Run], [Split] and [Each] loops one at a time; kept by an
// object that runs a loop per call, it allocates nothing once warm when
// the function it is given is itself made once (a method value stored in
// a field, say). The zero Loop is ready to use. A Loop is not safe for
// concurrent use: a loop's function must not start another on the same
// Loop.
type Loop struct {
	// The loop in progress: one of its three functions, its item count
	// and worker count.
	run   func(w int)
	split func(w, lo, hi int)
	each  func(w, k int)
	n, w  int

	wid  atomic.Int64 // the last worker index handed out
	next atomic.Int64 // the next item of an Each
	wg   sync.WaitGroup
	body func() // worker, bound once so that starting a goroutine allocates nothing
}

// Run is the package's [Run] on l.
func (l *Loop) Run(workers int, f func(w int)) {
	if workers <= 1 {
		f(0)
		return
	}
	l.run = f
	l.fork(workers)
}

// Split is the package's [Split] on l.
func (l *Loop) Split(n, workers int, f func(w, lo, hi int)) {
	W := min(workers, n)
	if W <= 1 {
		f(0, 0, n)
		return
	}
	l.split, l.n = f, n
	l.fork(W)
}

// Each is the package's [Each] on l.
func (l *Loop) Each(n, workers int, f func(w, k int)) {
	W := min(workers, n)
	if W <= 1 {
		for k := range n {
			f(0, k)
		}
		return
	}
	l.each, l.n = f, n
	l.next.Store(0)
	l.fork(W)
}

// fork runs worker 0 of the loop set in l here and workers 1 … W−1 on
// goroutines, and waits for them.
func (l *Loop) fork(W int) {
	if l.body == nil {
		l.body = l.worker
	}
	l.w = W
	l.wid.Store(0)
	l.wg.Add(W - 1)
	for range W - 1 {
		go l.body()
	}
	l.do(0)
	l.wg.Wait()
	l.run, l.split, l.each = nil, nil, nil
}

// worker is one goroutine of fork: it takes the next worker index and
// does its share.
func (l *Loop) worker() {
	defer l.wg.Done()
	l.do(int(l.wid.Add(1)))
}

// do does worker w's share of the loop in progress.
func (l *Loop) do(w int) {
	switch {
	case l.run != nil:
		l.run(w)
	case l.split != nil:
		l.split(w, w*l.n/l.w, (w+1)*l.n/l.w)
	default:
		for k := int(l.next.Add(1) - 1); k < l.n; k = int(l.next.Add(1) - 1) {
			l.each(w, k)
		}
	}
}
