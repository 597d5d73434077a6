package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"dspk/compute"
	"dspk/recording"
)

func init() {
	register(&command{
		name:  "info",
		short: "describe a recording: format, channels, rate, duration, µV per count, probe",
		usage: "PATH",
		example: `dspk info run_g0_t0.imec0.ap.bin
dspk info -channels 4 -rate 15000 locust_trial_01.raw
dspk info -devices`,
		writesNothing: true,
		setup: func(fs *flag.FlagSet) func([]string) error {
			var in inputFlags
			in.register(fs)
			devices := fs.Bool("devices", false, "list the compute devices dspk finds (and no recording needed)")
			return func(args []string) error {
				if *devices {
					if err := listDevices(); err != nil {
						return err
					}
					if len(args) == 0 {
						return nil
					}
				}
				if len(args) < 1 {
					return usagef("info takes a recording path (or the files of one SpikeGLX run)")
				}
				return info(args, &in)
			}
		},
	})
}

func info(args []string, in *inputFlags) error {
	rec, err := in.openRecording(args)
	if err != nil {
		return err
	}
	defer rec.Close()
	defer func() { printWarnings(cmdErr, in.warnings) }() // those of the recording and the probe
	w := cmdOut
	fs := rec.SampleRate()
	dur := float64(rec.Samples()) / fs
	fmt.Fprintf(w, "file:        %s\n", rec.Name())
	fmt.Fprintf(w, "format:      %s\n", rec.Format())
	fmt.Fprintf(w, "channels:    %d\n", rec.Channels())
	fmt.Fprintf(w, "sample rate: %s Hz\n", trimFloat(fs))
	fmt.Fprintf(w, "samples:     %d\n", rec.Samples())
	fmt.Fprintf(w, "duration:    %s s (%s)\n", trimFloat(dur), time.Duration(dur*float64(time.Second)).Round(time.Millisecond))
	fmt.Fprintf(w, "µV/count:    %s\n", recording.ScaleSummary(rec.MicrovoltsPerCount()))
	if r, ok := rec.(interface{ DType() recording.DType }); ok {
		fmt.Fprintf(w, "dtype:       %s\n", r.DType())
	}
	if c, ok := rec.(*recording.Concat); ok {
		starts := c.PartStarts()
		for i, p := range c.Parts() {
			fmt.Fprintf(w, "part %d:      %s (samples %d–%d)\n", i, p.Name(), starts[i], starts[i]+p.Samples()-1)
		}
	}
	if oe, ok := rec.(*recording.OpenEphys); ok {
		fmt.Fprintf(w, "stream:      %s\n", oe.ID().FullName())
		if first, ok := oe.FirstSample(); ok {
			fmt.Fprintf(w, "first sample: %d (sample_numbers.npy; dspk's spike times count from the file's first sample)\n", first)
		}
		if all, err := recording.FindOpenEphysStreams(args[0]); err == nil && len(all) > 1 {
			fmt.Fprintf(w, "streams:     %d (choose with -stream, a unique part of the name)\n", len(all))
			for _, s := range all {
				mark := " "
				if s.FullName() == oe.ID().FullName() {
					mark = "*"
				}
				fmt.Fprintf(w, "  %s %s: %d ch, %g Hz\n", mark, s.FullName(), s.Stream.NumChannels, s.Stream.SampleRate)
			}
		}
	}
	if err := recording.CheckSpikeBand(rec); err != nil {
		fmt.Fprintf(w, "warning:     %v\n", err)
	}
	if sg, ok := rec.(*recording.SpikeGLX); ok {
		m := sg.Meta
		part := m.ProbePart
		if part == "" {
			part = "?"
		}
		fmt.Fprintf(w, "spikeglx:    stream %s, probe type %d (%s), saved AP/LF/SY %d/%d/%d\n",
			m.TypeThis, m.ProbeType, part, m.SavedAPLFSY[0], m.SavedAPLFSY[1], m.SavedAPLFSY[2])
	}
	pr, err := in.resolveProbe(rec)
	if err != nil {
		fmt.Fprintf(w, "probe:       none (%v)\n", err)
		return nil
	}
	fmt.Fprintf(w, "probe:       %s: %s\n", pr.Name, pr.Summary())
	fmt.Fprintf(w, "rows used:   %s\n", pr.RowsUsed(rec.Channels()))
	return nil
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.6f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// listDevices prints the compute devices dspk finds and, without a GPU,
// why none was found.
func listDevices() error {
	r := compute.Devices()
	for _, d := range r.Devices {
		if d.Arch == "" {
			fmt.Fprintf(cmdOut, "%-8s %s, %d threads (pure Go)\n", d.Spec, d.Name, d.Cores)
			continue
		}
		fmt.Fprintf(cmdOut, "%-8s %s, %s, %d SMs, %.1f GiB, driver %d.%d\n", d.Spec, d.Name, d.Arch, d.Cores,
			float64(d.Memory)/(1<<30), d.DriverVersion/1000, d.DriverVersion%1000/10)
	}
	if r.CUDA != "" {
		fmt.Fprintf(cmdOut, "cuda:    unavailable: %s\n", r.CUDA)
	}
	for _, l := range r.Libraries {
		fmt.Fprintf(cmdOut, "library: %s\n", l)
	}
	return nil
}
