package stream

import (
	"bufio"
	"fmt"
	"io"
)

// Lines returns an emit function for [Run] that sends each spike's
// record through snd first (nil: none), then writes it as one line on
// w, "time_s unit amplitude channel" (time in seconds from the stream's
// first frame at rate Hz), flushed at once, and keeps it in f (nil: not
// kept). quiet writes no line.
func Lines(w io.Writer, rate float64, f *Folder, quiet bool, snd *Sender) func(Spike) error {
	bw := bufio.NewWriter(w)
	return func(sp Spike) error {
		if snd != nil {
			snd.Send(sp)
		}
		if f != nil {
			f.Add(sp)
		}
		if quiet {
			return nil
		}
		fmt.Fprintf(bw, "%.6f %d %.2f %d\n", float64(sp.Sample)/rate, sp.Unit, sp.Amplitude, sp.Channel)
		return bw.Flush()
	}
}

// ProgressLine is the one-line state of a running stream at rate Hz, for
// a terminal (it starts with a carriage return).
func (s *Stats) ProgressLine(rate float64) string {
	return fmt.Sprintf("\r%.0f s of recording in %.0f s: %d spikes, latency p50 %.2f ms, p99 %.2f ms, %d late blocks ",
		float64(s.Samples)/rate, s.WallSeconds, s.Spikes, ms(s.Percentile(50)), ms(s.Percentile(99)), s.LateBlocks)
}

// Summary is the closing line of a stream read from source whose folder
// is out.
func (s *Stats) Summary(source, out string) string {
	return fmt.Sprintf("%s: %d spikes in %.1f s of recording (%.1f s); latency p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d of %d blocks late; in %s.",
		source, s.Spikes, s.DataSeconds, s.WallSeconds, s.LatencyMs["p50"], s.LatencyMs["p99"], s.LatencyMs["max"], s.LateBlocks, s.Blocks, out)
}

// LateLine is the message of a late block at rate Hz.
func (b LateBlock) LateLine(rate float64) string {
	return fmt.Sprintf("late block at %.3f s (%d samples): %.1f ms", float64(b.Start)/rate, b.Samples, b.LatencyMs)
}
