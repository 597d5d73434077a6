package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"dspk/compute"
	"dspk/detect"
	"dspk/kilosort"
	"dspk/linalg"
	"dspk/preprocess"
	"dspk/probe"
	"dspk/recording"
)

// Pipeline runs the passes of one recording with one probe and config on
// one device. Each window is read into host memory of the device (pinned
// on a GPU), loaded into the pipeline's [compute.Window] (uploaded once on
// a GPU) and preprocessed there; the whitening statistic is accumulated
// where the window lives, and only what a host stage needs comes back
// (the whitened window, for template learning and detection).
type Pipeline struct {
	dev   *compute.Device
	rec   recording.Recording
	probe *probe.Probe
	cfg   Config
	sched recording.Schedule
	pre   *preprocess.Preprocessor
	win   *compute.Window    // the window the passes work on
	bufs  []*compute.HostMem // the loader's buffers, reused by every pass

	// Progress, if set, is called when a pass of windows starts (done 0)
	// and after each of its windows with the pass name ("whitening",
	// "templates", "detection", "matching", …), the windows done and the
	// windows of the pass.
	Progress func(pass string, done, total int)

	// Timings records the wall time of each pass that has run.
	Timings map[string]time.Duration
	// Waits records, per pass, the wall time the window loop spent
	// waiting: for the loader to read a window ("loader"), for a
	// window's upload to the device ("upload") and for the oldest started
	// window's results ("results": on a GPU, the device's work). Their
	// sum against the pass's time says what limits it. "first_window" is
	// the time from the pass's start until its first window's work was
	// started (reading, uploading and preprocessing it, and what the
	// device and libraries do on first use).
	Waits map[string]map[string]time.Duration

	// cfgWarnings are the warnings of the probe and configuration
	// (carWarnings), which every run reports first.
	cfgWarnings []string
	white       *linalg.Whitening            // set on pre
	grid        func() (*detect.Grid, error) // builds the grid once (Grid)
	ahead       chan preparedDetector        // the next detection pass's detector, being built (prepareDetector)
}

// New checks that the probe fits the recording and builds, on dev (nil
// means the CPU), the schedule, the preprocessing of its windows and their
// buffers. A recording of fewer than two windows is refused: Kilosort4
// estimates whitening from every window but the last and would return a
// NaN matrix. Call Close when done, before closing dev. New is [Prepare]
// followed by [Plan.New].
func New(dev *compute.Device, rec recording.Recording, pr *probe.Probe, cfg Config) (*Pipeline, error) {
	pl, err := prepare(rec, pr, cfg, false)
	if err != nil {
		return nil, err
	}
	return pl.New(dev)
}

// MinCARChannels is the fewest channels a common average reference is
// taken over without a warning, and the fewest every group must have for
// a CAR within groups (Config.CARGroups).
const MinCARChannels = 16

// carGroupsFit refuses a CAR within groups of the probe when a group has
// fewer than MinCARChannels channels: the median of a stereotrode's two
// wires is their mean, and subtracting it removes half of every spike
// the pair sees.
func carGroupsFit(pr *probe.Probe) error {
	size := map[int]int{}
	for _, s := range pr.Shank {
		size[s]++
	}
	small, smallest := -1, pr.Len()+1
	for s, n := range size {
		if n < smallest || n == smallest && s < small {
			small, smallest = s, n
		}
	}
	if smallest < MinCARChannels {
		return fmt.Errorf("CAR within groups needs at least %d channels in every group, and group %d of probe %s has %d "+
			"(a median of a few wires follows the spikes they share and subtracting it removes part of each); "+
			"leave -car-groups out for a CAR over all %d channels, or give -no-car",
			MinCARChannels, small, pr.Name, smallest, pr.Len())
	}
	return nil
}

// carWarnings warns when CAR is taken over fewer than MinCARChannels
// channels (per group with CARGroups): the lower median of a few channels
// follows a spike that several of them see, and subtracting it puts an
// inverted copy of that spike on a silent wire.
func carWarnings(pr *probe.Probe, cfg Config) []string {
	if !cfg.DoCAR {
		return nil
	}
	size := map[int]int{}
	for _, s := range pr.Shank {
		if !cfg.CARGroups {
			s = 0
		}
		size[s]++
	}
	smallest := pr.Len()
	for _, n := range size {
		smallest = min(smallest, n)
	}
	if smallest >= MinCARChannels {
		return nil
	}
	what := fmt.Sprintf("%d channels", smallest)
	if len(size) > 1 {
		what = fmt.Sprintf("groups of as few as %d channels", smallest)
	}
	return []string{fmt.Sprintf("common average reference (CAR) over %s: with fewer than %d, the median follows spikes that several wires see, "+
		"and subtracting it can create spikes on a silent wire; consider -no-car", what, MinCARChannels)}
}

