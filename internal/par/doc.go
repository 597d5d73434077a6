// Package par provides dspk's one worker pool: fork–join loops that run a
// function over workers, over contiguous ranges of [0, n) or over the
// items of [0, n) taken in turn, on goroutines of which the caller's is
// one.
//
// Three shapes cover every parallel loop of the module:
//
//   - [Run] calls f(w) for every worker w, which splits the work itself;
//   - [Split] cuts [0, n) into one contiguous range per worker, range w
//     being [w·n/W, (w+1)·n/W), a split that depends on n and W only;
//   - [Each] hands out the items 0, 1, …, n−1 one at a time to the
//     workers as they come free, for items of uneven cost.
//
// The worker index w, in [0, W), names the goroutine that runs the call,
// so that per-worker scratch can be indexed by it. Where a result is a
// sum over parts, the parts are fixed by n and W alone (Split) or by the
// item (Each), never by the scheduling, so the caller can combine them in
// a fixed order and get the same bits whatever the timing.
//
// A [Loop] runs the same loops without allocating once warm, for the hot
// paths that run one loop per window; the functions of the package make
// a Loop per call.
package par
