package bench

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"dspk/compute"
)

// TestRowJSON checks the field order of a row, null for an op without a
// floor, and the peak source last where there is one.
func TestRowJSON(t *testing.T) {
	b, err := json.Marshal(Row{Op: "x", Device: "cpu", Size: "1", Time: 1500000, Nums: []Num{{"spikes", 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"op":"x","device":"cpu","size":"1","ms":1.5,"floor_ms":null,"fraction":null,"spikes":3}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	b, err = json.Marshal(Row{Op: "y", Device: "cpu", Size: "2", Time: 2000000, Floor: 500000, Nums: []Num{{"gflop", 1}}, PeakSource: "theoretical"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"op":"y","device":"cpu","size":"2","ms":2,"floor_ms":0.5,"fraction":0.25,"gflop":1,"peak_source":"theoretical"}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

// TestRunTrailing runs the trailing op on the CPU on small shapes: one
// row per shape, named by its device, with a time, the copy as its floor
// and the rates.
func TestRunTrailing(t *testing.T) {
	dev, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	var rows []Row
	opt := Options{Ops: []string{"trailing"}, Reps: 2, TrailingShapes: []TrailingShape{{Rows: 8, N: 4096}, {Rows: 8, N: 4096, BF16: true}},
		Row: func(r Row) { rows = append(rows, r) }}
	if err := Run(context.Background(), dev, opt); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2: %+v", len(rows), rows)
	}
	for i, r := range rows {
		if r.Op != "trailing mean" || r.Device != "cpu" || !(r.Time > 0 && r.Floor > 0) || len(r.Nums) != 2 ||
			r.Nums[0].Name != "gb_per_s" || r.Nums[1].Name != "copy_gb_per_s" || !strings.Contains(r.Text, "% of copy") {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	if !strings.Contains(rows[1].Size, "bfloat16") || !strings.HasPrefix(rows[0].Label, "trailing mean [8, 4096] float32") {
		t.Errorf("rows %+v", rows)
	}
}

// TestRunErrors checks the typed errors of Run: an unknown op, and the
// ops that need a file without one.
func TestRunErrors(t *testing.T) {
	dev, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	var unknown UnknownOpError
	if err := Run(context.Background(), dev, Options{Ops: []string{"nosuch"}}); !errors.As(err, &unknown) || unknown.Op != "nosuch" {
		t.Errorf("unknown op: %v", err)
	}
	for _, op := range []string{"load", "file"} {
		var noFile NeedsFileError
		if err := Run(context.Background(), dev, Options{Ops: []string{op}}); !errors.As(err, &noFile) || noFile.Op != op {
			t.Errorf("%s without a file: %v", op, err)
		}
	}
}

// TestDetectStagesRows checks the rows of a stage table: one per stage,
// the floor in seconds turned into a Duration, the peak source kept.
func TestDetectStagesRows(t *testing.T) {
	tb := &DetectStages{Device: "cuda:0", Size: "s", PeakSource: "p",
		Stages: []Stage{{Name: "bounds", Ms: 2, Floor: 0.001}, {Name: "sum of stages", Ms: 2, Floor: 0.001}}}
	rows := tb.Rows()
	if len(rows) != 2 || rows[0].Op != "detect stage: bounds" || rows[0].Time.Seconds() != 0.002 || rows[0].Floor.Seconds() != 0.001 ||
		rows[1].PeakSource != "p" || rows[1].Device != "cuda:0" {
		t.Errorf("rows %+v", rows)
	}
}
