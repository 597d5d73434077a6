package recording_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/recording"
	"dspk/sim"
)

// writeFlat writes n samples of rec as a flat int16 file in dir.
func writeFlat(t *testing.T, rec recording.Recording, n int, dir string) string {
	t.Helper()
	buf := make([]int16, n*rec.Channels())
	if err := rec.ReadInt16(buf, 0, n); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 2*len(buf))
	for i, v := range buf {
		b[2*i], b[2*i+1] = byte(v), byte(uint16(v)>>8)
	}
	p := filepath.Join(dir, "x.bin")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestChannelCountInput opens the same bytes with right and wrong channel
// counts: a simulation written as 385 channels (seed logged), and the
// real locust tetrode recording (4 channels, info.json). A count the data
// contradict is refused naming the right one; the right count is not.
func TestChannelCountInput(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Seed = 2, 7
	t.Logf("simulation seed %d", cfg.Seed)
	s, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	simBin := writeFlat(t, s, 60000, t.TempDir())
	locust, err := filepath.Abs("testdata/locust/locust_trial_01.raw")
	if err != nil {
		t.Fatal(err)
	}
	locustCopy := filepath.Join(t.TempDir(), "l.raw") // no info.json
	if b, err := os.ReadFile(locust); err != nil || os.WriteFile(locustCopy, b, 0o644) != nil {
		t.Fatal(err)
	}
	tet := filepath.Join(t.TempDir(), "tetrode.json")
	if err := os.WriteFile(tet, []byte(`{"chanMap":[0,1,2,3],"xc":[0,20,0,20],"yc":[0,0,20,20],"kcoords":[1,1,1,1]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		in         recording.Input
		want       string // "" for accepted
	}{
		{"sim 385 np1", simBin, recording.Input{OpenOptions: recording.OpenOptions{Channels: 385, Rate: 30000}, Probe: "np1"}, ""},
		{"sim 770 np1", simBin, recording.Input{OpenOptions: recording.OpenOptions{Channels: 770, Rate: 30000}, Probe: "np1"},
			"-channels 770: the data look like 385 channels per sample"},
		{"sim 1155 np1", simBin, recording.Input{OpenOptions: recording.OpenOptions{Channels: 1155, Rate: 30000}, Probe: "np1"},
			"pass -channels 385"},
		{"locust info.json", locust, recording.Input{Probe: tet}, ""},
		{"locust 4", locustCopy, recording.Input{OpenOptions: recording.OpenOptions{Channels: 4, Rate: 15000}, Probe: tet}, ""},
		{"locust 8", locustCopy, recording.Input{OpenOptions: recording.OpenOptions{Channels: 8, Rate: 15000}, Probe: tet},
			"-channels 8: the data look like 4 channels per sample"},
		{"locust 2", locustCopy, recording.Input{OpenOptions: recording.OpenOptions{Channels: 2, Rate: 15000}, Probe: tet},
			"has only 2 channels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := recording.OpenFiles([]string{c.path}, c.in.OpenOptions)
			if err != nil {
				t.Fatal(err)
			}
			chk, _ := recording.CheckChannels(r, 384, 385)
			r.Close()
			t.Logf("%v (likely %d)", chk, chk.Likely)
			rec, _, _, err := c.in.Open(c.path)
			if rec != nil {
				rec.Close()
			}
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestChannelCountSharedNoise checks that data whose channels share
// their noise (here a common white component, as SpikeInterface's
// generator's spatially correlated noise gives) are not refused: read
// with a divisor of their count, consecutive "samples" are neighbouring
// channels of one frame and correlate, but a count below the probe's
// sites cannot hold the probe.
func TestChannelCountSharedNoise(t *testing.T) {
	const C, T = 384, 20000
	rng := rand.New(rand.NewPCG(11, 3))
	data := make([]int16, C*T)
	for i := range T {
		common := 60 * rng.NormFloat64()
		for c := range C {
			data[i*C+c] = int16(common + 50*rng.NormFloat64())
		}
	}
	rec := recording.NewMemory("shared", data, C, 30000, nil)
	c, err := recording.CheckChannels(rec, 384, 385)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("every count: %v (likely %d)", c.Corr, c.Likely)
	if c.Likely >= C {
		t.Fatalf("the correlations alone no longer point below %d channels: the data no longer exercise AtLeast", C)
	}
	if a := c.AtLeast(384); a.Likely < C || a.Wrong() {
		t.Errorf("384 channels of shared noise: likely %d, refused %v: %s", a.Likely, a.Wrong(), a)
	}
}
