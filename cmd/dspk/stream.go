package main

import (
	"cmp"
	"flag"
	"fmt"
	"time"

	"dspk/compute"
	"dspk/stream"
)

func init() {
	var f struct {
		out, device                      string
		overwrite, quiet, realtime, tail bool
		idle, block, deadline            time.Duration
	}
	register(&command{
		name:  "stream",
		short: "match a recording's frames against a sort's units as they arrive",
		usage: "SORTDIR SOURCE",
		example: `dspk stream -realtime sort1 recording.imec0.ap.bin     # replay a finished recording at its rate
dspk stream -follow sort1 run2_g0_t0.imec0.ap.bin          # a file SpikeGLX is still writing
acquire | dspk stream -o live sort1 -                        # int16 frames on standard input (or tcp://HOST:PORT)`,
		endsOnSignal: true,
		setup: func(fs *flag.FlagSet) func([]string) error {
			fs.StringVar(&f.out, "o", "", "the folder written at the end, for Phy and SpikeInterface (default SORTDIR-stream)")
			fs.StringVar(&f.device, "device", "cpu", "where the matching runs: cpu or cuda:N")
			fs.BoolVar(&f.overwrite, "overwrite", false, "replace a folder an earlier stream wrote")
			fs.BoolVar(&f.quiet, "q", false, "print no line per spike (time s, unit, amplitude, channel) on standard output")
			fs.BoolVar(&f.realtime, "realtime", false, "deliver the source no faster than its sample rate, in 1-ms packets (replay a finished recording)")
			fs.BoolVar(&f.tail, "follow", false, "keep reading a file as it grows (tail -f) until it has not grown for -idle")
			fs.DurationVar(&f.idle, "idle", 5*time.Second, "with -follow, end when the file has not grown for this long")
			fs.DurationVar(&f.block, "block", stream.DefaultBlock, "the least new recording matched at once (smaller answers sooner, costs more)")
			fs.DurationVar(&f.deadline, "deadline", 10*time.Millisecond, "report a block whose spikes come out later than this after its last sample arrived")
			return func(args []string) error {
				if len(args) != 2 {
					return usagef("stream takes a sort folder and a source (a file, - for standard input, or tcp://HOST:PORT)")
				}
				m, err := stream.Load(args[0])
				if err != nil {
					return err
				}
				dev, _, err := compute.Open(f.device)
				if err != nil {
					return err
				}
				defer dev.Close()
				out := cmp.Or(f.out, args[0]+"-stream")
				setOutput(out)
				folder, err := stream.CreateFolder(out, m, f.overwrite) // refused now, not after the stream
				if err != nil {
					return err
				}
				defer folder.Abort()
				src, err := stream.OpenSource(cmdCtx, args[1], m.FileChannels, stream.SourceOptions{Follow: f.tail, Idle: f.idle, Realtime: f.realtime, Rate: m.SampleRate})
				if err != nil {
					return err
				}
				defer src.Close()
				opt := stream.Options{Device: dev, MinBlock: max(1, int(f.block.Seconds()*m.SampleRate)), Deadline: f.deadline, Log: cmdErr}
				st, err := stream.Run(cmdCtx, m, src, opt, stream.Lines(cmdOut, m.SampleRate, folder, f.quiet))
				if err == nil {
					if err = folder.Write(args[1], st); err == nil {
						fmt.Fprintf(cmdErr, "\n%s\n", st.Summary(src.Name(), out))
					}
				}
				return err
			}
		},
	})
}
