package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"dspk/compute"
	"dspk/detect"
	"dspk/linalg"
	"dspk/motion"
	"dspk/probe"
	"dspk/recording"
)

// Version is written into the provenance; the command sets it.
var Version = "dev"

// Sink receives the results of a detection run ([Pipeline.Run]): what
// the run is about before the first window, each window's spikes in file
// order, and the summary at the end. A sink that writes files (the Phy
// folder of package phy) makes them appear only in End.
//
// When any call returns an error, or the run fails, the pipeline makes no
// further calls: End is called only for a run that succeeded, and the
// owner of the sink discards what it holds (phy.Writer.Close).
type Sink interface {
	// Begin is called once, after the whitening and the templates are
	// known and before the first window is detected.
	Begin(info *RunInfo) error
	// Window is called for every window in file order with its spikes.
	// s is reused for the next window: a sink copies what must outlive
	// the call.
	Window(win recording.Window, s *detect.Spikes) error
	// End is called once after the last window with the run's summary,
	// when the run has no work left on its device (its detectors and
	// motion corrector are closed): a sink may close the pipeline and
	// the device beside its End, once it has what it needs from them.
	End(sum *Summary) error
}

// RunInfo describes a detection run to its [Sink]. Its values are shared
// with the pipeline and must not be modified.
type RunInfo struct {
	// Recording is the recording detected (read-only use: name, format,
	// channels, rate, samples).
	Recording recording.Recording
	// Probe is the geometry used: site i is file row Probe.ChanMap[i].
	Probe *probe.Probe
	// Config holds the effective parameters and Detect those of detection.
	Config Config
	Detect detect.Params
	// Schedule is the window schedule of the run; StatWindows the windows
	// of the whitening statistic and template learning.
	Schedule    recording.Schedule
	StatWindows []int
	// Grid is the template-centre grid: a spike's Center indexes it, and
	// its Channels are Grid.IC[Center·NC …].
	Grid *detect.Grid
	// Universal are the universal templates and feature basis used, and
	// UniversalSource says where they came from.
	Universal       *detect.Templates
	UniversalSource string
	// Clips is the number of clips templates were learned from (0 when
	// they were given).
	Clips int
	// Whitening is the whitening operator the windows were whitened by.
	Whitening *linalg.Whitening
	// Device names where the passes ran, for the provenance.
	Device string
	// Motion is the motion estimate the windows were corrected by (nil
	// with nblocks 0), Correction the rule that corrected them (the auto
	// rule's choice; "" without motion) and WindowTimes the windows'
	// centre times in s.
	Motion      *motion.Estimate
	Correction  string
	WindowTimes []float64
}

// RunOptions configures [Pipeline.Run].
type RunOptions struct {
	// Universal, if set, are the universal templates used instead of
	// learning them (pass 2 is skipped); UniversalFile names their source
	// for the provenance.
	Universal     *detect.Templates
	UniversalFile string
	// Device names the device that ran the passes, for the provenance.
	Device string
	// Started is when the process (or the caller's timing) began: if set,
	// the whole time of the run is measured from it (Summary.Started).
	Started time.Time
	// Timings are times the caller measured before Run (start-up, device
	// opening, …), in seconds; they are copied into Summary.Timings.
	Timings map[string]float64
}

// Summary describes a finished detection run.
type Summary struct {
	// Spikes is the number of spikes detected.
	Spikes int `json:"spikes"`
	// Windows and Samples are the windows and samples of the schedule;
	// Seconds is Samples in seconds of recording.
	Windows int     `json:"windows"`
	Samples int64   `json:"samples"`
	Seconds float64 `json:"recording_seconds"`
	// Wall is the time from the start of Run to the end of the last
	// window; WallSeconds the same in seconds.
	Wall        time.Duration `json:"-"`
	WallSeconds float64       `json:"wall_seconds"`
	// TimesRealTime is Seconds / WallSeconds: above 1 the run is faster
	// than real time, below 1 slower.
	TimesRealTime float64 `json:"times_real_time"`
	// PassSeconds holds the wall time of each pass.
	PassSeconds map[string]float64 `json:"pass_seconds"`
	// PassWaits holds, per pass, the seconds its window loop waited for
	// the loader, the uploads and the results ([Pipeline.Waits]).
	PassWaits map[string]map[string]float64 `json:"pass_waits,omitempty"`
	// Clips is the number of clips templates were learned from.
	Clips int `json:"template_clips,omitempty"`
	// Centres is the number of template centres of the grid.
	Centres int `json:"centres"`
	// Work sums the detector's work counts.
	Work detect.Stats `json:"work"`
	// Warnings are the pipeline's ([Pipeline.Warnings]) and those the
	// run's passes found; a sink writes them with its own (dspk.json's
	// "warnings").
	Warnings []string `json:"-"`
	// Timings holds, in seconds, where the whole run's time went: the
	// caller's (RunOptions.Timings), each stage of Run as a whole (set-up
	// and waiting included: "whitening", "templates", "grid",
	// "sink_begin", "detection") and what a sink adds (the Phy folder: "folder_writing"
	// for the whole of its End, "cluster_files" and, beside them,
	// "plotting" inside it, and "until_written", from Started to the last
	// write of dspk.json).
	Timings map[string]float64 `json:"timings,omitempty"`
	// Kernels counts the GPU kernel modules the process loaded and where
	// they came from (NVRTC or the on-disk cache); nil on the CPU.
	Kernels *compute.KernelStats `json:"kernels,omitempty"`
	// Started is RunOptions.Started (or the start of Run).
	Started time.Time `json:"-"`
}

