package pipeline

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/probe"
	"dspk/recording"
)

// TestMedianOf checks the selection median against numpy's rule on a
// sorted copy, for odd and even lengths, ties included.
func TestMedianOf(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 4, 7, 10, 101, 1000, 15000} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.IntN(50)) // many ties
		}
		s := slices.Clone(x)
		slices.Sort(s)
		want := float64(s[n/2])
		if n%2 == 0 {
			want = (float64(s[n/2-1]) + float64(s[n/2])) / 2
		}
		if got := medianOf(x); got != want {
			t.Errorf("n=%d: median %v, want %v", n, got, want)
		}
	}
}

// TestNoiseLevels checks the noise levels of white noise (SD 10 counts,
// 8 channels, 30 s) with and without large spikes: each is the SD of the
// high-passed noise (the band above 300 Hz holds all but about 2 % of
// white noise's power at 30 kHz) within 5 %, and spikes firing at 20 Hz
// on a quarter of the channels change it by under 3 %, where they add about 20 %
// to the SD.
func TestNoiseLevels(t *testing.T) {
	const C, fs, dur = 8, 30000.0, 30
	n := int(fs * dur)
	r := rand.New(rand.NewPCG(1, 2))
	noise := make([]int16, n*C)
	for i := range noise {
		noise[i] = int16(math.Round(10 * r.NormFloat64()))
	}
	spiky := slices.Clone(noise)
	for s := 100; s+40 < n; s += 1500 {
		for k := range 40 {
			v := -120 * math.Exp(-0.5*math.Pow(float64(k-10)/3, 2))
			for c := range C / 4 {
				spiky[(s+k)*C+c] += int16(v)
			}
		}
	}
	pr := &probe.Probe{Name: "line", NChanFile: C}
	for c := range C {
		pr.X, pr.Y, pr.Shank, pr.ChanMap = append(pr.X, 0), append(pr.Y, 20*float64(c)), append(pr.Shank, 0), append(pr.ChanMap, c)
	}
	cfg := DefaultSortConfig()
	cfg.DoCAR = false // the median of 8 channels would take a share of each one's noise
	quiet, err := NoiseLevels(recording.NewMemory("noise", noise, C, fs, nil), pr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	loud, err := NoiseLevels(recording.NewMemory("spiky", spiky, C, fs, nil), pr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := 10 * math.Sqrt(0.98)
	for c := range C {
		if q := float64(quiet[c]); math.Abs(q-want) > 0.05*want {
			t.Errorf("channel %d: noise level %.3f, want %.3f ± 5 %%", c, q, want)
		}
		if d := math.Abs(float64(loud[c]-quiet[c])) / float64(quiet[c]); d > 0.03 {
			t.Errorf("channel %d: spikes change the level by %.1f %% (%.3f → %.3f)", c, 100*d, quiet[c], loud[c])
		}
	}
	// The same chunks every run.
	again, _ := NoiseLevels(recording.NewMemory("noise", noise, C, fs, nil), pr, cfg)
	if !slices.Equal(again, quiet) {
		t.Errorf("noise levels differ between runs: %v, %v", quiet, again)
	}
	if _, err := NoiseLevels(recording.NewMemory("short", noise[:5000*C], C, fs, nil), pr, cfg); !errors.Is(err, ErrNoiseTooShort) {
		t.Errorf("a 5000-sample recording: %v, want ErrNoiseTooShort", err)
	}
}
