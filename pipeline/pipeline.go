package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"dspk/compute"
	"dspk/linalg"
	"dspk/preprocess"
	"dspk/probe"
	"dspk/recording"
)

// Pipeline runs the passes of one recording with one probe and config.
type Pipeline struct {
	rec   recording.Recording
	probe *probe.Probe
	cfg   Config
	sched recording.Schedule
	pre   *preprocess.Preprocessor
	gpu   *preprocess.GPUPreprocessor // nil: preprocessing on the CPU
	pin   [][]int16                   // pinned window buffers of gpu, reused by every pass

	// Progress, if set, is called after each window of a pass with the
	// pass name ("whitening", "templates", "detection"), the windows done
	// and the windows of the pass.
	Progress func(pass string, done, total int)

	// Timings records the wall time of each pass that has run.
	Timings map[string]time.Duration

	onRaw    func(win recording.Window, data []int16) // sees each raw window of a pass
	warnings []string
}

// New checks that the probe fits the recording and builds the schedule
// and the preprocessing of its windows. A recording of fewer than two
// windows is refused: Kilosort4 estimates whitening from every window but
// the last and would return a NaN matrix.
func New(rec recording.Recording, pr *probe.Probe, cfg Config) (*Pipeline, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", rec.Name(), err)
	}
	if err := pr.Validate(); err != nil {
		return nil, err
	}
	if pr.NChanFile != rec.Channels() {
		return nil, fmt.Errorf("%s has %d channels per sample but probe %s describes a file of %d channels (fit it with probe.ForFile)",
			rec.Name(), rec.Channels(), pr.Name, pr.NChanFile)
	}
	fs := rec.SampleRate()
	imin := int64(cfg.Tmin * fs)
	imax := rec.Samples()
	if !math.IsInf(cfg.Tmax, 1) {
		imax = min(imax, int64(cfg.Tmax*fs))
	}
	if imin >= imax {
		return nil, fmt.Errorf("%s: time range [%g s, %g s) holds no samples of the %.3f s recording",
			rec.Name(), cfg.Tmin, cfg.Tmax, float64(rec.Samples())/fs)
	}
	sched, err := recording.NewSchedule(imin, imax, cfg.NT, cfg.Pad)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rec.Name(), err)
	}
	if sched.Windows < 2 {
		return nil, fmt.Errorf("%s: %d samples (%.3f s) make %d window of %d samples; dspk needs at least two "+
			"(more than %d samples) because the whitening matrix is estimated from every window but the last "+
			"(Kilosort4 would silently produce NaN here); record longer or lower -batch",
			rec.Name(), imax-imin, float64(imax-imin)/fs, sched.Windows, cfg.NT, cfg.NT+cfg.Pad)
	}
	pp := preprocess.Params{
		Fs: fs, NT: cfg.NT, Pad: cfg.Pad, ChanMap: pr.ChanMap, NChanFile: pr.NChanFile,
		Invert: cfg.Invert, CAR: cfg.CAR, HighpassHz: cfg.HighpassHz, HighpassOrder: 3,
	}
	if cfg.Groups {
		pp.Groups = pr.Shank
	}
	pre, err := preprocess.New(pp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rec.Name(), err)
	}
	p := &Pipeline{rec: rec, probe: pr, cfg: cfg, sched: sched, pre: pre, Timings: map[string]time.Duration{}}
	p.warnings = carWarnings(pr, cfg)
	return p, nil
}

// MinCARChannels is the fewest channels a common average reference is
// taken over without a warning.
const MinCARChannels = 16

