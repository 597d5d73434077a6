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
	}
	b, err := os.ReadFile(filepath.Join(streamDir, "stream.json"))
	if err != nil || json.Unmarshal(b, &js) != nil || js.Spikes != int64(len(lt)) || js.Blocks == 0 || js.LatencyMs["p99"] <= 0 {
		t.Errorf("stream.json: %v, %s", err, b)
	}
	for _, name := range []string{"templates.npy", "channel_map.npy", "params.py", "amplitudes.npy"} {
		if _, err := os.Stat(filepath.Join(streamDir, name)); err != nil {
			t.Error(err)
		}
	}
	if code, _, stderr := dspk(t, "stream", "-o", streamDir, sortDir, bin); code != 1 || !strings.Contains(stderr, "live") {
		t.Errorf("an existing folder without -overwrite: exit %d, %q", code, stderr)
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
