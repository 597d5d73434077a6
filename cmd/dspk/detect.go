package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"dspk/compute"
	"dspk/detect"
	"dspk/phy"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
)

func init() {
	register(&command{
		name:  "detect",
		short: "detect spikes (Kilosort4's universal templates) and write a Phy/SpikeInterface folder with a drift raster",
		usage: "REC",
		example: `dspk detect -o det1 run_g0_t0.imec0.ap.bin
dspk detect -o det1 -device cpu -threshold 8 -tmin 0 -tmax 600 run_g0_t0.imec0.ap.bin
dspk detect -o det1 -nblocks 5 run_g0_t0.imec0.ap.bin
dspk detect -o det1 -templates wTEMP.npz -probe probe.json -channels 64 -rate 30000 data.bin`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			var in inputFlags
			in.register(fs)
			var pf pipelineFlags
			pf.register(fs)
			var df detectFlags
			df.register(fs)
			return func(args []string) error {
				if err := checkRunArgs("detect", args, df.out); err != nil {
					return err
				}
				setOutput(df.out)
				// The device opens (on a GPU: driver, context, libraries)
				// while the recording is opened.
				df.started, df.pending = cmdStart, openDeviceAsync(df.device)
				df.final = inMain
				t := time.Now()
				rec, pr, err := in.open(args...)
				if err != nil {
					df.pending.discard()
					return err
				}
				df.recOpen = time.Since(t)
				defer rec.Close()
				var unused map[string]string
				if df.templates != "" {
					unused = detectUnused
				}
				if err := pf.check(pr, unused); err != nil {
					return err
				}
				printWarnings(cmdErr, in.warnings)
				inputs := in.runInputs(args, rec, df.templates)
				sum, k, err := runDetect(cmdCtx, rec, pr, &pf, &df, inputs, in.warnings, cmdErr)
				if err != nil {
					return err
				}
				printSummary(cmdOut, sum, k, df.out)
				if df.verbose {
					printTimes(cmdErr, sum, time.Since(sum.Started))
				}
				return nil
			}
		},
	})
}

// detectFlags are the flags of detect (and demo).
type detectFlags struct {
	out       string
	device    string
	threshold float64
	templates string
	overwrite bool
	motion    motionFlags
	verbose   bool

	// Set by the detect command: when it started, the device being opened
	// beside the recording and how long the recording took to open.
	started time.Time
	pending *pendingDevice
	recOpen time.Duration
	// final is set when the process makes no GPU call after the run (the
	// dspk command's detect and demo): the device is then closed with
	// [compute.Device.CloseFinal].
	final bool
}

// releasingSink is the folder's sink with the device released beside its
// end. Once the last window's spikes are in, the run has no work left on
// the device: the pipeline's buffers and the device itself (on a GPU: its
// pinned memory, modules and context) are closed on a goroutine while the
// folder's end (cluster files, drift raster: host work) is written,
// instead of after it or, for the context, in the process's exit.
type releasingSink struct {
	pipeline.Sink
	release func()
	took    time.Duration     // how long release took
	info    *pipeline.RunInfo // the run's, from Begin
}

// Begin keeps the run's info and begins the folder.
func (s *releasingSink) Begin(info *pipeline.RunInfo) error {
	s.info = info
	return s.Sink.Begin(info)
}

// End writes the folder's end while release runs beside it.
func (s *releasingSink) End(sum *pipeline.Summary) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.Now()
		s.release()
		s.took = time.Since(t)
	}()
	err := s.Sink.End(sum)
	<-done
	return err
}

func (f *detectFlags) register(fs *flag.FlagSet) {
	d := pipeline.DefaultConfig()
	fs.StringVar(&f.out, "o", "", "output folder (required)")
	fs.StringVar(&f.device, "device", "auto", "compute device: auto, cpu or cuda:N")
	fs.Float64Var(&f.threshold, "threshold", d.ThUniversal, "detection threshold in whitened SD (Kilosort4's Th_universal)")
	fs.StringVar(&f.templates, "templates", "", "universal templates to use instead of learning them: an .npz with wTEMP and wPCA, or a folder with wTEMP.npy and wPCA.npy")
	fs.BoolVar(&f.verbose, "v", false, "print where the run's time went (start-up, each pass, the folder, the kernels)")
	fs.BoolVar(&f.overwrite, "overwrite", false, "replace the output folder if it exists and is a folder dspk wrote, unchanged, holding no input of this run")
	f.motion.register(fs, d)
}

