package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"dspk/compute"
	"dspk/match"
)

// Spike is one spike as the stream names it.
type Spike struct {
	// Sample is the trough's sample in the stream (0 = its first frame).
	Sample int64
	// Unit is the sort's unit; Template the learned template that matched.
	Unit, Template int32
	// Amplitude is the template's projection in whitened units
	// (Kilosort4's q).
	Amplitude float32
	// Channel is the template's best channel (an index of the sort's
	// channel map).
	Channel int32
	// Latency is the time from the arrival of the trough's sample to the
	// moment the spike was handed out.
	Latency time.Duration
}

// Options are a stream's settings.
type Options struct {
	// Device is where the matching runs (nil: the CPU); the
	// preprocessing runs on the CPU.
	Device *compute.Device
	// MinBlock is the least number of new samples matched at once
	// (default [DefaultBlock]). Smaller blocks answer sooner and cost
	// more: each is matched with a template's length of context on
	// either side, and each boundary is a place where the peeling can
	// differ from the sort's.
	MinBlock int
	// MaxBlock bounds a block when the stream is behind (default 0.25 s:
	// a block is not interrupted, so this bounds how long a stop waits).
	MaxBlock int
	// Deadline is the latency above which a block counts as late
	// (default 10 ms): from the arrival of the last sample its matching
	// needs to the moment its spikes are out.
	Deadline time.Duration
	// Late, if not nil, is told of each late block as it happens.
	Late func(LateBlock)
	// Progress, if not nil, is called with the statistics so far about
	// once a second.
	Progress func(*Stats)
	// Log, if not nil, takes a line for each late block and a progress
	// line ([Stats.ProgressLine]) about once a second, for a terminal,
	// where Late and Progress are nil.
	Log io.Writer
	// First is the stream sample of the source's first frame: the
	// samples a stream that learned its units ([Learn]) is past. Spike
	// samples, the motion estimate's windows and the folder's times
	// count from the stream's start.
	First int64
	// Lookahead is how many samples after a block the block waits for
	// before it is matched: at least half the template plus one (every
	// spike the block owns is then whole in its window), at most the
	// template's length nt (as the sort's windows; more is taken as nt);
	// 0 is the least. The samples between it and nt are zeros, as at a
	// recording's end, so a spike just past the block is seen cut off and
	// the peeling near the block's end can differ from the sort's: on three
	// recordings (docs/stream.md) the least changed the agreement with the
	// sort by at most 0.001 and answered 0.65–0.95 ms sooner than nt.
	Lookahead int
	// HoldMotion holds the sort's last motion shifts beyond its estimate;
	// by default the stream extends the estimate from its own spikes
	// ([tracker]; a sort without motion correction has none to extend).
	HoldMotion bool
	// Start, if not nil, is called once the matcher is ready, before the
	// source's first frame is read; it returns the stream sample of that
	// frame, in place of First ([Learned.Resume]).
	Start func() int64
}

// LateBlock is a block whose spikes came out after the deadline.
type LateBlock struct {
	// Start and Samples are the block's first sample and length.
	Start   int64 `json:"start"`
	Samples int   `json:"samples"`
	// LatencyMs is how long after its last needed sample arrived the
	// block's spikes were out.
	LatencyMs float64 `json:"latency_ms"`
}

// DefaultBlock is the default least block: 3 ms. On a 300-unit sort's
// recording replayed on 2 cores (docs/stream.md) 1-ms blocks gave latency
// p50 4.2 ms and p99 7.1 ms but 0.942 of the stream's spikes in the sort
// (a block's edges are where its peeling can differ from the sort's);
// 2 ms gave p50 4.3 ms, p99 7.6 ms and 0.950 over 120 s; 3 ms, 5.5 ms,
// 8.5 ms and 0.958 over 30 s.
const DefaultBlock = 3 * time.Millisecond

// readAhead bounds the chunks read but not yet preprocessed (a second
// of 1-ms packets): a source read faster than the stream keeps up (a file
// without -realtime) waits instead of filling memory.
const readAhead = 1024

// chunk is one read of the source and the moment it arrived.
type chunk struct {
	data    []int16
	frames  int
	arrived time.Time
	err     error
}

