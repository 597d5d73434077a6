package quality

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// memRaw is a RawReader over int16 samples held in memory.
type memRaw struct {
	data []int16
	nc   int
}

func (m memRaw) Channels() int  { return m.nc }
func (m memRaw) Samples() int64 { return int64(len(m.data) / m.nc) }
func (m memRaw) ReadInt16(dst []int16, start int64, n int) error {
	if start < 0 || start+int64(n) > m.Samples() {
		return errors.New("read outside the recording")
	}
	copy(dst, m.data[int(start)*m.nc:(int(start)+n)*m.nc])
	return nil
}

// refRawSNR is Bombcell's signalToNoiseRatio written out plainly in
// float64: the line fitted by the normal equations over 0…n−1, the
// medians by sorting.
func refRawSNR(raw memRaw, row int, times []int64) float64 {
	var ok []int64
	for _, t := range times {
		if t > 20 && t < raw.Samples()-41 {
			ok = append(ok, t)
		}
	}
	if len(ok) > 100 {
		pick := make([]int64, 100)
		for i := range pick {
			pick[i] = ok[int(float64(i)*float64(len(ok)-1)/99)]
		}
		pick[99] = ok[len(ok)-1]
		ok = pick
	}
	mean := make([]float64, 61)
	for _, t := range ok {
		y := make([]float64, 61)
		var sx, sy, sxx, sxy float64
		for k := range y {
			y[k] = float64(raw.data[(int(t)-21+k)*raw.nc+row])
			x := float64(k)
			sx, sy, sxx, sxy = sx+x, sy+y[k], sxx+x*x, sxy+x*y[k]
		}
		b := (61*sxy - sx*sy) / (61*sxx - sx*sx)
		a := (sy - b*sx) / 61
		for k := range y {
			mean[k] += (y[k] - a - b*float64(k)) / float64(len(ok))
		}
	}
	base := slices.Clone(mean[:10])
	bm := 0.0
	for _, v := range base {
		bm += v / 10
	}
	sig := 0.0
	for _, v := range mean {
		sig = math.Max(sig, math.Abs(v-bm))
	}
	med := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
	}
	m := med(base)
	for k := range base {
		base[k] = math.Abs(base[k] - m)
	}
	return sig / med(base)
}

// TestRawSNR checks raw_snr against the plain reference on a random
// recording of an odd channel count with spikes planted on a channel
// that is not the template's largest |value| but its largest
// peak-to-peak, through a channel map, with spikes too near either end
// to be sampled and a unit of more than 100 spikes.
func TestRawSNR(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const nc, ns, nt = 7, 40_001, 61
	raw := memRaw{data: make([]int16, nc*ns), nc: nc}
	for i := range raw.data {
		raw.data[i] = int16(rng.NormFloat64()*20) + 300
	}
	rows := []int{6, 4, 2, 0} // the sort's 4 channels in the file
	// Unit 0: peak-to-peak largest on sort channel 2 (file row 2), though
	// its largest |value| is on channel 1. Unit 1: channel 3 (row 0).
	tmpl := make([]float32, 2*nt*4)
	tmpl[0*nt*4+20*4+1] = -9
	tmpl[0*nt*4+20*4+2], tmpl[0*nt*4+30*4+2] = -6, 5
	tmpl[1*nt*4+20*4+3] = -4
	var times []int64
	var units []int32
	plant := func(u int32, at int64, row int, amp float64) {
		times, units = append(times, at), append(units, u)
		for k := -5; k <= 15; k++ {
			i := (int(at)+k)*nc + row
			if i >= 0 && i < len(raw.data) {
				raw.data[i] += int16(amp * math.Sin(float64(k+5)/3))
			}
		}
	}
	for s := int64(0); s < 250; s++ {
		plant(0, 100+s*150+int64(rng.IntN(20)), 2, 120)
	}
	for _, at := range []int64{3, 20, 21, 500, 9000, 25_000, ns - 42, ns - 41, ns - 5} {
		plant(1, at, 0, 60)
	}
	in := Input{SampleRate: 30000, NumSamples: ns, SpikeTimes: times, SpikeUnits: units,
		Templates: tmpl, TemplateSamples: nt, Channels: 4, Raw: raw, RawRows: rows}
	tab, err := Compute(in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := tab.Column("raw_snr")
	for u, row := range []int{2, 0} {
		var ut []int64
		for s, id := range units {
			if int(id) == u {
				ut = append(ut, times[s])
			}
		}
		want := refRawSNR(raw, row, ut)
		if math.IsNaN(got[u]) || math.Abs(got[u]-want) > 1e-9*want {
			t.Errorf("unit %d: raw_snr %v, want %v", u, got[u], want)
		}
	}
	// Without the recording raw_snr is NaN and the label skips it.
	in.Raw = nil
	tab, err = Compute(in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if v := tab.Column("raw_snr"); !math.IsNaN(v[0]) || !math.IsNaN(v[1]) {
		t.Errorf("raw_snr without a recording: %v", v)
	}
	// A channel map of the wrong length is an error.
	in.Raw, in.RawRows = raw, rows[:3]
	if _, err := Compute(in, DefaultOptions()); err == nil {
		t.Error("3 raw rows for 4 channels: no error")
	}
}

// TestLinspaceSample checks the spike choice against numpy's
// linspace(0, 249, 100, dtype=int) positions, a few of them written out.
func TestLinspaceSample(t *testing.T) {
	v := make([]int64, 250)
	for i := range v {
		v[i] = int64(i)
	}
	got := linspaceSample(v, 100)
	// numpy: [0, 2, 5, 7, 10, ...], 97 → 243, 98 → 246, 99 → 249.
	for i, w := range map[int]int64{0: 0, 1: 2, 2: 5, 3: 7, 4: 10, 97: 243, 98: 246, 99: 249} {
		if got[i] != w {
			t.Errorf("position %d: %d, want %d", i, got[i], w)
		}
	}
	if s := linspaceSample(v[:80], 100); len(s) != 80 {
		t.Errorf("80 spikes give %d", len(s))
	}
}
