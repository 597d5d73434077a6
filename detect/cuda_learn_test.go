package detect

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
	"dspk/probe"
)

// TestGPUClipsMatchCPU finds the clips of whitened windows on the GPU
// (Learner.AddWindow of a device window) and on the CPU (FindClips of the
// same values) and requires them bit for bit, in the same order: an NP1
// window with thousands of injected spikes, small odd windows, ties of
// |x| (repeated values) and a clip list too small for the window (it grows
// and the window is redone). The device buffers start NaN-poisoned.
func TestGPUClipsMatchCPU(t *testing.T) {
	dev := gputest.Device(t)
	prm := DefaultParams()
	type tc struct {
		name    string
		p       *probe.Probe
		T, n    int
		ties    bool
		smallCp int
	}
	small := &probe.Probe{Name: "small", NChanFile: 13}
	for i := range 13 {
		small.X = append(small.X, float64(16*(i%2)))
		small.Y = append(small.Y, float64(20*i))
		small.Shank = append(small.Shank, 0)
		small.ChanMap = append(small.ChanMap, i)
	}
	for _, c := range []tc{
		{"np1", np1Probe(), 60000 + 2*prm.NT, 4000, false, 0},
		{"small_odd", small, 2*prm.NT + 1777, 40, false, 0},
		{"small_ties", small, 2*prm.NT + 3001, 60, true, 0},
		{"np1_grow", np1Probe(), 20000 + 2*prm.NT, 2000, false, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.T), 9))
			sp := randomSpikes(rng, c.p, c.n, 0, c.T, 6, 40, prm.NTemplates, true)
			x := synthWindow(rng, c.p, c.T, synthShapes(prm.NTemplates, prm.NT, prm.NT0Min), prm.NT0Min, sp, 1, 20)
			if c.ties {
				for i := range x {
					x[i] = float32(math.Round(float64(x[i]) * 2)) // many equal |x|
				}
			}
			C := c.p.Len()
			want := FindClips(nil, x, C, c.T, prm)
			win := deviceWindow(t, dev, C, c.T, x)
			l := NewLearner(C, c.T, prm)
			defer l.Close()
			var err error
			l.gpu, err = newGPUClipFinder(dev, C, c.T, prm)
			if err != nil {
				t.Fatal(err)
			}
			err = dev.Do(func(cc *compute.Ctx) error {
				if c.smallCp > 0 {
					if err := l.gpu.grow(cc, c.smallCp); err != nil {
						return err
					}
				}
				for _, m := range []compute.Mem{l.gpu.flag, l.gpu.keys, l.gpu.clips} {
					if err := cc.Memset8(m.Ptr, 0xff, m.Bytes); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			n, err := l.AddWindow(win)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d clips (CPU %d)", n, len(want)/prm.NT)
			if len(want) == 0 {
				t.Fatal("no clips: the case tests nothing")
			}
			got := l.Clips()
			if len(got) != len(want) {
				t.Fatalf("GPU %d clip values, CPU %d", len(got), len(want))
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("clip %d value %d: GPU %g, CPU %g", i/prm.NT, i%prm.NT, got[i], want[i])
				}
			}
			// A second window through the same learner appends the same
			// clips again.
			if _, err := l.AddWindow(win); err != nil {
				t.Fatal(err)
			}
			if l.Len() < 2*n && !l.Full() {
				t.Errorf("second window: %d clips kept after %d", l.Len(), n)
			}
			if !l.Full() && !slices.Equal(l.Clips()[len(want):], want) {
				t.Error("second window's clips differ")
			}
		})
	}
}

// TestLearnerAddWindowCPU checks that AddWindow of a CPU window is Add of
// its data.
func TestLearnerAddWindowCPU(t *testing.T) {
	prm := DefaultParams()
	p := np1Probe()
	T := 20000 + 2*prm.NT
	rng := rand.New(rand.NewPCG(3, 4))
	sp := randomSpikes(rng, p, 800, 0, T, 6, 40, prm.NTemplates, true)
	x := synthWindow(rng, p, T, synthShapes(prm.NTemplates, prm.NT, prm.NT0Min), prm.NT0Min, sp, 1, 20)
	cpu, _, _ := compute.Open("cpu")
	win, err := cpu.NewWindow(p.Len(), T, p.Len())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := win.Data()
	copy(data, x)
	a, b := NewLearner(p.Len(), T, prm), NewLearner(p.Len(), T, prm)
	n, err := a.AddWindow(win)
	if err != nil || n == 0 || n != b.Add(x) || !slices.Equal(a.Clips(), b.Clips()) {
		t.Fatalf("AddWindow: %d clips, %v; Add: %d", n, err, b.Len())
	}
	if err := a.Close(); err != nil {
		t.Error(err)
	}
}
