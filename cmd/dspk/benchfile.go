package main

import (
	"fmt"
	"time"

	"dspk/compute"
	"dspk/detect"
	"dspk/pipeline"
	"dspk/recording"
)

// benchWholeFile runs the whole of dspk detect on the recording at path
// on dev — whitening, template learning and detection passes — with a
// sink that discards the spikes, and prints each pass's time and
// throughput next to the time the window loader alone takes to read the
// same windows with the same readers (before the passes and after them),
// the detection pass's waits, and the fixed costs (building the
// pipeline: kernels compiled, buffers allocated) apart.
func benchWholeFile(path string, dev *compute.Device) error {
	if path == "" {
		return usagef("-ops file needs -file PATH")
	}
	var in inputFlags
	rec, pr, err := in.open(path)
	if err != nil {
		return err
	}
	defer rec.Close()
	printWarnings(cmdErr, in.warnings)
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
	before, err := loadAll(rec, p.Schedule(), pipeline.Readers())
	if err != nil {
		return err
	}
	t1 := time.Now()
	sum, err := p.Run(cmdCtx, discardSink{}, pipeline.RunOptions{Device: dev.Spec()})
	if err != nil {
		return err
	}
	run := time.Since(t1)
	sched := p.Schedule()
	secs := float64(sched.End-sched.Start) / rec.SampleRate()
	bytes := float64(sched.End-sched.Start) * float64(rec.Channels()) * 2

	readers := pipeline.Readers()
	load, err := loadAll(rec, sched, readers)
	if err != nil {
		return err
	}

	where := dev.Spec()
	row(benchRow{label: "pipeline set-up (kernels, buffers)", op: "file: set-up", size: rec.Name(), device: where, d: build, text: "fixed cost"})
	for _, pass := range []string{"whitening", "templates", "detection"} {
		d := p.Timings[pass]
		n := len(p.StatWindows())
		if pass == "detection" {
			n = sched.Windows
		}
		row(benchRow{label: fmt.Sprintf("%s pass, %d windows", pass, n), op: "file: " + pass + " pass",
			size: fmt.Sprintf("%d windows", n), device: where, d: d,
			nums: []benchNum{{"times_real_time", secs / d.Seconds()}},
			text: fmt.Sprintf("%.0f× real time", secs/d.Seconds())})
	}
	for _, w := range []struct{ key, what, note string }{
		{"loader", "loader", ""}, {"upload", "uploads", ""}, {"results", "results", "; on a GPU: the device's work"},
	} {
		d := p.Waits["detection"][w.key]
		row(benchRow{label: "detection pass: waiting, " + w.what, op: "file: detection pass waiting for " + w.key,
			size: fmt.Sprintf("%d windows", sched.Windows), device: where, d: d,
			text: fmt.Sprintf("%.0f %% of the pass%s", 100*d.Seconds()/p.Timings["detection"].Seconds(), w.note)})
	}
	row(benchRow{label: fmt.Sprintf("whole run, %d spikes", sum.Spikes), op: "file: whole run", size: fmt.Sprintf("%.1f s", secs),
		device: where, d: run, nums: []benchNum{{"spikes", float64(sum.Spikes)}, {"times_real_time", secs / run.Seconds()}},
		text: fmt.Sprintf("%.0f× real time", secs/run.Seconds())})
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
		row(benchRow{label: fmt.Sprintf("loader alone, %d windows, %s", sched.Windows, l.when), op: l.op,
			size: fmt.Sprintf("%d windows", sched.Windows), device: "cpu", d: l.d,
			nums: []benchNum{{"GB_per_s", bytes / l.d.Seconds() / 1e9}, {"detection_over_loader", ratio}},
			text: fmt.Sprintf("%d readers, %.2f GB/s, %.0f× real time; detection pass %.2f× this (limit: %s)",
				readers, bytes/l.d.Seconds()/1e9, secs/l.d.Seconds(), ratio, limit)})
	}
	return nil
}

// discardSink is a pipeline.Sink that keeps nothing.
type discardSink struct{}

func (discardSink) Begin(*pipeline.RunInfo) error                 { return nil }
func (discardSink) Window(recording.Window, *detect.Spikes) error { return nil }
func (discardSink) End(*pipeline.Summary) error                   { return nil }
