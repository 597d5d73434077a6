package report

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/quality"
)

// pageData returns the JSON embedded in the page b, decoded.
func pageData(t *testing.T, b []byte) *page {
	t.Helper()
	_, rest, ok := bytes.Cut(b, []byte(`<script type="application/json" id="data">`))
	js, _, ok2 := bytes.Cut(rest, []byte("</script>"))
	if !ok || !ok2 {
		t.Fatal("no data element in the page")
	}
	var p page
	if err := json.Unmarshal(js, &p); err != nil {
		t.Fatalf("page data: %v", err)
	}
	return &p
}

// TestReportCorrelograms compares the autocorrelogram and the ISI histogram
// with a count of every pair.
func TestReportCorrelograms(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var times []int64
	for tm := int64(0); len(times) < 3000; tm += int64(r.IntN(400)) {
		times = append(times, tm) // some equal times: lag 0
	}
	const bin, nb = 15, 100
	acg, isi := correlograms(times, bin, nb)
	wantACG, wantISI := make([]int32, nb), make([]int32, nb)
	for i := range times {
		for j := i + 1; j < len(times); j++ {
			d := times[j] - times[i]
			switch {
			case d == 0:
				wantACG[0]++
			case d <= bin*nb:
				wantACG[(d-1)/bin]++
			}
		}
		if i > 0 {
			if d := times[i] - times[i-1]; d < bin*nb {
				wantISI[d/bin]++
			}
		}
	}
	for k := range nb {
		if acg[k] != wantACG[k] || isi[k] != wantISI[k] {
			t.Fatalf("bin %d: acg %d isi %d, want %d and %d", k, acg[k], isi[k], wantACG[k], wantISI[k])
		}
	}
}

