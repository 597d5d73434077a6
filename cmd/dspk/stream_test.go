package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"dspk/export"
	"dspk/probe"
	"dspk/sim"
	"dspk/stream"
)

// agreement returns the fraction of spikes of a (times, units) that b
// has in the same unit within ±tol samples.
func agreement(at []int64, au []int64, bt []int64, bu []int64, tol int64) float64 {
	byUnit := map[int64][]int64{}
	for i, u := range bu {
		byUnit[u] = append(byUnit[u], bt[i])
	}
	for _, v := range byUnit {
		slices.Sort(v)
	}
	hit := 0
	for i, u := range au {
		v := byUnit[u]
		j, _ := slices.BinarySearch(v, at[i]-tol)
		if j < len(v) && v[j] <= at[i]+tol {
			hit++
		}
	}
	return float64(hit) / float64(max(1, len(au)))
}

// TestStreamMatchesSort sorts a 10-s recording and streams the same file
// against the sort's units: the stream finds the sort's spikes in the
// same units (±5 samples) and few others (issue 44's bar is 0.95 each way
// on 10 minutes; 10 s leave the coincident rule little time to learn its
// pairs), prints one line per spike, writes a folder of Kilosort's arrays
// with stream.json; a missing source or sort folder is an error naming it.
func TestStreamMatchesSort(t *testing.T) {
	if testing.Short() {
		t.Skip("a sort: skipped in -short mode")
	}
	dir := t.TempDir()
	bin := sortRecording(t, dir)
	sortDir, streamDir := filepath.Join(dir, "sort"), filepath.Join(dir, "live")
	if code, _, stderr := dspk(t, "sort", "-device", "cpu", "-o", sortDir, bin); code != 0 {
		t.Fatalf("sort: exit %d: %s", code, stderr)
	}
	// The spikes also go to a listener as binary records (-send).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no local TCP: %v", err)
	}
	defer ln.Close()
	var sent []stream.Spike
	received := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			received <- err
			return
		}
		defer c.Close()
		_, err = stream.ReadRecords(c, func(sp stream.Spike) { sent = append(sent, sp) })
		received <- err
	}()
	code, out, stderr := dspk(t, "stream", "-send", "tcp://"+ln.Addr().String(), "-o", streamDir, sortDir, bin)
	if code != 0 {
		t.Fatalf("stream: exit %d: %s", code, stderr)
	}
	if err := <-received; err != nil || !strings.Contains(stderr, fmt.Sprintf("Sent %d spike records", len(sent))) {
		t.Errorf("records received: %d, %v; stderr %q", len(sent), err, stderr)
	}
	ints := func(d, name string) []int64 { return readInt64s(t, d, name) }
	st, su := ints(sortDir, "spike_times.npy"), ints(sortDir, "spike_clusters.npy")
	lt, lu := ints(streamDir, "spike_times.npy"), ints(streamDir, "spike_clusters.npy")
	found, inSort := agreement(st, su, lt, lu, 5), agreement(lt, lu, st, su, 5)
	t.Logf("%d sort spikes, %d stream spikes: %.3f of the sort's found, %.3f of the stream's in the sort", len(st), len(lt), found, inSort)
	if found < 0.95 || inSort < 0.95 {
		t.Errorf("agreement with the sort: %.3f of its spikes found, %.3f of the stream's in it", found, inSort)
	}
	if len(sent) != len(lt) {
		t.Errorf("%d records sent for %d spikes", len(sent), len(lt))
	} else {
		// The same spikes, in the order they were known.
		type tu struct{ t, u int64 }
		a, b := make([]tu, len(lt)), make([]tu, len(lt))
		for i, sp := range sent {
			a[i], b[i] = tu{sp.Sample, int64(sp.Unit)}, tu{lt[i], lu[i]}
		}
		less := func(x, y tu) int { return cmp.Or(cmp.Compare(x.t, y.t), cmp.Compare(x.u, y.u)) }
		slices.SortFunc(a, less)
		slices.SortFunc(b, less)
		if !slices.Equal(a, b) {
			t.Error("the records sent are not the folder's spikes")
		}
	}
	if lines := strings.Count(out, "\n"); lines != len(lt) {
		t.Errorf("%d lines on standard output for %d spikes", lines, len(lt))
	}
	if !slices.IsSorted(lt) {
		t.Error("the folder's spike times are not in order")
	}
	var js struct {
		Spikes    int64              `json:"spikes"`
		LatencyMs map[string]float64 `json:"latency_ms"`
		Blocks    int                `json:"blocks"`
		Backlog   float64            `json:"max_backlog_seconds"`
	}
	b, err := os.ReadFile(filepath.Join(streamDir, "stream.json"))
	if err != nil || json.Unmarshal(b, &js) != nil || js.Spikes != int64(len(lt)) || js.Blocks == 0 || js.LatencyMs["p99"] <= 0 {
		t.Errorf("stream.json: %v, %s", err, b)
	}
	// The file is read faster than it is matched: the stream holds about
	// one largest block (0.25 s) and its lookahead, not the whole file.
	if js.Backlog <= 0 || js.Backlog > 0.3 {
		t.Errorf("a file read as fast as it goes: %.2f s held read and not matched", js.Backlog)
	}
	for _, name := range []string{"templates.npy", "channel_map.npy", "params.py", "amplitudes.npy"} {
		if _, err := os.Stat(filepath.Join(streamDir, name)); err != nil {
			t.Error(err)
		}
	}
	if code, _, stderr := dspk(t, "stream", "-o", streamDir, sortDir, bin); code != 1 || !strings.Contains(stderr, "live") {
		t.Errorf("an existing folder without -overwrite: exit %d, %q", code, stderr)
	}
	// Replayed in real time in small blocks (read from the file as fast as
	// it goes, a block is as large as what is waiting, and the lookahead
	// matters only at a few edges), with the default lookahead and the
	// sort's (the whole template, 2.03 ms; more is taken as that): the
	// same spikes to the bar.
	for _, la := range []string{"0", "3ms"} {
		short := filepath.Join(dir, "short"+la)
		if code, _, stderr := dspk(t, "stream", "-q", "-realtime", "-block", "1ms", "-lookahead", la, "-o", short, sortDir, bin); code != 0 {
			t.Fatalf("stream -lookahead %s: exit %d: %s", la, code, stderr)
		}
		lt2, lu2 := ints(short, "spike_times.npy"), ints(short, "spike_clusters.npy")
		if f, in := agreement(st, su, lt2, lu2, 5), agreement(lt2, lu2, st, su, 5); f < 0.95 || in < 0.95 {
			t.Errorf("-realtime -block 1ms -lookahead %s: %.3f of the sort's spikes found, %.3f of the stream's in it", la, f, in)
		}
	}
	if code, _, stderr := dspk(t, "stream", "-lookahead", "1ms", "-o", filepath.Join(dir, "x"), sortDir, bin); code != 1 || !strings.Contains(stderr, "lookahead of 30 samples") {
		t.Errorf("-lookahead under half the template: exit %d, %q", code, stderr)
	}
	missing := filepath.Join(dir, "no.bin")
	if code, _, stderr := dspk(t, "stream", "-o", filepath.Join(dir, "x"), sortDir, missing); code != 1 || !strings.Contains(stderr, "no.bin") {
		t.Errorf("missing source: exit %d, %q", code, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*x*")); len(left) != 0 {
		t.Errorf("a stream that could not start left %v", left)
	}
	if code, _, stderr := dspk(t, "stream", dir+"/nosort", bin); code != 1 || !strings.Contains(stderr, "nosort") {
		t.Errorf("missing sort folder: exit %d, %q", code, stderr)
	}
}