// buffers allocates the window and the loader's InFlight+1 raw buffers
// (the most a loader asks for), taking the memory of prepared (of
// [Plan.PrepareBuffers]) where given: each one taken is set to nil.
func (p *Pipeline) buffers(prepared []*compute.PreparedHost) error {
	T, cf := p.sched.Len(), p.rec.Channels()
	var err error
	if p.win, err = p.dev.NewWindow(p.probe.Len(), T, cf); err != nil {
		return err
	}
	for i := range inFlight(p.cfg) + 1 {
		var h *compute.HostMem
		if i < len(prepared) && prepared[i] != nil && prepared[i].Len() == T*cf*2 {
			h, err = p.dev.AllocHostPrepared(prepared[i])
			prepared[i] = nil
		} else {
			h, err = p.dev.AllocHost(T * cf * 2)
		}
		if err != nil {
			return err
		}
		p.bufs = append(p.bufs, h)
	}
	return nil
}

// inFlight is the number of windows the loader reads ahead with cfg.
func inFlight(cfg Config) int {
	if cfg.InFlight <= 0 {
		return 2 // the loader's default
	}
	return cfg.InFlight
}

// Device returns the device the pipeline runs on.
func (p *Pipeline) Device() *compute.Device { return p.dev }

// Schedule returns the window schedule.
func (p *Pipeline) Schedule() recording.Schedule { return p.sched }

// Config returns the effective configuration.
func (p *Pipeline) Config() Config { return p.cfg }

// Probe returns the probe.
func (p *Pipeline) Probe() *probe.Probe { return p.probe }

// StatWindows returns the windows Kilosort4 uses for the whitening
// statistic and for template learning: 0, NSkip, 2·NSkip, … up to but not
// including the last window.
func (p *Pipeline) StatWindows() []int {
	var w []int
	for j := 0; j < p.sched.Windows-1; j += p.cfg.NSkip {
		w = append(w, j)
	}
	return w
}

// windowPass is one pass over windows of the schedule: its name (for Progress,
// Timings and Waits), its windows (all of them if nil), the whitening of
// its windows (none if nil) and what it does to each window besides its
// work.
type windowPass struct {
	name    string
	windows []int
	w       *linalg.Whitening
	// corr, if set, corrects each preprocessed, whitened window where it
	// lives (for motion, from the window's shifts) before the pass's work
	// sees it.
	corr *correction
	// raw, if set, sees each raw window as read.
	raw func(win recording.Window, data []int16)
}

// eachWindow loads the windows of ps ahead of fn, preprocesses each into
// the pipeline's window on its device (whitened and corrected as ps
// says) and calls fn with it.
func (p *Pipeline) eachWindow(ctx context.Context, ps windowPass, fn func(rw recording.Window, win *compute.Window) error) error {
	return p.eachWindowOverlapped(ctx, ps, 1, fn, nil)
}

