package main

import (
	"encoding/json"
	"strings"
	"testing"

	"dspk/bench"
)

// TestBenchTrailing runs dspk bench's trailing-mean lines on the CPU, on
// small shapes, as a table and as JSON: every line names its device, and
// every JSON object has the documented fields, a time, a floor (the copy)
// and the rates.
func TestBenchTrailing(t *testing.T) {
	saved := trailingShapes
	defer func() { trailingShapes = saved }()
	trailingShapes = []bench.TrailingShape{{Rows: 8, N: 4096}, {Rows: 8, N: 4096, BF16: true}}

	code, out, stderr := dspk(t, "bench", "-ops", "trailing", "-reps", "2", "-device", "cpu")
	if code != 0 {
		t.Fatalf("bench: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"trailing mean [8, 4096] float32", "trailing mean [8, 4096] bfloat16"} {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, want) {
				line = l
			}
		}
		if !strings.Contains(line, " cpu ") || !strings.Contains(line, "GB/s") || !strings.Contains(line, "% of copy") {
			t.Errorf("no line %q naming the device and the rates in:\n%s", want, out)
		}
	}

	code, out, stderr = dspk(t, "bench", "-ops", "trailing", "-reps", "2", "-device", "cpu", "-json")
	if code != 0 {
		t.Fatalf("bench -json: exit %d: %s", code, stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("bench -json: %v in:\n%s", err, out)
	}
	if len(rows) != 2 {
		t.Fatalf("%d objects, want 2:\n%s", len(rows), out)
	}
	for i, r := range rows {
		for _, k := range []string{"op", "device", "size", "ms", "floor_ms", "fraction", "gb_per_s", "copy_gb_per_s"} {
			if _, ok := r[k]; !ok {
				t.Errorf("object %d has no %q: %v", i, k, r)
			}
		}
		ms, _ := r["ms"].(float64)
		floor, _ := r["floor_ms"].(float64)
		frac, _ := r["fraction"].(float64)
		if r["op"] != "trailing mean" || r["device"] != "cpu" || !(ms > 0 && floor > 0 && frac > 0) {
			t.Errorf("object %d: %v", i, r)
		}
	}
	if s, _ := rows[1]["size"].(string); !strings.Contains(s, "bfloat16") {
		t.Errorf("second object's size %q", s)
	}
}

// TestBenchUsage checks the usage errors of dspk bench: an unknown op,
// and -ops load without -file.
func TestBenchUsage(t *testing.T) {
	if code, _, stderr := dspk(t, "bench", "-device", "cpu", "-ops", "nosuch"); code != 2 || !strings.Contains(stderr, `unknown op "nosuch"`) {
		t.Errorf("unknown op: exit %d, %q", code, stderr)
	}
	if code, _, stderr := dspk(t, "bench", "-device", "cpu", "-ops", "load"); code != 2 || !strings.Contains(stderr, "-ops load needs -file") {
		t.Errorf("load without -file: exit %d, %q", code, stderr)
	}
}