// TestStreamSourcesAndStop streams a sort's recording from a TCP socket,
// replayed in real time, and stops it by cancelling its context as
// SIGINT does: Run returns without error with the spikes so far, and the
// folder holds them.
func TestStreamSourcesAndStop(t *testing.T) {
	if testing.Short() {
		t.Skip("a sort: skipped in -short mode")
	}
	dir := t.TempDir()
	bin := sortRecording(t, dir)
	sortDir := filepath.Join(dir, "sort")
	if code, _, stderr := dspk(t, "sort", "-device", "cpu", "-o", sortDir, bin); code != 0 {
		t.Fatalf("sort: exit %d: %s", code, stderr)
	}
	m, err := stream.Load(sortDir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no local TCP: %v", err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for len(raw) > 0 { // odd-sized writes: frames split across reads
			n := min(len(raw), 4099)
			if _, err := c.Write(raw[:n]); err != nil {
				return
			}
			raw = raw[n:]
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	src, err := stream.OpenSource(ctx, "tcp://"+ln.Addr().String(), m.FileChannels, stream.SourceOptions{Realtime: true, Rate: m.SampleRate})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := filepath.Join(dir, "live")
	f, err := stream.CreateFolder(out, m, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	var last int64
	st, err := stream.Run(ctx, m, src, stream.Options{}, func(sp stream.Spike) error {
		f.Add(sp)
		last = max(last, sp.Sample)
		return nil
	})
	if err != nil {
		t.Fatalf("a stream stopped by its context: %v", err)
	}
	secs := float64(st.Samples) / m.SampleRate
	if secs < 0.5 || secs > 2 || st.Spikes == 0 || float64(last)/m.SampleRate > secs {
		t.Errorf("stopped after 1.5 s of real-time replay: %.2f s read, %d spikes, last at %.2f s", secs, st.Spikes, float64(last)/m.SampleRate)
	}
	if err := f.Write("tcp://"+ln.Addr().String(), st); err != nil {
		t.Fatal(err)
	}
	a, err := export.ReadNPYFile(filepath.Join(out, "spike_times.npy"))
	if err != nil || a.Len() != int(st.Spikes) {
		t.Errorf("folder of a stopped stream: %v, %d spikes for %d", err, a.Len(), st.Spikes)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "params.py")); !strings.Contains(string(b), "dat_path = []") {
		t.Errorf("params.py of a socket's stream names a file:\n%s", b)
	}
}

// TestStreamLearn streams a recording with -learn: the first 6 s are
// sorted into the sort folder (and kept as its recording), and the rest is
// matched against those units from the first sample after them, in the
// right place: each truth neuron's spikes after 6.5 s are found by the
// stream unit that holds most of them. A span longer than the recording
// and an existing sort folder are refused, leaving nothing behind.
func TestStreamLearn(t *testing.T) {
	if testing.Short() {
		t.Skip("a sort: skipped in -short mode")
	}
	dir := t.TempDir()
	p := probe.NP1()
	const n = 32
	p.Name = "np1-32"
	p.X, p.Y, p.Shank, p.ChanMap = p.X[:n], p.Y[:n], p.Shank[:n], p.ChanMap[:n]
	p.NChanFile = n + 1
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Units, cfg.Seed, cfg.Probe = 10, 8, 5, p
	cfg.RateMin, cfg.RateMax = 20, 40
	bin, truth, err := sim.WriteSpikeGLX(dir, "s_g0_t0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	learned, live := filepath.Join(dir, "learned"), filepath.Join(dir, "live")
	if code, _, stderr := dspk(t, "stream", "-q", "-learn", "6s", "-o", live, learned, bin); code != 0 {
		t.Fatalf("stream -learn: exit %d: %s", code, stderr)
	}
	const first = 6 * 30000
	if fi, err := os.Stat(stream.LearnedRaw(learned)); err != nil || fi.Size() != first*(n+1)*2 {
		t.Errorf("the learned recording: %v, %v bytes, want %d", err, fi, first*(n+1)*2)
	}
	if _, err := os.Stat(filepath.Join(learned, "cluster_KSLabel.tsv")); err != nil {
		t.Errorf("the learned sort: %v", err)
	}
	var js struct {
		First   int64 `json:"first_sample"`
		Learned struct {
			Samples int64 `json:"samples"`
			Skipped int64 `json:"skipped_samples"`
		} `json:"learned"`
	}
	if b, err := os.ReadFile(filepath.Join(live, "stream.json")); err != nil || json.Unmarshal(b, &js) != nil ||
		js.First != first || js.Learned.Samples != first || js.Learned.Skipped != 0 {
		t.Errorf("stream.json: %v, %s", err, b)
	}
	lt, lu := readInt64s(t, live, "spike_times.npy"), readInt64s(t, live, "spike_clusters.npy")
	if len(lt) == 0 || lt[0] < first-61 {
		t.Fatalf("%d stream spikes, the first at %v (matching starts at %d)", len(lt), lt[:min(1, len(lt))], first)
	}
	var tt, tu []int64
	for i, s := range truth.SpikeTimes {
		if s >= first+15000 {
			tt, tu = append(tt, s), append(tu, int64(truth.SpikeClusters[i]))
		}
	}
	// Each neuron's spikes against the stream unit with most of them.
	units := slices.Compact(slices.Sorted(slices.Values(lu)))
	for u := range int64(cfg.Units) {
		var ut []int64
		for i := range tt {
			if tu[i] == u {
				ut = append(ut, tt[i])
			}
		}
		top := 0.0
		for _, su := range units {
			top = max(top, agreement(ut, make([]int64, len(ut)), lt, sliceWhere(lu, su, 0), 5))
		}
		if top < 0.8 {
			t.Errorf("neuron %d: %.2f of its %d spikes after 6.5 s found by one stream unit", u, top, len(ut))
		}
	}
	if code, _, stderr := dspk(t, "stream", "-q", "-learn", "20s", "-o", live+"2", learned+"2", bin); code != 1 || !strings.Contains(stderr, "ended at 10.0 s") {
		t.Errorf("-learn longer than the source: exit %d, %q", code, stderr)
	}
	if code, _, stderr := dspk(t, "stream", "-q", "-learn", "6s", "-o", live+"3", learned, bin); code != 1 || !strings.Contains(stderr, "exists") {
		t.Errorf("-learn into an existing sort: exit %d, %q", code, stderr)
	}
	for _, g := range []string{live + "[23]*", learned + "2*", filepath.Join(dir, ".*")} {
		if left, _ := filepath.Glob(g); len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
	}
}

// sliceWhere returns a copy of units with unit u as v and every other as
// −1: the spikes of one unit for agreement.
func sliceWhere(units []int64, u, v int64) []int64 {
	out := make([]int64, len(units))
	for i, x := range units {
		out[i] = -1
		if x == u {
			out[i] = v
		}
	}
	return out
}