// eachWindowOverlapped is eachWindow with the work on a window in two
// parts: start(rw, win) is called once the window is preprocessed (on a
// GPU: once its preprocessing is enqueued) and finish(rw), if not nil, in
// window order once depth−1 later windows are started too (or after the
// last window). On a GPU the work start enqueues thus queues behind that
// of the windows before it, so that the device does not wait for the
// host between windows, and finish's work on the host overlaps the
// device's work on the later windows. start must leave the window's
// working array free to be overwritten (on a GPU, by work queued behind
// its own); depth is at least 1. It is a little over 100 lines: the
// order of loading, starting, prefetching and finishing windows is the
// point of it and reads best in one loop.
func (p *Pipeline) eachWindowOverlapped(ctx context.Context, ps windowPass, depth int,
	start func(rw recording.Window, win *compute.Window) error, finish func(rw recording.Window) error) error {
	pass := ps.name
	t0 := time.Now()
	defer func() { p.Timings[pass] += time.Since(t0) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := p.whiten(ps); err != nil {
		return err
	}
	ld := p.loader(ps.windows)
	defer ld.Close()
	total, done := len(ps.windows), 0
	if ps.windows == nil {
		total = p.sched.Windows
	}
	if p.Progress != nil && total > 0 {
		// The pass's start, so that its rate is not measured from the
		// end of the one before (the clusterings run between them).
		p.Progress(pass, 0, total)
	}
	waits := p.passWaits(pass)
	var pending []recording.Window // started, not finished, oldest first
	complete := func() error {
		if finish != nil {
			rw := pending[0]
			pending = pending[1:]
			t := time.Now()
			err := finish(rw)
			waits["results"] += time.Since(t)
			if err != nil {
				return err
			}
		}
		done++
		if p.Progress != nil {
			p.Progress(pass, done, total)
		}
		return nil
	}
	// The next window's upload is begun (Prefetch) before the oldest
	// started window is finished if the loader has it ready, so that on a
	// GPU the copy overlaps the device's work; if not, the loop does not
	// wait for it there.
	t := time.Now()
	next, nerr := ld.Next(ctx)
	waits["loader"] += time.Since(t)
	for {
		// The loader's Next checks ctx, but once the recording is in the
		// page cache the next window is always ready and the loop takes it
		// with TryNext, which does not wait and so does not check ctx: the
		// loop checks it itself before every window.
		if err := ctx.Err(); err != nil {
			return err
		}
		if errors.Is(nerr, io.EOF) {
			break
		}
		if nerr != nil {
			return nerr
		}
		rw := next.Window
		err := p.load(ps, next, waits)
		ld.Release(next)
		if err != nil {
			return fmt.Errorf("%s: window %d: %w", p.rec.Name(), rw.Index, err)
		}
		if err := start(rw, p.win); err != nil {
			return err
		}
		if done == 0 && len(pending) == 0 {
			waits["first_window"] += time.Since(t0)
		}
		var ready bool
		next, ready, nerr = ld.TryNext()
		if ready && nerr == nil {
			if err := p.win.Prefetch(next.Data); err != nil {
				return fmt.Errorf("%s: window %d: %w", p.rec.Name(), next.Window.Index, err)
			}
		}
		if finish != nil {
			pending = append(pending, rw)
		}
		if finish == nil || len(pending) >= depth {
			if err := complete(); err != nil {
				return err
			}
		}
		if !ready {
			t := time.Now()
			next, nerr = ld.Next(ctx)
			waits["loader"] += time.Since(t)
		}
	}
	for len(pending) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := complete(); err != nil {
			return err
		}
	}
	return nil
}

// whiten makes the preprocessing whiten by the whitening of ps unless it
// does.
func (p *Pipeline) whiten(ps windowPass) error {
	if ps.w != p.white {
		if err := p.pre.SetWhitening(ps.w); err != nil {
			return fmt.Errorf("%s: %s: %w", p.rec.Name(), ps.name, err)
		}
		p.white = ps.w
	}
	return nil
}

// loader returns a loader of the given windows (all of them if nil) into
// the pipeline's buffers.
func (p *Pipeline) loader(windows []int) *recording.Loader {
	nbuf := 0
	opt := recording.LoaderOptions{Windows: windows, InFlight: inFlight(p.cfg), Readers: Readers(), Alloc: func(n int) []int16 {
		b := p.bufs[nbuf].Int16()[:n]
		nbuf++
		return b
	}}
	return recording.NewLoader(p.rec, p.sched, opt)
}

// passWaits returns the waits of the pass named pass ([Pipeline.Waits]),
// made if new.
func (p *Pipeline) passWaits(pass string) map[string]time.Duration {
	waits := p.Waits[pass]
	if waits == nil {
		waits = map[string]time.Duration{}
		p.Waits[pass] = waits
	}
	return waits
}

// load uploads the raw window b into the pipeline's window (its time
// added to waits["upload"]), preprocesses it, corrects it as ps says
// (whitened windows only) and shows the raw window to ps.raw.
func (p *Pipeline) load(ps windowPass, b *recording.Batch, waits map[string]time.Duration) error {
	t := time.Now()
	err := p.win.Load(b.Data)
	waits["upload"] += time.Since(t)
	if err == nil {
		err = p.pre.Window(p.win)
	}
	if err == nil && ps.corr != nil && ps.w != nil {
		err = ps.corr.window(b.Window, p.win)
	}
	if ps.raw != nil {
		ps.raw(b.Window, b.Data)
	}
	return err
}

