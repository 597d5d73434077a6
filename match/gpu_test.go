package match

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
)

// GPU tests run the CUDA back end on the first GPU and skip, saying so,
// where there is none. They compare it with the CPU back end (itself
// checked against the float64 reference) on random problems of odd sizes
// and an NP1-sized window, with NaN-poisoned device buffers. The spike
// sets may differ only by spikes within 0.1 % of Th_learned and their
// neighbourhood (the filtering, a direct sum here and an FFT on the CPU,
// can differ in the last bit); amplitudes, coefficients and features agree to 1e-4 relative.

// deviceWindow returns a window on dev holding pr's data in device memory.
func deviceWindow(t testing.TB, dev *compute.Device, pr problem) *compute.Window {
	t.Helper()
	win, err := dev.NewWindow(pr.tm.C, pr.T, pr.tm.C)
	if err != nil {
		t.Fatal(err)
	}
	if dev.Kind() == compute.CPU {
		x, _ := win.Data()
		copy(x, pr.win)
		return win
	}
	err = dev.Do(func(c *compute.Ctx) error { return compute.Upload(c, win.DataMem().Ptr, pr.win) })
	if err != nil {
		t.Fatal(err)
	}
	win.MarkWritten()
	return win
}

// poison sizes the CUDA back end's per-window buffers for windows of T
// columns and fills them with NaN bits.
func poison(t *testing.T, m *Matcher, T int) {
	t.Helper()
	g := m.gpu
	err := g.dev.Do(func(c *compute.Ctx) error {
		if err := g.grow(c, m, T); err != nil {
			return err
		}
		for _, p := range []compute.Mem{g.x, g.bc, g.b, g.s, g.sbar, g.su, g.cnt, g.roundStart,
			g.ft, g.fu, g.fa, g.fq, g.gt, g.gu, g.ga, g.gq, g.feat} {
			if p.Ptr == 0 {
				continue
			}
			if err := c.Memset32(p.Ptr, 0x7fc00000, p.Bytes/4); err != nil {
				return err
			}
		}
		return c.Sync()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// gpuCases are random problems of odd sizes.
var gpuCases = []struct {
	name                   string
	seed                   uint64
	N, C, P, T, spikes, nt int
}{
	{"small", 1, 3, 6, 3, 400, 6, 21},
	{"overlapping", 2, 5, 8, 4, 700, 30, 21},
	{"one template one channel", 3, 1, 1, 1, 300, 5, 11},
	{"odd", 4, 7, 9, 6, 613, 17, 31},
	{"kilosort length", 5, 4, 10, 6, 1100, 20, 61},
	{"many rounds", 6, 2, 4, 3, 501, 60, 21},
	{"two rounds at most", 6, 2, 4, 3, 501, 60, 21},
	{"beyond a chunk", 7, 37, 29, 6, 6*gpuChunk + 77, 500, 61},
}

func TestGPUMatchesCPU(t *testing.T) {
	dev := gputest.Device(t)
	for _, tc := range gpuCases {
		t.Run(tc.name, func(t *testing.T) {
			pr := newProblem(tc.seed, tc.N, tc.C, tc.P, tc.T, tc.spikes, tc.nt)
			prm := DefaultParams()
			prm.NT, prm.NT0Min = tc.nt, tc.nt/3
			prm.NearestChans = min(prm.NearestChans, tc.C)
			if strings.HasPrefix(tc.name, "two rounds") {
				prm.MaxPeels = 2
			}
			cpu, err := NewMatcher(nil, pr.tm, pr.x, pr.y, prm)
			if err != nil {
				t.Fatal(err)
			}
			gpu, err := NewMatcher(dev, pr.tm, pr.x, pr.y, prm)
			if err != nil {
				t.Fatal(err)
			}
			defer gpu.Close()
			var want, got, again Spikes
			cpu.Match(&want, pr.win, 7, pr.owned)
			if want.Len() == 0 {
				t.Fatal("no spikes found")
			}
			gpu.Match(&got, pr.win, 7, pr.owned)
			if odd := compareSpikes(t, &want, &got, prm.ThLearned, 1e-4, 1e-4, 1e-3, int64(2*prm.NT)); odd > 0 {
				t.Logf("%d of %d spikes near the threshold differ", odd, want.Len())
			}
			// Again on NaN-poisoned buffers: the same spikes.
			poison(t, gpu, pr.T)
			gpu.Match(&again, pr.win, 7, pr.owned)
			if fmt.Sprint(got) != fmt.Sprint(again) {
				t.Fatal("matching the window again on poisoned buffers gave other spikes")
			}
			if gpu.Rounds() == 0 {
				t.Fatal("no rounds")
			}
		})
	}
}

// TestGPUMatchWindowNP1 matches an NP1-sized window in device memory and
// compares with the CPU back end's MatchWindow of the same data.
func TestGPUMatchWindowNP1(t *testing.T) {
	dev := gputest.Device(t)
	pr := np1Problem(3, 250, 2000)
	prm := DefaultParams()
	cpuDev, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := NewMatcher(cpuDev, pr.tm, pr.x, pr.y, prm)
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := NewMatcher(dev, pr.tm, pr.x, pr.y, prm)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	cw, gw := deviceWindow(t, cpuDev, pr), deviceWindow(t, dev, pr)
	defer cw.Close()
	defer gw.Close()
	var want, got Spikes
	if err := cpu.MatchWindow(&want, cw, 123456, pr.owned); err != nil {
		t.Fatal(err)
	}
	poison(t, gpu, pr.T)
	if err := gpu.MatchWindow(&got, gw, 123456, pr.owned); err != nil {
		t.Fatal(err)
	}
	odd := compareSpikes(t, &want, &got, prm.ThLearned, 1e-4, 1e-4, 1e-3, int64(2*prm.NT))
	t.Logf("%d spikes, %d rounds (CPU %d); %d near the threshold differ", want.Len(), gpu.Rounds(), cpu.Rounds(), odd)
	if want.Len() < 1500 {
		t.Fatalf("only %d spikes of 2000 planted", want.Len())
	}
	// The window is unchanged on the device.
	x, err := gw.Data()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range x {
		if v != pr.win[i] {
			t.Fatalf("window value %d changed: %g, was %g", i, v, pr.win[i])
		}
	}
}

// TestGPUMatchReuse matches windows of two lengths with one matcher, and
// a window of a second matcher in between: nothing carries over.
func TestGPUMatchReuse(t *testing.T) {
	dev := gputest.Device(t)
	prm := DefaultParams()
	prm.NT, prm.NT0Min, prm.NearestChans = 21, 7, 4
	a := newProblem(21, 3, 6, 3, 900, 10, 21)
	b := newProblem(21, 3, 6, 3, 500, 10, 21)
	o := newProblem(22, 5, 6, 3, 700, 10, 21)
	m, err := NewMatcher(dev, a.tm, a.x, a.y, prm)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m2, err := NewMatcher(dev, o.tm, o.x, o.y, prm)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	var first, second, other, again Spikes
	m.Match(&first, a.win, 0, a.owned)
	m.Match(&second, b.win, 0, b.owned)
	m2.Match(&other, o.win, 0, o.owned)
	m.Match(&again, a.win, 0, a.owned)
	if fmt.Sprint(first) != fmt.Sprint(again) || first.Len() == 0 || second.Len() == 0 || other.Len() == 0 {
		t.Fatalf("spikes %d, %d, %d, again %d", first.Len(), second.Len(), other.Len(), again.Len())
	}
	for _, v := range first.Features {
		if math.IsNaN(float64(v)) {
			t.Fatal("NaN feature")
		}
	}
}

// TestMatchWindowCPU checks MatchWindow on the CPU gives Match's spikes and
// refuses windows that do not fit.
func TestMatchWindowCPU(t *testing.T) {
	pr := newProblem(51, 4, 7, 3, 777, 12, 21)
	prm := DefaultParams()
	prm.NT, prm.NT0Min, prm.NearestChans = 21, 7, 5
	dev, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMatcher(dev, pr.tm, pr.x, pr.y, prm)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	win := deviceWindow(t, dev, pr)
	defer win.Close()
	var want, got Spikes
	m.Match(&want, pr.win, 40, pr.owned)
	if err := m.MatchWindow(&got, win, 40, pr.owned); err != nil {
		t.Fatal(err)
	}
	if want.Len() == 0 || fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("MatchWindow gave %d spikes, Match %d", got.Len(), want.Len())
	}
	if err := m.MatchWindow(&got, win, 40, pr.T); err == nil {
		t.Fatal("no error for owned beyond the window")
	}
	other, _ := dev.NewWindow(pr.tm.C+1, pr.T, pr.tm.C+1)
	defer other.Close()
	if err := m.MatchWindow(&got, other, 40, pr.owned); err == nil {
		t.Fatal("no error for a window of other channels")
	}
}
