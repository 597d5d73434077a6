package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"dspk/compute"
	"dspk/detect"
	"dspk/recording"
	"dspk/sim"
)

// tiled is a recording that repeats a tile of samples (held in memory)
// to any length: reads cost a copy, so that a day of Neuropixels data
// is read at memory speed.
type tiled struct {
	base     []int16 // tile, interleaved
	c        int
	n        int64 // samples of the tile
	samples  int64
	rate     float64
	uvPerCnt []float64
}

func (r *tiled) Name() string                  { return "tiled" }
func (r *tiled) Format() string                { return "memory" }
func (r *tiled) Channels() int                 { return r.c }
func (r *tiled) SampleRate() float64           { return r.rate }
func (r *tiled) Samples() int64                { return r.samples }
func (r *tiled) MicrovoltsPerCount() []float64 { return r.uvPerCnt }
func (r *tiled) Close() error                  { return nil }
func (r *tiled) ReadInt16(dst []int16, start int64, n int) error {
	if start < 0 || start+int64(n) > r.samples {
		return fmt.Errorf("tiled: samples [%d, %d) outside [0, %d)", start, start+int64(n), r.samples)
	}
	for n > 0 {
		pos := start % r.n
		m := int(min(int64(n), r.n-pos))
		copy(dst[:m*r.c], r.base[pos*int64(r.c):(pos+int64(m))*int64(r.c)])
		dst, start, n = dst[m*r.c:], start+int64(m), n-m
	}
	return nil
}

// rss returns the process's resident memory in bytes (Linux), or 0.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// longSink checks a tiled run: every window of the second tile on has
// the spikes of the window one tile before, shifted by the tile's length
// (the data are the same, context included), and samples the memory.
type longSink struct {
	t          *testing.T
	tileW      int   // windows per tile
	tileN      int64 // samples per tile
	last       int   // index of the schedule's last window
	prev       map[int]*detect.Spikes
	compared   int
	maxSample  int64
	spikes     int
	rssAt      []int64
	rssWindows []int
}

func (s *longSink) Begin(*RunInfo) error { return nil }
func (s *longSink) End(*Summary) error   { return nil }
func (s *longSink) Window(w recording.Window, sp *detect.Spikes) error {
	s.spikes += sp.Len()
	if sp.Len() > 0 {
		s.maxSample = max(s.maxSample, sp.Sample[sp.Len()-1])
	}
	if w.Index%500 == 0 || w.Index == s.last {
		s.rssAt = append(s.rssAt, rss())
		s.rssWindows = append(s.rssWindows, w.Index)
	}
	if w.Index == 0 || w.Index == s.last {
		return nil
	}
	if old, ok := s.prev[w.Index-s.tileW]; ok {
		if old.Len() != sp.Len() {
			return fmt.Errorf("window %d: %d spikes, window %d one tile before: %d", w.Index, sp.Len(), w.Index-s.tileW, old.Len())
		}
		for i := range sp.Len() {
			if sp.Sample[i] != old.Sample[i]+s.tileN || sp.Center[i] != old.Center[i] || sp.Amplitude[i] != old.Amplitude[i] {
				return fmt.Errorf("window %d spike %d: sample %d centre %d amplitude %g; one tile before: %d + %d, %d, %g",
					w.Index, i, sp.Sample[i], sp.Center[i], sp.Amplitude[i], old.Sample[i], s.tileN, old.Center[i], old.Amplitude[i])
			}
		}
		s.compared++
		delete(s.prev, w.Index-s.tileW)
	}
	c := new(detect.Spikes)
	c.Append(sp)
	s.prev[w.Index] = c
	return nil
}

// TestLongRecordingFlatMemory detects DSPK_LONG_HOURS (default 24) hours
// of a Neuropixels 1.0 recording — a 60-s simulation repeated, read
// from memory — on DSPK_LONG_DEVICE (default auto: the GPU where there
// is one): the sample indices pass 2³¹ (a day at 30 kHz is 2.59·10⁹
// samples), every window equals the one a tile before shifted by the
// tile's length, and the resident memory after the first tenth of the
// windows grows by less than 256 MiB. A day takes minutes on an H200
// and a day on a CPU; behind DSPK_LONG=1.
func TestLongRecordingFlatMemory(t *testing.T) {
	if os.Getenv("DSPK_LONG") == "" {
		t.Skip("set DSPK_LONG=1 (and DSPK_LONG_HOURS, DSPK_LONG_DEVICE) to detect a day of simulated NP1 data")
	}
	hours := 24.0
	if v := os.Getenv("DSPK_LONG_HOURS"); v != "" {
		var err error
		if hours, err = strconv.ParseFloat(v, 64); err != nil || !(hours > 0) {
			t.Fatalf("DSPK_LONG_HOURS=%q", v)
		}
	}
	devSpec := os.Getenv("DSPK_LONG_DEVICE")
	if devSpec == "" {
		devSpec = "auto"
	}
	cfg := sim.DefaultConfig()
	cfg.Seconds = 60
	cfg.Seed = 24
	if hours < 0.05 {
		cfg.Seconds = 10 // a short check of the test itself
	}
	gen, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Close()
	n := gen.Samples()
	base := make([]int16, n*int64(gen.Channels()))
	if err := gen.ReadInt16(base, 0, int(n)); err != nil {
		t.Fatal(err)
	}
	rec := &tiled{base: base, c: gen.Channels(), n: n, rate: gen.SampleRate(), uvPerCnt: gen.MicrovoltsPerCount(),
		samples: int64(math.Round(hours * 3600 * gen.SampleRate()))}
	dev, reason, err := compute.Open(devSpec)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	pc := DefaultConfig()
	if n%int64(pc.BatchSize) != 0 {
		t.Fatalf("tile of %d samples is not a whole number of %d-sample windows", n, pc.BatchSize)
	}
	p, err := New(dev, rec, gen.Probe(), pc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sink := &longSink{t: t, tileW: int(n) / pc.BatchSize, tileN: n, last: p.Schedule().Windows - 1, prev: map[int]*detect.Spikes{}}
	start := time.Now()
	sum, err := p.Run(context.Background(), sink, RunOptions{Device: dev.String()})
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	t.Logf("%.2f h of NP1 on %s (%s): %d windows (%d compared with the tile before), %d spikes in %.1f s (%.0f× real time); passes %v",
		hours, dev, reason, sum.Windows, sink.compared, sum.Spikes, wall.Seconds(), sum.Seconds/wall.Seconds(), sum.PassSeconds)
	if sink.compared < sum.Windows-2*sink.tileW-2 {
		t.Errorf("only %d windows compared with the tile before, of %d", sink.compared, sum.Windows)
	}
	if rec.samples > 1<<31 && sink.maxSample <= 1<<31 {
		t.Errorf("last spike at sample %d; the recording has %d samples (past 2³¹)", sink.maxSample, rec.samples)
	}
	k := len(sink.rssAt) / 10
	var peak int64
	for _, v := range sink.rssAt[k:] {
		peak = max(peak, v)
	}
	t.Logf("resident memory (MiB) at windows %v: %v", sink.rssWindows, mib(sink.rssAt))
	if sink.rssAt[k] > 0 && peak > sink.rssAt[k]+256<<20 {
		t.Errorf("resident memory grew from %d MiB (window %d) to %d MiB", sink.rssAt[k]>>20, sink.rssWindows[k], peak>>20)
	}
}

func mib(v []int64) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = x >> 20
	}
	return out
}