// Speed says how fast the run went relative to the recording, without
// ambiguity: "60.0 s of recording in 123.0 s: 0.49× real time (slower
// than real time)".
func (s *Summary) Speed() string {
	how := "faster than real time"
	if s.TimesRealTime < 1 {
		how = "slower than real time"
	}
	return fmt.Sprintf("%.1f s of recording in %.1f s: %.2f× real time (%s)", s.Seconds, s.WallSeconds, s.TimesRealTime, how)
}

// Run runs the three passes and hands the results to sink: Begin once
// the whitening and templates are known, Window for every window's
// spikes, End with the summary. The pipeline itself writes no files.
func (p *Pipeline) Run(ctx context.Context, sink Sink, opt RunOptions) (*Summary, error) {
	start := time.Now()
	sum := &Summary{Windows: p.sched.Windows, Samples: p.sched.End - p.sched.Start, Started: opt.Started,
		Timings: map[string]float64{}}
	if sum.Started.IsZero() {
		sum.Started = start
	}
	for k, v := range opt.Timings {
		sum.Timings[k] = v
	}
	stage := func(name string, t0 time.Time) { sum.Timings[name] += time.Since(t0).Seconds() }
	// The grid (host work on the probe alone) is built beside the
	// whitening and template passes; "grid" is the time Run then still
	// waits for it. A run that fails before does not wait.
	gridDone := make(chan struct{})
	go func() {
		defer close(gridDone)
		p.Grid()
	}()
	w, _, ww, err := p.Whitening(ctx)
	if err != nil {
		return nil, err
	}
	warnings := append(p.Warnings(), ww...)
	stage("whitening", start)
	// The detection pass's detector is built while the host learns the
	// templates from the clips.
	defer p.dropDetector()
	u, err := p.runUniversal(ctx, w, opt, stage)
	if err != nil {
		return nil, err
	}
	defer u.corr.Close() // frees the corrector's device memory
	tm, source, corr := u.tm, u.source, u.corr
	sum.Clips, warnings = u.clips, append(warnings, u.warnings...)
	prm := p.DetectParams()
	t := time.Now()
	<-gridDone
	g, err := p.Grid()
	if err != nil {
		return nil, err
	}
	stage("grid", t)
	info := &RunInfo{
		Recording: p.rec, Probe: p.probe, Config: p.cfg, Detect: prm,
		Schedule: p.sched, StatWindows: p.StatWindows(), Grid: g,
		Universal: tm, UniversalSource: source, Clips: sum.Clips,
		Whitening: w, Device: opt.Device,
	}
	if corr != nil {
		info.Motion, info.Correction, info.WindowTimes = corr.est, corr.ruleName(), p.WindowTimes()
	}
	t = time.Now()
	if err := sink.Begin(info); err != nil {
		return nil, err
	}
	stage("sink_begin", t)
	t = time.Now()
	stats, err := p.detectPass(ctx, windowPass{name: "detection", w: w, corr: corr}, tm, func(win recording.Window, s *detect.Spikes) error {
		sum.Spikes += s.Len()
		return sink.Window(win, s)
	})
	if err != nil {
		return nil, err
	}
	stage("detection", t)
	// The run's device work is over: the detectors are closed, and so is
	// the corrector before End, so that a sink may release the device
	// beside its End.
	corr.Close()
	sum.Centres = g.F()
	sum.Work = stats
	p.timeSummary(sum, start)
	sum.PassWaits = map[string]map[string]float64{}
	for pass, ws := range p.Waits {
		m := map[string]float64{}
		for k, v := range ws {
			m[k] = v.Seconds()
		}
		sum.PassWaits[pass] = m
	}
	sum.Warnings = warnings
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.dev.Kind() == compute.CUDA {
		k := compute.Kernels()
		sum.Kernels = &k
	}
	if err := sink.End(sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// universalRun is what a run detects with ([Pipeline.runUniversal]).
type universalRun struct {
	tm       *detect.Templates // the universal templates
	source   string            // where they came from
	clips    int               // the clips they were learned from (0: given)
	corr     *correction       // the correction of the windows (nblocks > 0)
	warnings []string          // of few clips
}

// runUniversal returns the universal templates of a run: opt's, or
// learned from the data (the "templates" stage, timed by stage); with
// nblocks > 0 also the correction of the windows after the motion pass,
// templates learned here then learned again from corrected windows, as
// Kilosort4's second pass does (§4). The caller closes the correction.
func (p *Pipeline) runUniversal(ctx context.Context, w *linalg.Whitening, opt RunOptions, stage func(string, time.Time)) (*universalRun, error) {
	u := &universalRun{tm: opt.Universal, source: opt.UniversalFile}
	var err error
	if u.tm == nil {
		t := time.Now()
		if u.tm, u.clips, err = p.learnTemplates(ctx, w, nil, p.prepareDetector); err != nil {
			return nil, err
		}
		stage("templates", t)
		u.source = "learned from the data"
		if u.clips < detect.FewClips {
			u.warnings = append(u.warnings, fmt.Sprintf("%s: the templates were learned from only %d isolated peaks "+
				"(Kilosort4's runs on large probes have thousands); check them (wTEMP.npy) or supply -templates from a longer recording",
				p.rec.Name(), u.clips))
		}
	}
	if u.tm.NT != p.cfg.NT {
		return nil, fmt.Errorf("%s: templates of %d samples, the run uses nt = %d", opt.UniversalFile, u.tm.NT, p.cfg.NT)
	}
	if p.cfg.NBlocks > 0 {
		// The motion pass on uncorrected windows, then every later pass
		// on corrected ones.
		if u.corr, err = p.estimateAndCorrect(ctx, w, u.tm); err != nil {
			return nil, err
		}
		if opt.Universal == nil {
			if u.tm, u.clips, err = p.learnTemplates(ctx, w, u.corr, nil); err != nil {
				u.corr.Close()
				return nil, err
			}
			u.source = "learned from the drift-corrected data"
		}
	}
	return u, nil
}

// timeSummary sets the wall time of sum since start, the seconds of
// recording of its samples, its speed and the time of each pass
// ([Pipeline.Timings]).
func (p *Pipeline) timeSummary(sum *Summary, start time.Time) {
	sum.Wall = time.Since(start)
	sum.WallSeconds = sum.Wall.Seconds()
	sum.Seconds = float64(sum.Samples) / p.rec.SampleRate()
	sum.TimesRealTime = sum.Seconds / sum.WallSeconds
	sum.PassSeconds = map[string]float64{}
	for k, v := range p.Timings {
		sum.PassSeconds[k] = v.Seconds()
	}
}

// Provenance returns the record of a run that a sink stores beside its
// results (dspk.json of the Phy folder): versions, host, input, probe,
// grid, every effective parameter, the templates' source, the device,
// the schedule and the summary. A sink may add keys of its own.
func Provenance(info *RunInfo, sum *Summary) map[string]any {
	host, _ := os.Hostname()
	rec, g := info.Recording, info.Grid
	return map[string]any{
		"dspk_version": Version,
		"go_version":   runtime.Version(),
		"host":         host,
		"gomaxprocs":   runtime.GOMAXPROCS(0),
		"input":        InputProvenance(rec, ""),
		"probe":        map[string]any{"name": info.Probe.Name, "summary": info.Probe.Summary(), "sites": info.Probe.Len()},
		"grid": map[string]any{"dmin": g.Dmin, "dminx": g.Dminx, "candidates": g.Candidates, "centres": g.F(),
			"nearest_chans": g.NC, "nearest_templates": g.NC2},
		"config":            info.Config,
		"detection":         info.Detect,
		"templates":         info.UniversalSource,
		"device":            info.Device,
		"schedule":          info.Schedule,
		"summary":           sum,
		"whitening_windows": info.StatWindows,
	}
}

// AbsPath returns path made absolute where possible.
func AbsPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// InputProvenance describes the recording for dspk.json and params.py:
// its data files in reading order (several for a split SpikeGLX run, as
// Kilosort4 lists them; datPath, if not empty, for a recording of one
// file), the stored sample type and, for Open Ephys, the first sample
// number of sample_numbers.npy (spike times stay relative to the file's
// first sample, as Kilosort4's do). "files" is a []string and "dtype" a
// string.
func InputProvenance(rec recording.Recording, datPath string) map[string]any {
	if datPath == "" {
		datPath = rec.Name()
	}
	files := []string{AbsPath(datPath)}
	if f, ok := rec.(recording.Filer); ok {
		files = files[:0]
		for _, n := range f.Files() {
			files = append(files, AbsPath(n))
		}
	}
	dtype := "int16"
	if r, ok := rec.(interface{ DType() recording.DType }); ok {
		dtype = r.DType().String()
	}
	in := map[string]any{
		"path": AbsPath(rec.Name()), "format": rec.Format(), "channels": rec.Channels(),
		"sample_rate": rec.SampleRate(), "samples": rec.Samples(), "files": files, "dtype": dtype,
	}
	if r, ok := rec.(interface{ FirstSample() (int64, bool) }); ok {
		if first, ok := r.FirstSample(); ok {
			in["first_sample"] = first
		}
	}
	return in
}
