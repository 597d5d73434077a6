package match

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"dspk/internal/emutest"
)

// The kernels of kernels/match.cu run here on the CPU, compiled as C++
// with CUDA's builtins emulated (testdata/emulate.cc, fibers from
// ops/testdata/emulate.h) in the order the CUDA back end launches them,
// against the Go back end: this checks their indexing, arithmetic and
// rounding on machines without a GPU. It needs g++ (C++20) and skips
// without it.

// emu is the kernel emulator of this test binary.
var emu = emutest.New("match")

// TestMain removes the emulator's build directory after the tests.
func TestMain(m *testing.M) { emu.Main(m) }

// emulateMatch runs the CUDA back end's kernels on x with m's tables
// (blocks blocks for the grid-stride kernels) and returns the spikes as
// Match would append them, and the rounds.
func emulateMatch(t *testing.T, m *Matcher, x []float32, ownStart int64, owned, blocks int) (*Spikes, int) {
	t.Helper()
	tb := buildTables(m)
	T := len(x) / m.c
	var in bytes.Buffer
	emutest.Put(&in, x, m.tm.WPCA, tb.used, tb.inv, m.nm, tb.nbrOff, tb.nbr, tb.nbrIdx, tb.kcOff, tb.kc,
		tb.chanIdx, tb.utOff, tb.ut, m.icc, m.best, m.tm.U, tb.supOff, tb.sup, tb.coef)
	nc := m.prm.NearestChans
	th2 := m.prm.ThLearned * m.prm.ThLearned
	out := emu.Run(t, in.Bytes(), m.n, m.c, m.p, T, m.nt, nc, owned, m.prm.MaxPeels, fmt.Sprintf("%.17g", th2),
		len(tb.nbr), len(tb.kc), len(tb.ut), blocks, len(tb.sup))
	r := bytes.NewReader(out)
	st := make([]int32, stLen)
	emutest.Get(t, r, st)
	if st[stOver] != 0 {
		t.Fatalf("emulator: spike store overflowed")
	}
	n := int(st[stN])
	ts, us := make([]int32, n), make([]int32, n)
	as, qs := make([]float64, n), make([]float64, n)
	feat := make([]float32, n*nc*m.p)
	for _, v := range []any{ts, us, as, qs, feat} {
		emutest.Get(t, r, v)
	}
	if r.Len() != 0 {
		t.Fatalf("emulator: %d bytes left over", r.Len())
	}
	m.found = m.found[:0]
	for i := range n {
		m.found = append(m.found, spike{t: int(ts[i]), u: us[i], a: as[i], q: qs[i]})
	}
	var s Spikes
	// appendDevice reads the features from the CUDA back end's host copy.
	m.gpu = &cudaMatcher{hostF: feat}
	m.appendDevice(&s, ownStart)
	m.gpu = nil
	for _, v := range feat {
		if math.IsNaN(float64(v)) {
			t.Fatal("emulator: a feature was not written")
		}
	}
	return &s, int(st[stRounds])
}

// TestKernelsEmulated compares the CUDA back end's kernels, emulated, with
// the CPU back end on random problems of odd sizes: the same spikes, with
// amplitudes, coefficients and features to float32 rounding.
func TestKernelsEmulated(t *testing.T) {
	for _, tc := range []struct {
		name                           string
		seed                           uint64
		N, C, P, T, spikes, nt, blocks int
	}{
		{"small", 1, 3, 6, 3, 400, 6, 21, 2},
		{"overlapping", 2, 5, 8, 4, 700, 30, 21, 3},
		{"one template one channel", 3, 1, 1, 1, 300, 5, 11, 1},
		{"odd", 4, 7, 9, 6, 613, 17, 31, 5},
		{"kilosort length", 5, 4, 12, 6, 1100, 20, 61, 2},
		{"many rounds", 6, 2, 4, 3, 501, 60, 21, 3},
		{"two rounds at most", 6, 2, 4, 3, 501, 60, 21, 2},
		{"crowded", 8, 24, 20, 5, 1100, 80, 41, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := newProblem(tc.seed, tc.N, tc.C, tc.P, tc.T, tc.spikes, tc.nt)
			prm := DefaultParams()
			prm.NT, prm.NT0Min = tc.nt, tc.nt/3
			prm.NearestChans = min(prm.NearestChans, tc.C)
			if strings.HasPrefix(tc.name, "two rounds") {
				prm.MaxPeels = 2
			}
			m, err := NewMatcher(nil, pr.tm, pr.x, pr.y, prm)
			if err != nil {
				t.Fatal(err)
			}
			var want Spikes
			m.Match(&want, pr.win, 5, pr.owned)
			wantRounds := m.Rounds()
			got, rounds := emulateMatch(t, m, pr.win, 5, pr.owned, tc.blocks)
			if want.Len() == 0 {
				t.Fatal("no spikes found")
			}
			compareSpikes(t, &want, got, prm.ThLearned, 1e-5, 1e-5, 0, 0)
			t.Logf("%d spikes, %d rounds", want.Len(), rounds)
			if rounds != wantRounds {
				t.Fatalf("%d rounds, CPU %d", rounds, wantRounds)
			}
		})
	}
}

// TestKernelsEmulatedTies plants identical spikes of one template closer
// than nt on a silent window, so that equal maxima make several spikes of
// one round overlap, and compares the emulated kernels with the CPU.
func TestKernelsEmulatedTies(t *testing.T) {
	const nt = 21
	pr := newProblem(9, 2, 5, 3, 400, 0, nt)
	clear(pr.win)
	for _, t0 := range []int{60, 70, 200, 215, 230} {
		pr.plant(t0, 1, 2, nt)
	}
	prm := DefaultParams()
	prm.NT, prm.NT0Min, prm.NearestChans = nt, 7, 4
	m, err := NewMatcher(nil, pr.tm, pr.x, pr.y, prm)
	if err != nil {
		t.Fatal(err)
	}
	var want Spikes
	m.Match(&want, pr.win, 0, pr.owned)
	got, rounds := emulateMatch(t, m, pr.win, 0, pr.owned, 2)
	compareSpikes(t, &want, got, prm.ThLearned, 1e-5, 1e-5, 0, 0)
	if rounds != m.Rounds() || want.Len() == 0 {
		t.Fatalf("%d rounds, CPU %d; %d spikes", rounds, m.Rounds(), want.Len())
	}
	t.Logf("%d spikes in %d rounds: samples %v", want.Len(), rounds, want.Sample)
}
