package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"dspk/detect"
	"dspk/kilosort"
	"dspk/pipeline"
	"dspk/recording"
)

// load reads every window of the recording of opt.File through the
// window loader (read-ahead 2) into reused buffers, with one and with 8
// reader goroutines per window: the time dspk detect cannot beat.
func (r *runner) load() error {
	if r.opt.File == "" {
		return NeedsFileError{"load"}
	}
	rec, err := recording.Open(r.opt.File, recording.OpenOptions{})
	if err != nil {
		return err
	}
	defer rec.Close()
	ks := kilosort.Defaults()
	s, err := recording.NewSchedule(0, rec.Samples(), ks.BatchSize, ks.NT)
	if err != nil {
		return err
	}
	bytes := float64(rec.Samples()) * float64(rec.Channels()) * 2
	for _, readers := range []int{1, 8} {
		d, err := loadAll(r.ctx, rec, s, readers)
		if err != nil {
			return err
		}
		gbps, rt := bytes/d.Seconds()/1e9, float64(rec.Samples())/rec.SampleRate()/d.Seconds()
		r.row(Row{Label: fmt.Sprintf("load %d windows, %d readers", s.Windows, readers), Op: fmt.Sprintf("load, %d readers", readers),
			Size: fmt.Sprintf("%d windows", s.Windows), Device: "cpu", Time: d,
			Nums: []Num{{"gb_per_s", gbps}, {"times_real_time", rt}}, Text: fmt.Sprintf("%.2f GB/s, %.0f× real time", gbps, rt)})
	}
	return nil
}

// loadAll reads every window of s from rec through the window loader
// (read-ahead 2, readers goroutines per window) into reused buffers and
// returns the time it took.
func loadAll(ctx context.Context, rec recording.Recording, s recording.Schedule, readers int) (time.Duration, error) {
	t0 := time.Now()
	ld := recording.NewLoader(rec, s, recording.LoaderOptions{InFlight: 2, Readers: readers})
	defer ld.Close()
	for {
		b, err := ld.Next(ctx)
		if errors.Is(err, io.EOF) {
			return time.Since(t0), nil
		}
		if err != nil {
			return 0, err
		}
		ld.Release(b)
	}
}

// wholeFile runs the whole of dspk detect on the recording of opt.File
// on the device — whitening, template learning and detection passes —
// with a sink that discards the spikes, and reports each pass's time and
// throughput next to the time the window loader alone takes to read the
// same windows with the same readers (before the passes and after them),
// the detection pass's waits, and the fixed costs (building the
// pipeline: kernels compiled, buffers allocated) apart.
func (r *runner) wholeFile() error {
	if r.opt.File == "" {
		return NeedsFileError{"file"}
	}
	dev := r.dev
	rec, pr, warnings, err := r.open()
	if err != nil {
		return err
	}
	defer rec.Close()
	if r.opt.Warnings != nil {
		r.opt.Warnings(warnings)
	}
	cfg := pipeline.DefaultConfig()
	t0 := time.Now()
	p, err := pipeline.New(dev, rec, pr, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	build := time.Since(t0)
	// The loader alone reads the file before the passes too: a file read
	// for the first time since it was written may read slower than after,
	// so the detection pass is put beside both readings.
	before, err := loadAll(r.ctx, rec, p.Schedule(), pipeline.Readers())
	if err != nil {
		return err
	}
	t1 := time.Now()
	sum, err := p.Run(r.ctx, discardSink{}, pipeline.RunOptions{Device: dev.Spec()})
	if err != nil {
		return err
	}
	run := time.Since(t1)
	sched := p.Schedule()
	secs := float64(sched.End-sched.Start) / rec.SampleRate()
	bytes := float64(sched.End-sched.Start) * float64(rec.Channels()) * 2

	readers := pipeline.Readers()
	load, err := loadAll(r.ctx, rec, sched, readers)
	if err != nil {
		return err
	}

	where := dev.Spec()
	r.row(Row{Label: "pipeline set-up (kernels, buffers)", Op: "file: set-up", Size: rec.Name(), Device: where, Time: build, Text: "fixed cost"})
	for _, pass := range []string{"whitening", "templates", "detection"} {
		d := p.Timings[pass]
		n := len(p.StatWindows())
		if pass == "detection" {
			n = sched.Windows
		}
		r.row(Row{Label: fmt.Sprintf("%s pass, %d windows", pass, n), Op: "file: " + pass + " pass",
			Size: fmt.Sprintf("%d windows", n), Device: where, Time: d,
			Nums: []Num{{"times_real_time", secs / d.Seconds()}},
			Text: fmt.Sprintf("%.0f× real time", secs/d.Seconds())})
	}
	for _, w := range []struct{ key, what, note string }{
		{"loader", "loader", ""}, {"upload", "uploads", ""}, {"results", "results", "; on a GPU: the device's work"},
	} {
		d := p.Waits["detection"][w.key]
		r.row(Row{Label: "detection pass: waiting, " + w.what, Op: "file: detection pass waiting for " + w.key,
			Size: fmt.Sprintf("%d windows", sched.Windows), Device: where, Time: d,
			Text: fmt.Sprintf("%.0f %% of the pass%s", 100*d.Seconds()/p.Timings["detection"].Seconds(), w.note)})
	}
	r.row(Row{Label: fmt.Sprintf("whole run, %d spikes", sum.Spikes), Op: "file: whole run", Size: fmt.Sprintf("%.1f s", secs),
		Device: where, Time: run, Nums: []Num{{"spikes", float64(sum.Spikes)}, {"times_real_time", secs / run.Seconds()}},
		Text: fmt.Sprintf("%.0f× real time", secs/run.Seconds())})
	det := p.Timings["detection"]
	for _, l := range []struct {
		when, op string
		d        time.Duration
	}{{"before", "file: loader alone before", before}, {"after", "file: loader alone", load}} {
		ratio := det.Seconds() / l.d.Seconds()
		limit := "the device, or the host between its windows"
		if ratio < 1.1 {
			limit = "reading the file"
		}
		r.row(Row{Label: fmt.Sprintf("loader alone, %d windows, %s", sched.Windows, l.when), Op: l.op,
			Size: fmt.Sprintf("%d windows", sched.Windows), Device: "cpu", Time: l.d,
			Nums: []Num{{"GB_per_s", bytes / l.d.Seconds() / 1e9}, {"detection_over_loader", ratio}},
			Text: fmt.Sprintf("%d readers, %.2f GB/s, %.0f× real time; detection pass %.2f× this (limit: %s)",
				readers, bytes/l.d.Seconds()/1e9, secs/l.d.Seconds(), ratio, limit)})
	}
	return nil
}

// discardSink is a pipeline.Sink that keeps nothing.
type discardSink struct{}

func (discardSink) Begin(*pipeline.RunInfo) error                 { return nil }
func (discardSink) Window(recording.Window, *detect.Spikes) error { return nil }
func (discardSink) End(*pipeline.Summary) error                   { return nil }
