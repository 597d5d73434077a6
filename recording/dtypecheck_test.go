package recording

import (
	"math/rand/v2"
	"testing"
)

// TestCheckDType checks the sign-bit test on noise read right, read as
// the other 16-bit type, with large DC offsets read right, and on files
// of one sample and of fewer samples than the stretches.
func TestCheckDType(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	const C = 5
	gen := func(n int, dc float64, flip bool) Recording {
		d := make([]int16, n*C)
		for i := range d {
			v := int16(max(-32768, min(32767, dc+rng.NormFloat64()*40)))
			if flip {
				v = int16(uint16(v) ^ 0x8000)
			}
			d[i] = v
		}
		return NewMemory("m", d, C, 30000, nil)
	}
	rows := []int{0, 1, 3} // row 4 and 2 unused
	for _, c := range []struct {
		name          string
		rec           Recording
		wrong, suspct bool
	}{
		{"noise", gen(100000, 0, false), false, false},
		{"noise read as the other type", gen(100000, 0, true), true, false},
		{"short noise read as the other type", gen(300, 0, true), true, false},
		{"one sample read as the other type", gen(1, 0, true), true, false},
		{"DC 20000 read right", gen(50000, 20000, false), false, false},
		{"DC -26000 read right", gen(50000, -26000, false), false, true},
		{"DC 3000 read as the other type", gen(50000, 3000, true), true, false},
	} {
		got, err := CheckDType(c.rec, rows)
		if err != nil {
			t.Fatal(err)
		}
		if got.Wrong() != c.wrong || got.Suspect() != c.suspct {
			t.Errorf("%s: wrong %v, suspect %v; want %v, %v (%s)", c.name, got.Wrong(), got.Suspect(), c.wrong, c.suspct, got)
		}
		if n := min(c.rec.Samples(), dtypeChunks*dtypeChunkLen); got.Values != n*int64(len(rows)) {
			t.Errorf("%s: %d values sampled, want %d", c.name, got.Values, n*int64(len(rows)))
		}
	}
	if c, err := CheckDType(NewMemory("e", nil, C, 30000, nil), rows); err != nil || c.Values != 0 || c.Wrong() || c.Suspect() {
		t.Errorf("empty recording: %+v %v", c, err)
	}
}
