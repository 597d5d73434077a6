package stream

import (
	"math"
	"time"
)

// latencyBin is the resolution of the latency histogram; latencies up to
// latencyBins bins are counted exactly to it, longer ones in the last.
const (
	latencyBin  = 50 * time.Microsecond
	latencyBins = 20000 // 1 s
)

// maxLateListed bounds the late blocks Stats lists (all are counted).
const maxLateListed = 1000

// Stats are a stream's figures, as stream.json holds them.
type Stats struct {
	// Samples and Spikes are the samples read and the spikes given out;
	// UnitSpikes the spikes per unit.
	Samples    int64   `json:"samples"`
	Spikes     int64   `json:"spikes"`
	UnitSpikes []int64 `json:"unit_spikes"`
	// Blocks is the number of blocks matched; LateBlocks those whose
	// spikes came out after the deadline (DeadlineMs), the first
	// thousand listed in Late.
	Blocks     int         `json:"blocks"`
	LateBlocks int         `json:"late_blocks"`
	DeadlineMs float64     `json:"deadline_ms"`
	Late       []LateBlock `json:"late"`
	// LatencyMs are the percentiles of the spikes' latencies (from the
	// arrival of the trough's sample to the spike's output), in ms:
	// "p50", "p90", "p99", "p99.9" and "max".
	LatencyMs map[string]float64 `json:"latency_ms"`
	// BlockLatencyMs are those of the blocks (from the arrival of the
	// last sample a block needs to its spikes' output).
	BlockLatencyMs map[string]float64 `json:"block_latency_ms"`
	// WallSeconds is the time the stream ran; DataSeconds the recording
	// time it covered.
	WallSeconds float64 `json:"wall_seconds"`
	DataSeconds float64 `json:"data_seconds"`
	// MaxBacklogSeconds is the most recording the stream held read but
	// not yet matched: how far behind its source it fell (a file read as
	// fast as it goes keeps it near the largest block, 0.25 s).
	MaxBacklogSeconds float64 `json:"max_backlog_seconds"`
	// First is the stream sample matching started at (0 unless the
	// stream learned its units first); Learned what the learning did.
	First   int64    `json:"first_sample"`
	Learned *Learned `json:"learned,omitempty"`
	// MotionUm is the mean shift (µm) the stream applied in each 2-s
	// window of the motion estimate up to its end: the sort's estimate,
	// then the TrackedWindows the stream estimated itself; empty for a
	// sort without motion correction.
	MotionUm       []float64 `json:"motion_um,omitempty"`
	TrackedWindows int       `json:"tracked_windows"`

	deadline        time.Duration
	spikeHist       []int64
	blockHist       []int64
	spikeMax, blMax time.Duration
}

func newStats(deadline time.Duration) *Stats {
	return &Stats{deadline: deadline, DeadlineMs: ms(deadline), spikeHist: make([]int64, latencyBins), blockHist: make([]int64, latencyBins)}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func binOf(d time.Duration) int { return min(latencyBins-1, max(0, int(d/latencyBin))) }

// spike counts one spike given out.
func (s *Stats) spike(sp Spike) {
	s.Spikes++
	for int(sp.Unit) >= len(s.UnitSpikes) {
		s.UnitSpikes = append(s.UnitSpikes, 0)
	}
	s.UnitSpikes[sp.Unit]++
	s.spikeHist[binOf(sp.Latency)]++
	s.spikeMax = max(s.spikeMax, sp.Latency)
}

// backlog notes that n samples are read and not yet matched.
func (s *Stats) backlog(n int64, rate float64) {
	s.MaxBacklogSeconds = max(s.MaxBacklogSeconds, float64(n)/rate)
}

// block counts one matched block and its latency.
func (s *Stats) block(start int64, n int, lat time.Duration, opt Options) {
	s.Blocks++
	s.blockHist[binOf(lat)]++
	s.blMax = max(s.blMax, lat)
	if lat > s.deadline {
		s.LateBlocks++
		lb := LateBlock{Start: start, Samples: n, LatencyMs: ms(lat)}
		if len(s.Late) < maxLateListed {
			s.Late = append(s.Late, lb)
		}
		if opt.Late != nil {
			opt.Late(lb)
		}
	}
}

// summarise fills the percentiles.
func (s *Stats) summarise() {
	s.LatencyMs = percentiles(s.spikeHist, s.spikeMax)
	s.BlockLatencyMs = percentiles(s.blockHist, s.blMax)
}

// Percentile returns the q-th percentile (0–100) of the spikes' latencies
// so far, to the histogram's 50 µs (the upper edge of its bin).
func (s *Stats) Percentile(q float64) time.Duration {
	return percentile(s.spikeHist, q, s.spikeMax)
}

func percentiles(h []int64, mx time.Duration) map[string]float64 {
	return map[string]float64{"p50": ms(percentile(h, 50, mx)), "p90": ms(percentile(h, 90, mx)),
		"p99": ms(percentile(h, 99, mx)), "p99.9": ms(percentile(h, 99.9, mx)), "max": ms(mx)}
}

// percentile returns the upper edge of the bin holding the q-th
// percentile of h (at most mx), 0 for an empty histogram.
func percentile(h []int64, q float64, mx time.Duration) time.Duration {
	var n int64
	for _, v := range h {
		n += v
	}
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q / 100 * float64(n)))
	rank = max(rank, 1)
	var c int64
	for i, v := range h {
		c += v
		if c >= rank {
			return min(mx, time.Duration(i+1)*latencyBin)
		}
	}
	return mx
}
