package phy

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"dspk/figure"
	"dspk/pipeline"
)

// TestDriftFiles writes a drift estimate and reads it back, and checks
// that an estimate whose axes disagree with its shifts is refused.
func TestDriftFiles(t *testing.T) {
	dir := t.TempDir()
	if HasDrift(dir) {
		t.Fatal("an empty folder holds a drift estimate")
	}
	d := &figure.Drift{Windows: 3, Blocks: 2, Dshift: []float64{1, -2, 3, -4, 5, 6}, Times: []float64{0.5, 1.5, 2.5}, Depths: []float64{100, 300}}
	if err := WriteDrift(dir, d); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDrift(dir)
	if err != nil || !HasDrift(dir) {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("read %+v, wrote %+v", got, d)
	}
	if got.MinDisplacement() != -6 || got.MaxDisplacement() != 4 {
		t.Errorf("displacement %g to %g, want -6 to 4", got.MinDisplacement(), got.MaxDisplacement())
	}
	bad := &figure.Drift{Windows: 2, Blocks: 2, Dshift: []float64{1, 2}, Times: []float64{0, 1}, Depths: []float64{0, 1}}
	if err := WriteDrift(t.TempDir(), bad); err == nil || !strings.Contains(err.Error(), "2 windows × 2 blocks") {
		t.Errorf("a drift of 2 shifts for 2 × 2: %v", err)
	}
}

// TestWriterRaster checks that a Writer with Options.Raster leaves the
// drift raster in its folder, tagged as dspk's, and that it is the raster
// drawn afterwards from the folder's files byte for byte (its canvas
// prepared from Begin or not).
func TestWriterRaster(t *testing.T) {
	srec := simulate(t, 2.1, 8, smallProbe())
	out := filepath.Join(t.TempDir(), "det")
	if _, err := run(t, srec, srec.Probe(), shortConfig(), out, Options{Raster: true}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, RasterFile)
	if !figure.IsDspkPNG(path) {
		t.Fatalf("%s is not a PNG dspk drew", path)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadRaster(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Times) == 0 || !strings.Contains(d.Title, "spikes") {
		t.Errorf("raster of %d spikes titled %q", len(d.Times), d.Title)
	}
	want, err := figure.EncodeRaster(context.Background(), d, pipeline.Version, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the folder's raster (%d bytes) differs from the one drawn from its files (%d bytes)", len(got), len(want))
	}
}
