package motion

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"dspk/internal/emutest"
)

// The kernels of kernels/motion.cu run here on the CPU, compiled as C++
// with CUDA's builtins emulated (testdata/emulate.cc, fibers from
// ops/testdata/emulate.h), against the Go back end: this checks their
// indexing and arithmetic on machines without a GPU. It needs g++ (C++20)
// and skips without it.

// emu is the kernel emulator of this test binary.
var emu = emutest.New("motion", "-ffp-contract=off")

// TestMain removes the emulator's build directory after the tests.
func TestMain(m *testing.M) { emu.Main(m) }

// runEmu and put are short for emu.Run and emutest.Put.
var (
	runEmu = emu.Run
	put    = emutest.Put
)

// TestKernelScoresEmulated compares the scores kernel with the CPU
// scorer bit for bit (the fixed order of scoreLanes), on the odd sizes of
// scoreCases: rigid (one block of all rows, ±15) and blocks (±5), random
// and tie-prone G and R, cumulative shifts beyond ±rows, the output
// NaN-poisoned.
func TestKernelScoresEmulated(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 21))
	for _, tc := range scoreCases {
		G, R, S := randomScoreInput(rng, tc)
		var in bytes.Buffer
		put(&in, G)
		put(&in, R)
		put(&in, S)
		st := make([]int32, len(tc.starts))
		for i, v := range tc.starts {
			st[i] = int32(v)
		}
		put(&in, st)
		raw := runEmu(t, in.Bytes(), "scores", fmt.Sprint(tc.nb), fmt.Sprint(tc.rows), fmt.Sprint(tc.l), fmt.Sprint(tc.smax), fmt.Sprint(len(st)))
		n := len(st) * (2*tc.smax + 1) * tc.nb
		if len(raw) != 8*n {
			t.Fatalf("%d bytes of output, want %d", len(raw), 8*n)
		}
		want := make([]float64, n)
		cpuScorer{G: G, nb: tc.nb, rows: tc.rows}.scores(want, tc.starts, tc.l, tc.smax, S, R)
		for i := range n {
			got := binary.LittleEndian.Uint64(raw[8*i:])
			if got != math.Float64bits(want[i]) {
				t.Fatalf("case %+v: score %d = %v, CPU %v (bits differ)", tc, i, math.Float64frombits(got), want[i])
			}
		}
	}
}

// TestKernelBinEmulated compares the bin kernel with Add: spikes on and
// one ulp below every edge, beyond the probe, below the threshold, with a
// count above and below the capacity and a NaN.
func TestKernelBinEmulated(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 22))
	for _, C := range []int{8, 9, 37} {
		_, yc := testProbe(C)
		p := DefaultParams()
		g, err := newGeometry(yc, p)
		if err != nil {
			t.Fatal(err)
		}
		rowEdge := make([]float32, g.rows-1)
		for k := range rowEdge {
			rowEdge[k] = smallestFloat32(func(v float32) bool { return g.row(v) >= k+1 })
		}
		ampEdge := make([]float32, AmpBins-1)
		for k := range ampEdge {
			ampEdge[k] = smallestFloat32(func(v float32) bool { return ampCol(v, 9) >= k+1 })
		}
		var y, amp []float32
		for _, e := range rowEdge {
			y = append(y, e, math.Nextafter32(e, float32(math.Inf(-1))))
		}
		for _, e := range ampEdge {
			amp = append(amp, e, math.Nextafter32(e, 0))
		}
		n := max(len(y), len(amp)) + 700
		for len(y) < n {
			y = append(y, float32(yc[0]-50+rng.Float64()*(yc[len(yc)-1]-yc[0]+100)))
		}
		for len(amp) < n {
			amp = append(amp, float32(rng.Float64()*120))
		}
		rng.Shuffle(n, func(i, j int) { amp[i], amp[j] = amp[j], amp[i] })
		for _, tc := range []struct{ count, cap int }{{n, n}, {n + 50, n - 100}, {n - 300, n}} {
			var in bytes.Buffer
			put(&in, int32(tc.count))
			put(&in, y)
			put(&in, amp)
			put(&in, rowEdge)
			put(&in, ampEdge)
			raw := runEmu(t, in.Bytes(), "bin", fmt.Sprint(n), fmt.Sprint(tc.cap), fmt.Sprint(g.rows))
			cells := g.rows * AmpBins
			if len(raw) != 4*cells+8 {
				t.Fatalf("%d bytes of output", len(raw))
			}
			m := min(tc.count, tc.cap)
			e, _ := NewEstimator(nil, yc, 1, p)
			if err := e.Add(0, y[:m], amp[:m]); err != nil {
				t.Fatal(err)
			}
			for i := range cells {
				if got := binary.LittleEndian.Uint32(raw[4*i:]); got != e.counts[i] {
					t.Fatalf("C %d count %d cap %d: cell %d = %d, Add %d", C, tc.count, tc.cap, i, got, e.counts[i])
				}
			}
			if sp, bad := int32(binary.LittleEndian.Uint32(raw[4*cells:])), int32(binary.LittleEndian.Uint32(raw[4*cells+4:])); sp != int32(m) || bad != 0 {
				t.Fatalf("spikes %d bad %d, want %d 0", sp, bad, m)
			}
		}
		// A NaN depth and an infinite amplitude are counted as bad and not binned.
		var in bytes.Buffer
		put(&in, int32(3))
		put(&in, []float32{float32(math.NaN()), 100, 100})
		put(&in, []float32{20, float32(math.Inf(1)), 20})
		put(&in, rowEdge)
		put(&in, ampEdge)
		raw := runEmu(t, in.Bytes(), "bin", "3", "3", fmt.Sprint(g.rows))
		cells := g.rows * AmpBins
		var total uint32
		for i := range cells {
			total += binary.LittleEndian.Uint32(raw[4*i:])
		}
		if bad := binary.LittleEndian.Uint32(raw[4*cells+4:]); total != 1 || bad != 2 {
			t.Fatalf("NaN and Inf: %d binned, %d bad; want 1, 2", total, bad)
		}
	}
}