// runDetect opens the device, builds the pipeline, loads the templates
// and writes the folder df.out (with its drift raster); inputs are the
// files the run reads (the folder may not replace them) and warnings
// those found so far (for dspk.json). It returns the summary and the
// number of provisional clusters. The folder is reserved before any
// work, so an existing one is refused at once. The passes' own warnings
// go to log.
func runDetect(ctx context.Context, rec recording.Recording, pr *probe.Probe, pf *pipelineFlags, df *detectFlags,
	inputs, warnings []string, log io.Writer) (*pipeline.Summary, int, error) {
	timings := map[string]float64{}
	cfg := pf.config()
	cfg.ThUniversal = df.threshold
	df.motion.apply(&cfg)
	// The pipeline's host side (checks, schedule, high-pass, template
	// grid and, for a GPU, the loader's host buffers faulted in) is
	// prepared while the device opens.
	t := time.Now()
	plan, err := pipeline.Prepare(rec, pr, cfg)
	if err != nil {
		if df.pending != nil {
			df.pending.discard()
		}
		return nil, 0, err
	}
	defer plan.Close()
	if df.device != "cpu" && df.pending != nil && df.pending.mayBeGPU() {
		plan.PrepareBuffers()
	}
	timings["pipeline_prepare"] = time.Since(t).Seconds()
	var dev *compute.Device
	var reason string
	if df.pending != nil {
		dev, reason, err = df.pending.wait()
		timings["device_open"] = df.pending.took.Seconds()
		timings["recording_open"] = df.recOpen.Seconds()
	} else {
		t := time.Now()
		dev, reason, err = compute.Open(df.device)
		timings["device_open"] = time.Since(t).Seconds()
	}
	if err != nil {
		return nil, 0, err
	}
	defer dev.Close()
	if dev.Kind() == compute.CUDA {
		o := dev.OpenTimes()
		timings["cuda_context"], timings["cuda_libraries"] = o.Context.Seconds(), o.Libraries.Seconds()
	}
	if !df.started.IsZero() {
		timings["startup"] = time.Since(df.started).Seconds()
	}
	fmt.Fprintf(log, "device: %s (%s)\n", dev, reason)
	// The whitening pass's first matrix product is warmed up beside the
	// pipeline's set-up.
	warmed := pipeline.WarmUp(dev, rec, pr, cfg)
	defer warmed() // before dev.Close
	t = time.Now()
	p, err := plan.New(dev)
	if err != nil {
		return nil, 0, err
	}
	defer p.Close() // before dev.Close
	timings["pipeline_setup"] = time.Since(t).Seconds()
	opt := pipeline.RunOptions{Started: df.started, Timings: timings}
	if df.templates != "" {
		t := time.Now()
		tm, err := detect.LoadTemplates(df.templates, cfg.NT)
		if err != nil {
			return nil, 0, err
		}
		opt.Universal, opt.UniversalFile = tm, df.templates
		timings["templates_load"] = time.Since(t).Seconds()
	}
	t = time.Now()
	w, err := phy.Create(df.out, phy.Options{Overwrite: df.overwrite, DatPath: datPath(rec), Context: ctx,
		Inputs: inputs, Warnings: warnings, Raster: true})
	if err != nil {
		return nil, 0, err
	}
	defer w.Close()
	timings["folder_create"] = time.Since(t).Seconds()
	opt.Device = useDevice(dev, log)
	bar := trackProgress(newBar())
	p.Progress = func(pass string, done, total int) {
		bar(pass, done, total)
		if pass == "detection" && done == total {
			setStage("the writing of the results")
		}
	}
	sink := &releasingSink{Sink: w, release: func() {
		p.Close()
		warmed()
		if df.final {
			dev.CloseFinal()
		} else {
			dev.Close()
		}
	}}
	sum, err := p.Run(ctx, sink, opt)
	if err != nil {
		return nil, 0, err
	}
	sum.Timings["device_close"] = sink.took.Seconds()
	printWarnings(log, sum.Warnings)
	return sum, w.Clusters(), nil
}

// useDevice says where each stage of a pipeline on dev runs.
func useDevice(dev *compute.Device, log io.Writer) string {
	if dev.Kind() == compute.CPU {
		return dev.String()
	}
	fmt.Fprintf(log, "note: preprocessing, the whitening statistic and detection run on %s; template learning on the CPU\n", dev.Spec())
	return pipeline.DeviceUse(dev)
}

// datPath is the raw file Phy should read for rec.
func datPath(rec recording.Recording) string { return recording.DatPath(rec) }

// printSummary prints the closing line of detect: what was found, how
// fast the whole command went from s.Started (in words: faster or slower
// than real time) and what the detection pass alone took, and where.
func printSummary(w io.Writer, s *pipeline.Summary, clusters int, out string) {
	fmt.Fprintf(w, "Detected %d spikes in %d windows; %s; %d provisional clusters of %d template centres; results in %s.\n",
		s.Spikes, s.Windows, wholeSpeed(s, time.Since(s.Started)), clusters, s.Centres, out)
}
