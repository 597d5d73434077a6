package main

import (
	"cmp"
	"flag"
	"time"

	"dspk/compute"
	"dspk/stream"
)

func init() {
	var f stream.ServeOptions
	var device string
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
				return stream.Serve(cmdCtx, dev, args[0], args[1], f)
			}
		},
	})
}