// Run matches the frames of src against m's templates as they arrive and
// hands each spike to emit in order of sample, as soon as it is known.
// It returns at the end of the source or when ctx is done (then without
// error: everything up to that point has been emitted), with the
// statistics.
func Run(ctx context.Context, m *Model, src Source, opt Options, emit func(Spike) error) (*Stats, error) {
	fs := m.SampleRate
	if opt.MinBlock <= 0 {
		opt.MinBlock = max(1, int(DefaultBlock.Seconds()*fs))
	}
	if opt.MaxBlock <= 0 {
		opt.MaxBlock = int(fs / 4)
	}
	opt.MaxBlock = max(opt.MaxBlock, opt.MinBlock)
	if opt.Deadline <= 0 {
		opt.Deadline = 10 * time.Millisecond
	}
	if opt.Log != nil && opt.Late == nil {
		opt.Late = func(b LateBlock) { fmt.Fprintf(opt.Log, "\ndspk stream: %s\n", b.LateLine(fs)) }
	}
	if opt.Log != nil && opt.Progress == nil {
		opt.Progress = func(s *Stats) { fmt.Fprint(opt.Log, s.ProgressLine(fs)) }
	}
	mt, err := match.NewMatcher(opt.Device, m.Templates, m.X, m.Y, m.Params)
	if err != nil {
		return nil, fmt.Errorf("%s: learned templates: %w", m.Dir, err)
	}
	defer mt.Close()
	mt.PreferShortWindows() // a stream's windows are a few hundred columns
	nt := m.Params.NT
	if opt.Lookahead == 0 {
		opt.Lookahead = nt/2 + 1
	}
	if opt.Lookahead < nt/2+1 {
		return nil, fmt.Errorf("stream: lookahead of %d samples: it must be at least %d, half the template plus one", opt.Lookahead, nt/2+1)
	}
	opt.Lookahead = min(opt.Lookahead, nt)
	r := &runner{m: m, mt: mt, opt: opt, emit: emit, pre: newCausal(m), nt: nt, C: len(m.ChanMap),
		st: newStats(opt.Deadline)}
	best := make([]int, m.Templates.N)
	for k := range best {
		best[k] = mt.BestChannel(k)
	}
	r.cp = newCopies(m, best)
	if m.Motion != nil {
		var tk *tracker
		if !opt.HoldMotion {
			if tk, err = newTracker(m, func(k int) []int32 { return mt.Channels(k) }); err != nil {
				return nil, err
			}
		}
		if r.mc, err = newMotionCorrection(m, tk); err != nil {
			return nil, err
		}
		defer r.mc.close()
	}
	r.warmUp()
	if opt.Start != nil {
		opt.First = opt.Start()
	}
	r.hist = make([]float32, r.C*r.nt) // left context: zeros before the first sample
	r.histStart, r.histLen, r.histCap = opt.First-int64(r.nt), r.nt, r.nt
	r.ownStart, r.st.First = opt.First, opt.First

	chunks := make(chan chunk, readAhead)
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go readLoop(rctx, src, m.FileChannels, max(1, opt.MinBlock), chunks)
	start := time.Now()
	nextProgress := start.Add(time.Second)
	for {
		var ck chunk
		select {
		case <-ctx.Done():
			return r.finish(start, nil)
		case ck = <-chunks:
		}
		end := ck.err != nil
		if !end {
			r.add(ck)
		}
		// Take the chunks already waiting, up to one largest block and its
		// lookahead: a late stream catches up in larger blocks, and a source
		// that delivers faster than the stream matches (a file read as fast
		// as it goes) is not read whole into the history.
		for !end && r.unmatched() < int64(r.opt.MaxBlock+r.opt.Lookahead) {
			select {
			case c2 := <-chunks:
				if c2.err != nil {
					end, ck = true, c2
				} else {
					r.add(c2)
				}
				continue
			default:
			}
			break
		}
		if end && !errors.Is(ck.err, io.EOF) {
			r.matchReady(false)
			return r.finish(start, fmt.Errorf("%s: %w", src.Name(), ck.err))
		}
		if err := r.matchReady(end); err != nil {
			return r.finish(start, err)
		}
		if end {
			return r.finish(start, nil)
		}
		if opt.Progress != nil && time.Now().After(nextProgress) {
			r.st.WallSeconds = time.Since(start).Seconds()
			opt.Progress(r.st)
			nextProgress = nextProgress.Add(time.Second)
		}
	}
}

