package pipeline

import (
	"fmt"
	"sync"
	"time"

	"dspk/compute"
	"dspk/detect"
	"dspk/kilosort"
	"dspk/preprocess"
	"dspk/probe"
	"dspk/recording"
)

// Plan is the host side of a [Pipeline], which needs no device: the
// checks of the probe, recording and config, the schedule, the
// preprocessing's high-pass and CPU buffers and the template grid (built
// on a goroutine from the start). A program that opens a GPU builds it
// while the driver starts (about 0.1–0.3 s) and, with
// [Plan.PrepareBuffers], faults in the loader's host buffers then too, so
// that [Plan.New] is left with the device's part.
type Plan struct {
	rec   recording.Recording
	probe *probe.Probe
	cfg   Config
	sched recording.Schedule
	pre   *preprocess.Plan
	grid  func() (*detect.Grid, error)
	hosts []*compute.PreparedHost // of PrepareBuffers, until New takes them
	used  bool
}

// Prepare checks that the probe fits the recording and builds the host
// side of the pipeline (see [Plan]); it returns the errors of [New] that
// do not depend on the device. It starts building the template grid on a
// goroutine. Pass the plan to [Plan.New], or release it with [Plan.Close].
func Prepare(rec recording.Recording, pr *probe.Probe, cfg Config) (*Plan, error) {
	return prepare(rec, pr, cfg, true)
}

// prepare is Prepare, starting the grid only if eager (else the first
// Grid builds it).
func prepare(rec recording.Recording, pr *probe.Probe, cfg Config, eager bool) (*Plan, error) {
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
	if !cfg.Tmax.None() {
		imax = min(imax, int64(float64(cfg.Tmax)*fs))
	}
	if imin >= imax {
		return nil, fmt.Errorf("%s: time range [%g s, %g s) holds no samples of the %.3f s recording",
			rec.Name(), cfg.Tmin, cfg.Tmax, float64(rec.Samples())/fs)
	}
	sched, err := recording.NewSchedule(imin, imax, cfg.BatchSize, cfg.NT)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rec.Name(), err)
	}
	if sched.Windows < 2 {
		return nil, fmt.Errorf("%s: %d samples (%.3f s) make %d window of %d samples; dspk needs at least two "+
			"(more than %d samples) because the whitening matrix is estimated from every window but the last "+
			"(Kilosort4 would silently produce NaN here); record longer or lower -batch",
			rec.Name(), imax-imin, float64(imax-imin)/fs, sched.Windows, cfg.BatchSize, cfg.BatchSize+cfg.NT)
	}
	if err := checkMotion(pr, cfg); err != nil {
		return nil, fmt.Errorf("%s: %w (with nblocks 0, sort and detect run without motion correction)", rec.Name(), err)
	}
	ks := cfg.Settings
	ks.Fs = fs
	pp := preprocess.Params{Settings: ks, ChanMap: pr.ChanMap, NChanFile: pr.NChanFile, HighpassOrder: kilosort.HighpassOrder}
	if cfg.CARGroups {
		if err := carGroupsFit(pr); err != nil {
			return nil, fmt.Errorf("%s: %w", rec.Name(), err)
		}
		pp.Groups = pr.Shank
	}
	pre, err := preprocess.Prepare(pp)
	if err != nil {
		return nil, fmt.Errorf("%s: preprocessing: %w", rec.Name(), err)
	}
	pl := &Plan{rec: rec, probe: pr, cfg: cfg, sched: sched, pre: pre}
	prm := detectParams(cfg)
	pl.grid = sync.OnceValues(func() (*detect.Grid, error) { return detect.NewGrid(pr, prm) })
	if eager {
		go pl.grid()
	}
	return pl, nil
}

// PrepareBuffers maps and faults in the host memory of the loader's
// buffers now (see [compute.PrepareHost]), for a device that pins them
// (a GPU), so that [Plan.New] only registers them. On the CPU it is
// wasted work; without it New allocates them.
func (pl *Plan) PrepareBuffers() {
	if pl.used || pl.hosts != nil {
		return
	}
	for range inFlight(pl.cfg) + 1 {
		pl.hosts = append(pl.hosts, compute.PrepareHost(pl.sched.Len()*pl.rec.Channels()*2))
	}
}

// Schedule returns the plan's schedule of windows.
func (pl *Plan) Schedule() recording.Schedule { return pl.sched }

// New builds the pipeline of the plan on dev (nil means the CPU): the
// preprocessing's device part, the window and the loader's buffers. A
// plan builds one pipeline; New panics if called again or after Close.
func (pl *Plan) New(dev *compute.Device) (*Pipeline, error) {
	if pl.used {
		panic("pipeline: Plan.New on a used or closed plan")
	}
	pl.used = true
	hosts := pl.hosts
	pl.hosts = nil
	defer func() {
		for _, h := range hosts {
			if h != nil {
				h.Free() // one New did not take (an error)
			}
		}
	}()
	rec := pl.rec
	if dev == nil {
		var err error
		if dev, _, err = compute.Open("cpu"); err != nil {
			return nil, err
		}
	}
	pre, err := pl.pre.New(dev)
	if err != nil {
		return nil, fmt.Errorf("%s: preprocessing on %s: %w", rec.Name(), dev.Spec(), err)
	}
	p := &Pipeline{dev: dev, rec: rec, probe: pl.probe, cfg: pl.cfg, sched: pl.sched, pre: pre, grid: pl.grid,
		Timings: map[string]time.Duration{}, Waits: map[string]map[string]time.Duration{}}
	p.cfgWarnings = carWarnings(pl.probe, pl.cfg)
	if err := p.buffers(hosts); err != nil {
		p.Close()
		return nil, fmt.Errorf("%s: window buffers on %s: %w", rec.Name(), dev.Spec(), err)
	}
	return p, nil
}

// Close releases what the plan holds when no [Plan.New] took it. It may
// be called more than once, and after New.
func (pl *Plan) Close() {
	pl.used = true
	for _, h := range pl.hosts {
		h.Free()
	}
	pl.hosts = nil
}
