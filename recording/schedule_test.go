package recording

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// ksBatches is Kilosort4's rule written out plainly (kilosort4.md §3):
// n_batches = ceil(n/NT); a last batch with fewer than nt real samples is
// dropped and imax reduced; batch i reads [i·NT − nt, i·NT + NT + nt)
// clipped to [imin, imax).
func ksBatches(imin, imax int64, nt, pad int) (batches int, end int64, reads [][2]int64) {
	n := imax - imin
	batches = int((n + int64(nt) - 1) / int64(nt))
	if batches > 0 && n-int64(batches-1)*int64(nt) < int64(pad) {
		batches--
		imax = imin + int64(batches)*int64(nt)
	}
	for i := range batches {
		a := max(imin+int64(i)*int64(nt)-int64(pad), imin)
		b := min(imin+int64(i+1)*int64(nt)+int64(pad), imax)
		reads = append(reads, [2]int64{a, b})
	}
	return batches, imax, reads
}

func TestScheduleRule(t *testing.T) {
	t.Parallel()
	const nt, pad = 100, 7
	type tc struct {
		name       string
		start, end int64
		windows    int // -1: error
	}
	cases := []tc{
		{"shorter than pad", 0, pad - 1, -1},
		{"empty", 5, 5, -1},
		{"exactly pad", 0, pad, 1},
		{"shorter than one window", 0, nt - 1, 1},
		{"exactly one window", 0, nt, 1},
		{"one sample over (dropped)", 0, nt + 1, 1},
		{"last shorter than pad (dropped)", 0, 3*nt + pad - 1, 3},
		{"last exactly pad (kept)", 0, 3*nt + pad, 4},
		{"offset start", 1234, 1234 + 2*nt + 50, 3},
		{"offset start, dropped", 1234, 1234 + 2*nt + 3, 2},
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 200 {
		s := rng.Int64N(1000)
		cases = append(cases, tc{"random", s, s + rng.Int64N(20*nt), 0})
	}
	for _, c := range cases {
		s, err := NewSchedule(c.start, c.end, nt, pad)
		wantN, wantEnd, reads := ksBatches(c.start, c.end, nt, pad)
		if wantN == 0 {
			if err == nil {
				t.Errorf("%s [%d,%d): no error", c.name, c.start, c.end)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s [%d,%d): %v", c.name, c.start, c.end, err)
		}
		if c.windows > 0 && s.Windows != c.windows {
			t.Errorf("%s: %d windows, want %d", c.name, s.Windows, c.windows)
		}
		if s.Windows != wantN || s.End != wantEnd || s.Start != c.start || s.Len() != nt+2*pad {
			t.Fatalf("%s [%d,%d): %+v, want %d windows ending at %d", c.name, c.start, c.end, s, wantN, wantEnd)
		}
		owner := make([]int, s.End-s.Start)
		for i := range owner {
			owner[i] = -1
		}
		for i := range s.Windows {
			w := s.Window(i)
			if w.Index != i || w.ReadStart != reads[i][0] || w.ReadEnd != reads[i][1] {
				t.Fatalf("%s: window %d %+v, want reads %v", c.name, i, w, reads[i])
			}
			if w.Owned() < pad || w.Owned() > nt {
				t.Fatalf("%s: window %d owns %d samples", c.name, i, w.Owned())
			}
			// Column Pad+j is file sample OwnStart+j, and Offset places ReadStart.
			if w.OwnStart-int64(pad)+int64(w.Offset) != w.ReadStart || w.Offset < 0 || w.Offset > pad {
				t.Fatalf("%s: window %d offset %d", c.name, i, w.Offset)
			}
			for x := w.OwnStart; x < w.OwnEnd; x++ {
				if owner[x-s.Start] != -1 {
					t.Fatalf("%s: sample %d owned by windows %d and %d", c.name, x, owner[x-s.Start], i)
				}
				owner[x-s.Start] = i
			}
		}
		for x, o := range owner {
			if o == -1 {
				t.Fatalf("%s: sample %d owned by no window", c.name, s.Start+int64(x))
			}
		}
	}
	for _, bad := range [][4]int64{{0, 10, 0, 1}, {0, 10, 5, 0}, {0, 10, 2, 3}, {-1, 10, 5, 1}, {10, 5, 5, 1}} {
		if _, err := NewSchedule(bad[0], bad[1], int(bad[2]), int(bad[3])); err == nil || !strings.HasPrefix(err.Error(), "recording: ") {
			t.Errorf("NewSchedule%v: %v", bad, err)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Window out of range did not panic")
			}
		}()
		s, _ := NewSchedule(0, 10, 5, 1)
		s.Window(s.Windows)
	}()
	if s, err := NewSchedule(0, 1<<30, ks.BatchSize, ks.NT); err != nil || s.Len() != 60122 {
		t.Errorf("Kilosort4 defaults: %v %v", s, err)
	}
}

// naiveWindow builds padded window i one value at a time: column j is
// file sample OwnStart−Pad+j clamped to [Start, End).
func naiveWindow(rec Recording, s Schedule, i int) []int16 {
	c := rec.Channels()
	w := s.Window(i)
	out := make([]int16, s.Len()*c)
	one := make([]int16, c)
	for j := range s.Len() {
		x := min(max(w.OwnStart-int64(s.Pad)+int64(j), s.Start), s.End-1)
		if err := rec.ReadInt16(one, x, 1); err != nil {
			panic(err)
		}
		copy(out[j*c:], one)
	}
	return out
}

func TestReadWindowMatchesNaive(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []int{1, 3, 16} {
		for _, sz := range [][2]int{{1, 1}, {7, 3}, {10, 10}, {13, 5}, {64, 61}} {
			nt, pad := sz[0], sz[1]
			samples := rng.IntN(6*nt) + pad + 2
			data := make([]int16, samples*c)
			for i := range data {
				data[i] = int16(rng.IntN(2001) - 1000)
			}
			rec := NewMemory("mem", data, c, 1, nil)
			start := rng.Int64N(int64(samples - pad))
			end := start + int64(pad) + rng.Int64N(int64(samples)-start-int64(pad)+1)
			s, err := NewSchedule(start, end, nt, pad)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]int16, s.Len()*c)
			for i := range s.Windows {
				for k := range dst {
					dst[k] = 32767 // never a data value: unwritten columns show
				}
				if err := ReadWindow(rec, s, i, dst); err != nil {
					t.Fatal(err)
				}
				want := naiveWindow(rec, s, i)
				for k := range want {
					if dst[k] != want[k] {
						t.Fatalf("c=%d nt=%d pad=%d [%d,%d) window %d: value %d (t=%d) = %d, want %d",
							c, nt, pad, start, end, i, k, k/c, dst[k], want[k])
					}
				}
			}
		}
	}
}

func TestReadWindowErrors(t *testing.T) {
	t.Parallel()
	rec := NewMemory("short-rec", make([]int16, 2*50), 2, 1, nil)
	s, err := NewSchedule(0, 80, 20, 3) // beyond the recording's 50 samples
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]int16, s.Len()*2)
	if err := ReadWindow(rec, s, 1, dst); err != nil {
		t.Fatal(err)
	}
	err = ReadWindow(rec, s, 2, dst)
	we, ok := err.(*WindowError)
	if !ok || we.Index != 2 || we.Start != 37 || we.End != 63 || !strings.Contains(err.Error(), "short-rec") || !strings.Contains(err.Error(), "window 2") {
		t.Errorf("error %#v", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.HasPrefix(r.(string), "recording: ") {
			t.Errorf("short dst: panic %v", r)
		}
	}()
	ReadWindow(rec, s, 0, dst[1:])
}