// warmUpColumns is the window the matcher is first given, before any
// frame: its buffers then hold any block a stream up to 130 ms behind
// takes at once, so that a late block is not made later still by
// allocating.
const warmUpColumns = 4096

// warmUp matches a window of zeros before the stream starts, so that the
// matcher's buffers and workers exist before the first frame arrives.
func (r *runner) warmUp() {
	owned := max(r.opt.MinBlock, min(r.opt.MaxBlock, warmUpColumns-2*r.nt))
	x := make([]float32, r.C*(owned+2*r.nt))
	var sp match.Spikes
	r.mt.MatchHost(&sp, x, 0, owned)
}

// readLoop reads src into chunks of up to block frames until the end, an
// error or ctx; the last chunk carries the error (io.EOF at the end).
func readLoop(ctx context.Context, src Source, nf, block int, out chan<- chunk) {
	for {
		buf := make([]int16, block*nf)
		n, err := src.Read(buf)
		now := time.Now()
		if n > 0 {
			select {
			case out <- chunk{data: buf, frames: n, arrived: now}:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			select {
			case out <- chunk{err: err}:
			case <-ctx.Done():
			}
			return
		}
	}
}

// runner is the state of one stream.
type runner struct {
	m    *Model
	mt   *match.Matcher
	opt  Options
	emit func(Spike) error
	pre  *causal
	nt   int
	C    int
	// hist holds the preprocessed samples [histStart, histStart+histLen)
	// of each channel, channel c at hist[c*histCap:].
	hist             []float32
	histStart        int64
	histLen, histCap int
	ownStart         int64     // the first sample not yet matched
	arrivals         []arrival // the chunks' last samples and arrival times, in order
	scratch, win     []float32
	spikes           match.Spikes
	cp               *copies
	idx              []int             // a block's spikes in order of sample
	mc               *motionCorrection // the sort's motion correction, or nil
	cwin             []float32
	st               *Stats
	emitErr          error
}

// arrival records that the samples before end had arrived at time at.
type arrival struct {
	end int64
	at  time.Time
}

// add preprocesses a chunk onto the history.
func (r *runner) add(ck chunk) {
	n := ck.frames
	if cap(r.scratch) < r.C*n {
		r.scratch = make([]float32, r.C*n)
	}
	x := r.scratch[:r.C*n]
	r.pre.run(x, ck.data, n)
	if r.histLen+n > r.histCap {
		// Drop what no later window needs (before ownStart − nt); grow if
		// that is not room enough. Compacting only when full costs each
		// sample one move.
		if drop := int(r.ownStart - int64(r.nt) - r.histStart); drop > 0 {
			for c := range r.C {
				row := r.hist[c*r.histCap:]
				copy(row, row[drop:r.histLen])
			}
			r.histStart += int64(drop)
			r.histLen -= drop
		}
		if r.histLen+n > r.histCap {
			nc := max(2*r.histCap, r.histLen+n)
			h := make([]float32, r.C*nc)
			for c := range r.C {
				copy(h[c*nc:], r.hist[c*r.histCap:c*r.histCap+r.histLen])
			}
			r.hist, r.histCap = h, nc
		}
	}
	for c := range r.C {
		copy(r.hist[c*r.histCap+r.histLen:], x[c*n:(c+1)*n])
	}
	r.histLen += n
	r.st.Samples += int64(n)
	r.st.backlog(r.unmatched(), r.m.SampleRate)
	r.arrivals = append(r.arrivals, arrival{end: r.histStart + int64(r.histLen), at: ck.arrived})
}

// unmatched returns the samples read and not yet matched.
func (r *runner) unmatched() int64 { return r.histStart + int64(r.histLen) - r.ownStart }

// arrivedAt returns when sample s arrived.
func (r *runner) arrivedAt(s int64) time.Time {
	i, _ := slices.BinarySearchFunc(r.arrivals, s, func(a arrival, s int64) int {
		if a.end <= s {
			return -1
		}
		return 1
	})
	if i >= len(r.arrivals) {
		i = len(r.arrivals) - 1
	}
	return r.arrivals[i].at
}

// matchReady matches every block the history holds with its right
// context; at the end (final) the rest, with zeros as right context.
func (r *runner) matchReady(final bool) error {
	for {
		avail := r.histStart + int64(r.histLen)
		owned := int(avail - int64(r.opt.Lookahead) - r.ownStart)
		if final {
			owned = int(avail - r.ownStart)
		}
		if owned <= 0 || (!final && owned < r.opt.MinBlock) {
			return r.emitErr
		}
		owned = min(owned, r.opt.MaxBlock)
		if err := r.matchBlock(owned, final && r.ownStart+int64(owned) >= avail); err != nil {
			return err
		}
	}
}

// matchBlock matches the owned samples from ownStart; final says that no
// sample follows them.
func (r *runner) matchBlock(owned int, final bool) error {
	nt, C := r.nt, r.C
	T := owned + 2*nt
	if cap(r.win) < C*T {
		r.win = make([]float32, C*T)
	}
	x := r.win[:C*T]
	from := int(r.ownStart - int64(nt) - r.histStart)
	have := min(T, r.histLen-from) // the rest (at the end only) stays zero
	for c := range C {
		row := x[c*T : (c+1)*T]
		copy(row, r.hist[c*r.histCap+from:c*r.histCap+from+have])
		clear(row[have:])
	}
	if r.mc != nil {
		if cap(r.cwin) < C*T {
			r.cwin = make([]float32, C*T)
		}
		r.mc.apply(r.cwin[:C*T], x, r.ownStart)
		x = r.cwin[:C*T]
	}
	r.spikes.Reset()
	if err := r.mt.MatchHost(&r.spikes, x, r.ownStart, owned); err != nil {
		return fmt.Errorf("%s: matching block at sample %d: %w", r.m.Dir, r.ownStart, err)
	}
	need := min(r.ownStart+int64(owned+r.opt.Lookahead), r.histStart+int64(r.histLen)) - 1
	horizon := r.ownStart + int64(owned-(nt/2-r.m.Params.NT0Min))
	if final {
		horizon = math.MaxInt64 / 2
	}
	r.emitBlock(horizon)
	now := time.Now()
	lat := now.Sub(r.arrivedAt(need))
	r.st.block(r.ownStart, owned, lat, r.opt)
	r.ownStart += int64(owned)
	// Arrivals wholly before the next window's first sample are no longer needed.
	k := 0
	for k < len(r.arrivals)-1 && r.arrivals[k].end <= r.ownStart-int64(nt) {
		k++
	}
	r.arrivals = r.arrivals[k:]
	return r.emitErr
}

// emitBlock hands the block's spikes to the copy rules and gives out
// every spike whose fate is known once the spikes with troughs before
// horizon are in (at the end, all).
func (r *runner) emitBlock(horizon int64) {
	s := &r.spikes
	idx := r.idx[:0]
	for i := range s.Len() {
		idx = append(idx, i)
	}
	r.idx = idx
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(s.Sample[a], s.Sample[b]) })
	nf := s.NC * s.P
	if r.mc != nil && r.mc.track != nil {
		for i := range s.Len() {
			r.mc.track.add(s.Template[i], s.Amplitude[i], s.Features[i*nf:(i+1)*nf])
		}
	}
	for _, i := range idx {
		k := s.Template[i]
		if u := r.m.unitOf(k, s.Features[i*nf:(i+1)*nf], r.mt.Channels(int(k)), s.P); u >= 0 && int(u) < r.m.Units {
			r.cp.add(s.Sample[i], k, u, s.Amplitude[i])
		}
	}
	r.cp.ready(horizon, func(c cand) {
		sp := Spike{Sample: c.t, Unit: c.u, Template: c.k, Amplitude: c.q, Channel: int32(r.mt.BestChannel(int(c.k)))}
		sp.Latency = time.Since(r.arrivedAt(sp.Sample))
		r.st.spike(sp)
		if r.emitErr == nil {
			r.emitErr = r.emit(sp)
		}
	})
}

// finish closes the statistics.
func (r *runner) finish(start time.Time, err error) (*Stats, error) {
	r.st.WallSeconds = time.Since(start).Seconds()
	r.st.DataSeconds = float64(r.st.Samples) / r.m.SampleRate
	if r.mc != nil {
		sh := r.mc.shifts()
		r.st.MotionUm = sh[:min(len(sh), int((r.st.First+r.st.Samples+r.m.BatchSize-1)/r.m.BatchSize))]
		r.st.TrackedWindows = max(0, len(r.st.MotionUm)-r.m.Motion.Windows)
	}
	r.st.summarise()
	if err == nil {
		err = r.emitErr
	}
	return r.st, err
}
