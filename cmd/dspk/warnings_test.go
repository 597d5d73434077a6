package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWarnings runs detect on legal but suspicious input and checks that
// each warning is printed on stderr and written into dspk.json: a site
// clipped at the int16 rails, a whitening from too few samples and a
// -probe that contradicts the .meta; then compare of a truth covering
// another time range.
func TestWarnings(t *testing.T) {
	dir := t.TempDir()
	bin := copyRec(t, dir, nil)
	// Clip site 3 (file row 3 of 33) on every 20th sample: 5 % at +32767.
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < len(data)/66; s += 20 {
		binary.LittleEndian.PutUint16(data[66*s+2*3:], 32767)
	}
	if err := os.WriteFile(bin, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The golden geometry with 15 µm rows instead of 20 µm.
	pr := ksProbe(list32(func(i int) string { return fmt.Sprint([]int{43, 11, 59, 27}[i%4]) }),
		list32(func(i int) string { return fmt.Sprint(15 * (i/2 + 1)) }))
	probeFile := filepath.Join(dir, "probe15.json")
	if err := os.WriteFile(probeFile, []byte(pr), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "det")
	code, _, stderr := dspk(t, "detect", "-device", "cpu", "-batch", "20000", "-templates", filepath.Join(goldenWant, "default"), "-probe", probeFile, "-o", out, bin)
	if code != 0 {
		t.Fatalf("detect: exit %d: %s", code, stderr)
	}
	var prov struct{ Warnings []string }
	b, err := os.ReadFile(filepath.Join(out, "dspk.json"))
	if err != nil || json.Unmarshal(b, &prov) != nil {
		t.Fatalf("dspk.json: %v", err)
	}
	for _, want := range []string{
		"site 3 has more than 1 % of the samples at the int16 rails (site 3: 5.0 %)",
		"the whitening matrix is estimated from 20000 samples per site",
		"-probe " + probeFile + " contradicts the meta's geometry (30 of 32 sites elsewhere",
	} {
		if !strings.Contains(stderr, "warning: ") || !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
		if !strings.Contains(strings.Join(prov.Warnings, "\n"), want) {
			t.Errorf("dspk.json warnings lack %q: %q", want, prov.Warnings)
		}
	}
	// Without the flaws: no warning.
	clean := copyRec(t, t.TempDir(), nil)
	if code, _, stderr := dspk(t, "detect", "-device", "cpu", "-o", filepath.Join(dir, "det2"), clean); code != 0 || strings.Contains(stderr, "warning") {
		t.Errorf("clean run: exit %d, %s", code, stderr)
	}

	sim := filepath.Join(dir, "sim")
	if code, _, stderr := dspk(t, "simulate", "-o", sim, "-duration", "1s", "-units", "3"); code != 0 {
		t.Fatalf("simulate: %d %s", code, stderr)
	}
	// Detections of 4.5 s of another recording against 1 s of truth: refused.
	code, stdout, stderr := dspk(t, "compare", "-json", "-truth", filepath.Join(sim, "truth"), out)
	if code != 1 || !strings.Contains(stderr, "it is a folder of another recording") || stdout != "" {
		t.Errorf("compare of 1 s of truth with 4.5 s of detections: exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
}