// TestReportPage checks the page of a synthetic folder against its truth: one
// row per unit, the main channel, the scatter decoded back to the kept
// spikes' times and depths, at most MaxPoints of them, and the labels of
// quality_metrics.tsv once it is there.
func TestReportPage(t *testing.T) {
	dir := t.TempDir()
	spec := folderSpec{units: 6, channels: 32, seconds: 120, rate: 8, seed: 3}
	tr := writeFolder(t, dir, spec)
	opt := DefaultOptions()
	opt.MaxPoints = 500
	b, err := Page(dir, "test", opt)
	if err != nil {
		t.Fatal(err)
	}
	selfContained(t, b)
	p := pageData(t, b)
	if len(p.Units) != spec.units || p.Summary.Units != spec.units || p.Summary.Spikes != len(tr.times) {
		t.Fatalf("%d units, summary %d units %d spikes; want %d, %d", len(p.Units), p.Summary.Units, p.Summary.Spikes, spec.units, len(tr.times))
	}
	if len(p.Summary.Notes) != 1 || !strings.Contains(p.Summary.Notes[0], "is absent") {
		t.Errorf("notes %q, want the metrics computed for the page", p.Summary.Notes)
	}
	if d := float64(p.Duration); d != spec.seconds {
		t.Errorf("duration %v, want %v", d, spec.seconds)
	}
	col := map[string]int{}
	for i, m := range p.Metrics {
		col[m] = i
	}
	for i, u := range p.Units {
		var spikes []int
		for s, x := range tr.units {
			if x == u.ID {
				spikes = append(spikes, s)
			}
		}
		n := len(spikes)
		if got := int(u.M[col["num_spikes"]]); got != n || int(u.M[col["ch"]]) != tr.main[i] {
			t.Errorf("unit %d: %d spikes on channel %v, want %d on %d", u.ID, got, u.M[col["ch"]], n, tr.main[i])
		}
		if u.KS != []string{"good", "mua"}[i%2] {
			t.Errorf("unit %d: KSLabel %q", u.ID, u.KS)
		}
		if len(u.WaveCh) != opt.Channels || len(u.Wave) != opt.Channels*testNT {
			t.Errorf("unit %d: waveform on %d channels, %d values", u.ID, len(u.WaveCh), len(u.Wave))
		}
		step := (n + opt.MaxPoints - 1) / opt.MaxPoints
		if u.NPoints > opt.MaxPoints || u.NPoints != (n+step-1)/step {
			t.Errorf("unit %d: %d points of %d spikes", u.ID, u.NPoints, n)
		}
		raw, err := base64.StdEncoding.DecodeString(u.Scatter)
		if err != nil || len(raw) != 6*u.NPoints {
			t.Fatalf("unit %d: scatter of %d bytes (%v)", u.ID, len(raw), err)
		}
		m := u.NPoints
		for k := range m {
			s := spikes[k*step]
			tm := float64(binary.LittleEndian.Uint16(raw[2*k:])) / 65535 * float64(p.Duration)
			lo, hi := float64(u.DepRange[0]), float64(u.DepRange[1])
			dep := lo + float64(binary.LittleEndian.Uint16(raw[2*(2*m+k):]))/65535*(hi-lo)
			if math.Abs(tm-float64(tr.times[s])/tr.fs) > 2e-3 || math.Abs(dep-float64(tr.depths[s])) > 0.01 {
				t.Fatalf("unit %d point %d: t %v depth %v, want %v and %v", u.ID, k, tm, dep, float64(tr.times[s])/tr.fs, tr.depths[s])
			}
		}
		var pairs int32
		for _, c := range u.ACG {
			pairs += c
		}
		if pairs == 0 || u.ACG[0]+u.ACG[1]+u.ACG[2] != 0 {
			t.Errorf("unit %d: acg %v (2-ms dead time: the first bins empty)", u.ID, u.ACG[:6])
		}
	}
	// With the metrics' table in the folder, the page takes its labels.
	in, err := quality.ReadSortFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := quality.Compute(*in, quality.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	tab.Labels[2] = "custom"
	if err := quality.WriteTSV(dir, tab); err != nil {
		t.Fatal(err)
	}
	p = pageData(t, mustPage(t, dir, opt))
	if len(p.Summary.Notes) != 0 || p.Units[2].BC != "custom" || p.Summary.Labels["custom"] != 1 || p.Labels[len(p.Labels)-1] != "custom" {
		t.Errorf("with %s: notes %q, unit 2 %q, labels %v %v", quality.WideFile, p.Summary.Notes, p.Units[2].BC, p.Summary.Labels, p.Labels)
	}
	if _, ok := col["nn_hit_rate"]; ok {
		t.Error("metrics computed for the page include nn_hit_rate")
	}
	if !hasMetric(p, "nn_hit_rate") {
		t.Errorf("the table's nn_hit_rate is not shown: %v", p.Metrics)
	}
	// A table of other units (curated since) is not used.
	tab.UnitIDs[0] = 99
	if err := quality.WriteTSV(dir, tab); err != nil {
		t.Fatal(err)
	}
	p = pageData(t, mustPage(t, dir, opt))
	if len(p.Summary.Notes) != 1 || !strings.Contains(p.Summary.Notes[0], "other units") || p.Units[0].ID != 0 {
		t.Errorf("stale table: notes %q, first unit %d", p.Summary.Notes, p.Units[0].ID)
	}
}

func mustPage(t *testing.T, dir string, opt Options) []byte {
	t.Helper()
	b, err := Page(dir, "test", opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hasMetric(p *page, name string) bool {
	for _, m := range p.Metrics {
		if m == name {
			return true
		}
	}
	return false
}

// selfContained fails if the page b could reach the network: no external
// script, style, font, image or request.
func selfContained(t *testing.T, b []byte) {
	t.Helper()
	s := strings.ReplaceAll(string(b), `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, bad := range []string{"http://", "https://", "src=", "<link", "@import", "url(", "fetch(", "XMLHttpRequest", "@font-face"} {
		if strings.Contains(s, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
}

// TestReportReadWide reads back what quality.WriteTSV writes, NaN and counts
// included, and names the file and line of a broken table.
func TestReportReadWide(t *testing.T) {
	dir := t.TempDir()
	tab := &quality.Table{UnitIDs: []int32{3, 7}, Labels: []string{"good", "noise"}, Columns: []quality.Column{
		{Name: "num_spikes", Values: []float64{10, 0}, Integer: true},
		{Name: "snr", Values: []float64{math.NaN(), 1.0 / 3}},
	}}
	if err := quality.WriteTSV(dir, tab); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, quality.WideFile)
	got, err := readWide(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Columns) != 2 || !got.Columns[0].Integer || got.Columns[1].Values[1] != 1.0/3 || !math.IsNaN(got.Columns[1].Values[0]) ||
		got.Labels[1] != "noise" || got.UnitIDs[1] != 7 {
		t.Errorf("read back %+v", got)
	}
	if err := os.WriteFile(path, []byte("unit_id\tsnr\n1\t2\n2\tx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readWide(path); err == nil || !strings.Contains(err.Error(), path+":3") {
		t.Errorf("broken table: %v", err)
	}
}

// TestIsReport tells a page Write wrote from another HTML file.
func TestIsReport(t *testing.T) {
	dir := t.TempDir()
	writeFolder(t, dir, folderSpec{units: 2, channels: 8, seconds: 5, rate: 5, seed: 1})
	var b bytes.Buffer
	if err := Write(&b, dir, "test", DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	mine, other := filepath.Join(dir, "a.html"), filepath.Join(dir, "b.html")
	os.WriteFile(mine, b.Bytes(), 0o644)
	os.WriteFile(other, []byte("<!DOCTYPE html><title>x</title>"), 0o644)
	if !IsReport(mine) || IsReport(other) || IsReport(filepath.Join(dir, "none.html")) {
		t.Error("IsReport does not tell the pages apart")
	}
}

// BenchmarkPage times the report of a sort folder: the one
// DSPK_BENCH_SORT names (make one with dspk simulate -duration 10m and
// dspk sort; the target is ≤ 10 s for a 10-minute sort on 2 cores:
// GOMAXPROCS=2 taskset -c 0,1), else a synthetic 10-minute folder of 300
// units at 8 Hz on 384 channels with PC features, the sizes of such a
// sort (its metrics' table written first, as a sort writes it; the
// set-up takes a minute or two).
func BenchmarkPage(b *testing.B) {
	dir := os.Getenv("DSPK_BENCH_SORT")
	if dir == "" {
		dir = b.TempDir()
		writeFolder(b, dir, folderSpec{units: 300, channels: 384, seconds: 600, rate: 8, pcFeatures: true, seed: 1})
		in, err := quality.ReadSortFolder(dir)
		if err != nil {
			b.Fatal(err)
		}
		opt := quality.DefaultOptions()
		opt.SkipNN = true
		tab, err := quality.Compute(*in, opt)
		if err != nil {
			b.Fatal(err)
		}
		if err := quality.WriteTSV(dir, tab); err != nil {
			b.Fatal(err)
		}
	}
	var size int
	for b.Loop() {
		p, err := Page(dir, "bench", DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		size = len(p)
	}
	b.ReportMetric(float64(size)/1e6, "MB")
}