// carWarnings warns when CAR is taken over fewer than MinCARChannels
// channels (per group with Groups): the lower median of a few channels
// follows a spike that several of them see, and subtracting it puts an
// inverted copy of that spike on a silent wire.
func carWarnings(pr *probe.Probe, cfg Config) []string {
	if !cfg.CAR {
		return nil
	}
	size := map[int]int{}
	for _, s := range pr.Shank {
		if !cfg.Groups {
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

// each loads the given windows ahead of fn, preprocesses each into a
// [C][T] float32 buffer (whitened by w unless nil) and calls fn with it.
func (p *Pipeline) each(ctx context.Context, pass string, windows []int, w *linalg.Whitening,
	fn func(win recording.Window, x []float32) error) error {
	start := time.Now()
	defer func() { p.Timings[pass] += time.Since(start) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opt := recording.LoaderOptions{Windows: windows, InFlight: p.cfg.InFlight}
	if p.gpu != nil {
		// Read straight into the device's pinned buffers (the loader
		// asks for at most InFlight+1).
		next := 0
		opt.Alloc = func(n int) []int16 {
			b := p.pin[next]
			next++
			return b
		}
	}
	ld := recording.NewLoader(p.rec, p.sched, opt)
	defer ld.Close()
	x := make([]float32, p.probe.Len()*p.sched.Len())
	total := len(windows)
	if windows == nil {
		total = p.sched.Windows
	}
	for done := 0; ; done++ {
		b, err := ld.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if p.gpu != nil {
			if err := p.gpu.Run(x, b.Data, w); err != nil {
				ld.Release(b)
				return fmt.Errorf("%s: window %d: %w", p.rec.Name(), b.Window.Index, err)
			}
		} else {
			p.pre.Run(x, b.Data, w)
		}
		win := b.Window
		if p.onRaw != nil {
			p.onRaw(win, b.Data)
		}
		ld.Release(b)
		if err := fn(win, x); err != nil {
			return err
		}
		if p.Progress != nil {
			p.Progress(pass, done+1, total)
		}
	}
}

// Whitening runs pass 1: the second moment of the filtered, unwhitened
// owned samples of the statistic windows, averaged over windows, and
// Kilosort4's local ZCA whitening from it. It returns the sparse
// whitening operator and the second moment (C×C, row-major).
func (p *Pipeline) Whitening(ctx context.Context) (*linalg.Whitening, []float64, error) {
	sm := linalg.NewSecondMoment(p.probe.Len())
	T := p.sched.Len()
	rails := newRailCounter(p.probe.ChanMap)
	p.onRaw = func(win recording.Window, data []int16) { rails.add(win, data, p.rec.Channels(), p.cfg.Pad) }
	err := p.each(ctx, "whitening", p.StatWindows(), nil, func(win recording.Window, x []float32) error {
		sm.Add32(x, T, p.cfg.Pad, p.cfg.Pad+win.Owned())
		return nil
	})
	p.onRaw = nil
	if err != nil {
		return nil, nil, err
	}
	p.warnings = append(p.warnings, rails.warnings(p.rec.Name())...)
	if rails.samples < MinWhiteningSamples {
		p.warnings = append(p.warnings, fmt.Sprintf("%s: the whitening matrix is estimated from %d samples per site "+
			"(%.2f s), fewer than %d; it may be unreliable — use a longer recording, a larger -batch or a smaller -nskip",
			p.rec.Name(), rails.samples, float64(rails.samples)/p.rec.SampleRate(), MinWhiteningSamples))
	}
	cc := sm.Result()
	var w *linalg.Whitening
	if p.cfg.Groups {
		w, err = linalg.LocalZCAGroups(cc, p.probe.Len(), p.probe.X, p.probe.Y, p.probe.Shank, p.cfg.WhiteningRange, WhiteningEps)
	} else {
		w, err = linalg.LocalZCA(cc, p.probe.Len(), p.probe.X, p.probe.Y, p.cfg.WhiteningRange, WhiteningEps)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: whitening: %w", p.rec.Name(), err)
	}
	return w, cc, nil
}

// Whitened runs the windows of the schedule in order, preprocessed and
// whitened by w, and calls fn with each window and its [C][T] data.
// Only columns [Pad, Pad+win.Owned()) are owned by the window.
func (p *Pipeline) Whitened(ctx context.Context, pass string, w *linalg.Whitening,
	fn func(win recording.Window, x []float32) error) error {
	return p.each(ctx, pass, nil, w, fn)
}

// UseGPU moves the preprocessing of every window (channel selection,
// mean, CAR, high-pass, whitening) to the CUDA device dev; detection
// stays on the CPU. Results agree with the CPU path to 1e-5 relative.
// It is an error if dev is not a CUDA device. Call Close when done.
func (p *Pipeline) UseGPU(dev *compute.Device) error {
	g, err := preprocess.NewGPU(dev, p.pre.Params())
	if err != nil {
		return fmt.Errorf("%s: GPU preprocessing: %w", p.rec.Name(), err)
	}
	k := p.cfg.InFlight + 1
	alloc, err := g.PinnedWindows(k)
	if err != nil {
		g.Close()
		return fmt.Errorf("%s: GPU preprocessing: %w", p.rec.Name(), err)
	}
	p.Close()
	p.gpu = g
	p.pin = make([][]int16, k)
	for i := range p.pin {
		p.pin[i] = alloc(p.sched.Len() * p.rec.Channels())
	}
	return nil
}

// Close releases the device resources of the pipeline, if any.
func (p *Pipeline) Close() error {
	if p.gpu == nil {
		return nil
	}
	err := p.gpu.Close()
	p.gpu, p.pin = nil, nil
	return err
}

// Preprocessor returns the CPU preprocessing of the pipeline's windows.
func (p *Pipeline) Preprocessor() *preprocess.Preprocessor { return p.pre }