// Readers is the number of goroutines that read each window of a pass:
// reads from the page cache scale to several cores (one reader: 4.7 GB/s
// on the H200 host, eight: 17–34 GB/s, docs/perf.md).
func Readers() int { return max(1, min(8, runtime.GOMAXPROCS(0))) }

// each is eachWindow for host stages: fn gets the window's [C][T] float32
// data in host memory.
func (p *Pipeline) each(ctx context.Context, ps windowPass, fn func(win recording.Window, x []float32) error) error {
	return p.eachWindow(ctx, ps, func(rw recording.Window, win *compute.Window) error {
		x, err := win.Data()
		if err != nil {
			return fmt.Errorf("%s: window %d: %w", p.rec.Name(), rw.Index, err)
		}
		return fn(rw, x)
	})
}

// Whitening runs pass 1: the second moment of the filtered, unwhitened
// owned samples of the statistic windows, averaged over windows, and
// Kilosort4's local ZCA whitening from it. It returns the sparse
// whitening operator, the second moment (C×C, row-major) and what the
// pass found legal but suspicious in the raw windows (see
// [Pipeline.Warnings]), one line each naming the file.
func (p *Pipeline) Whitening(ctx context.Context) (*linalg.Whitening, []float64, []string, error) {
	sm := linalg.NewSecondMoment(p.dev, p.probe.Len())
	defer sm.Close()
	rails := newRailCounter(p.probe.ChanMap)
	ps := windowPass{name: "whitening", windows: p.StatWindows(),
		raw: func(win recording.Window, data []int16) { rails.add(win, data, p.rec.Channels(), p.cfg.NT) }}
	err := p.eachWindow(ctx, ps, func(rw recording.Window, win *compute.Window) error {
		return sm.AddWindow(win, p.cfg.NT, p.cfg.NT+rw.Owned())
	})
	if err != nil {
		return nil, nil, nil, err
	}
	warnings := append(rails.flatWarnings(p.rec.Name()), rails.warnings(p.rec.Name())...)
	if rails.samples < MinWhiteningSamples {
		warnings = append(warnings, fmt.Sprintf("%s: the whitening matrix is estimated from %d samples per site "+
			"(%.2f s), fewer than %d; it may be unreliable — use a longer recording, a larger -batch or a smaller -nskip",
			p.rec.Name(), rails.samples, float64(rails.samples)/p.rec.SampleRate(), MinWhiteningSamples))
	}
	cc, err := sm.Result()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: whitening: %w", p.rec.Name(), err)
	}
	var w *linalg.Whitening
	if p.cfg.Groups {
		w, err = linalg.LocalZCAGroups(cc, p.probe.Len(), p.probe.X, p.probe.Y, p.probe.Shank, p.cfg.WhiteningRange, kilosort.WhiteningEps)
	} else {
		w, err = linalg.LocalZCA(cc, p.probe.Len(), p.probe.X, p.probe.Y, p.cfg.WhiteningRange, kilosort.WhiteningEps)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: whitening: %w", p.rec.Name(), err)
	}
	return w, cc, warnings, nil
}

// Whitened runs the windows of the schedule in order, preprocessed and
// whitened by w (uncorrected), and calls fn with each window and its
// [C][T] data. Only columns [Pad, Pad+win.Owned()) are owned by the
// window.
func (p *Pipeline) Whitened(ctx context.Context, pass string, w *linalg.Whitening,
	fn func(win recording.Window, x []float32) error) error {
	return p.each(ctx, windowPass{name: pass, w: w}, fn)
}

// Close releases the pipeline's window, buffers and device resources
// (not the device itself). It may be called more than once.
func (p *Pipeline) Close() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	p.dropDetector()
	if p.pre != nil {
		keep(p.pre.Close())
		p.pre = nil
	}
	if p.win != nil {
		keep(p.win.Close())
		p.win = nil
	}
	for _, h := range p.bufs {
		keep(p.dev.FreeHost(h))
	}
	p.bufs = nil
	return first
}

// Preprocessor returns the preprocessing of the pipeline's windows.
func (p *Pipeline) Preprocessor() *preprocess.Preprocessor { return p.pre }
