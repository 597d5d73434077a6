package main

import (
	"cmp"
	"context"
	"flag"
	"io"
	"time"

	"dspk/compute"
	"dspk/probe"
	"dspk/recording"
	"dspk/stream"
)

func init() {
	var f stream.ServeOptions
	var device string
	var in inputFlags
	register(&command{
		name:  "stream",
		short: "match a recording's frames against a sort's units as they arrive",
		usage: "SORTDIR SOURCE",
		example: `dspk stream -realtime sort1 recording.imec0.ap.bin     # replay a finished recording at its rate
dspk stream -follow sort1 run2_g0_t0.imec0.ap.bin          # a file SpikeGLX is still writing
acquire | dspk stream -o live sort1 -                        # int16 frames on standard input (or tcp://HOST:PORT)`,
		endsOnSignal: true,
		setup: func(fs *flag.FlagSet) func([]string) error {
			fs.StringVar(&f.Out, "o", "", "the folder written at the end, for Phy and SpikeInterface (default SORTDIR-stream)")
			fs.StringVar(&device, "device", "cpu", "where the matching runs: cpu or cuda:N")
			fs.BoolVar(&f.Overwrite, "overwrite", false, "replace a folder an earlier stream wrote")
			fs.BoolVar(&f.Quiet, "q", false, "print no line per spike (time s, unit, amplitude, channel) on standard output")
			fs.BoolVar(&f.Realtime, "realtime", false, "deliver the source no faster than its sample rate, in 1-ms packets (replay a finished recording)")
			fs.BoolVar(&f.Follow, "follow", false, "keep reading a file as it grows (tail -f) until it has not grown for -idle")
			fs.DurationVar(&f.Idle, "idle", 5*time.Second, "with -follow, end when the file has not grown for this long")
			fs.DurationVar(&f.Block, "block", stream.DefaultBlock, "the least new recording matched at once (smaller answers sooner, costs more)")
			fs.StringVar(&f.Send, "send", "", "also send each spike as a 24-byte binary record to tcp://HOST:PORT or udp://HOST:PORT (docs/formats.md)")
			fs.DurationVar(&f.Deadline, "deadline", 10*time.Millisecond, "report a block whose spikes come out later than this after its last sample arrived")
			fs.DurationVar(&f.Lookahead, "lookahead", 0, "how long after a block it waits before matching: from half the template plus a sample\n(1.04 ms at 30 kHz, the default) to the template's length (2.03 ms, the sort's windows)")
			fs.BoolVar(&f.HoldMotion, "hold-motion", false, "past the sort's motion estimate hold its last shifts (default: track the motion from the stream's spikes)")
			fs.DurationVar(&f.Learn.Span, "learn", 0, "sort this much of the stream's start (dspk sort's defaults) into SORTDIR, then match its units on the rest")
			fs.StringVar(&in.probe, "probe", "", "with -learn: the probe (default: a SpikeGLX source's .meta, else np1 for 384/385 channels)")
			fs.IntVar(&in.channels, "channels", 0, "with -learn: int16 channels per frame of a raw, piped or socket source")
			fs.Float64Var(&in.rate, "rate", 0, "with -learn: sample rate in Hz of a raw, piped or socket source")
			return func(args []string) error {
				if len(args) != 2 {
					return usagef("stream takes a sort folder and a source (a file, - for standard input, or tcp://HOST:PORT)")
				}
				dev, _, err := compute.Open(device)
				if err != nil {
					return err
				}
				defer dev.Close()
				f.Out, f.Stdout, f.Stderr = cmp.Or(f.Out, args[0]+"-stream"), cmdOut, cmdErr
				setOutput(f.Out)
				f.Learn.Input = in.input() // -learn: dspk sort's defaults on the device
				f.Learn.Sort = func(ctx context.Context, rec recording.Recording, pr *probe.Probe, dir string, warnings []string) error {
					var pf, sf, fs = pipelineFlags{}, sortFlags{}, flag.NewFlagSet("learn", flag.ContinueOnError)
					pf.register(fs)
					sf.register(fs)
					sf.out, sf.device, sf.overwrite = dir, device, f.Overwrite
					_, err := runSort(ctx, rec, pr, &pf, &sf, []string{recording.DatPath(rec)}, warnings, io.Discard)
					return err
				}
				return stream.Serve(cmdCtx, dev, args[0], args[1], f)
			}
		},
	})
}
