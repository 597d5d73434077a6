package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"dspk/pipeline"
)

// TestDetectTimes checks the time breakdown of detect: -v prints every
// part of the run, dspk.json's summary holds the same timings, each
// within the whole command's time, and the closing line reports the whole
// time, at least the detection pass's.
func TestDetectTimes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "det")
	var stdout, stderr bytes.Buffer
	bin := filepath.Join(goldenRec, simBase+".imec0.ap.bin")
	t0 := time.Now()
	code := run([]string{"detect", "-device", "cpu", "-v", "-o", out, "-nskip", "1", bin}, &stdout, &stderr)
	whole := time.Since(t0).Seconds()
	if code != 0 {
		t.Fatalf("detect: exit %d: %s", code, stderr.String())
	}
	m := regexp.MustCompile(`of recording in ([0-9.]+) s \(detection pass ([0-9.]+) s\): ([0-9.]+)× real time`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("closing line %q", stdout.String())
	}
	wall, _ := strconv.ParseFloat(m[1], 64)
	pass, _ := strconv.ParseFloat(m[2], 64)
	if wall < pass || wall > whole+0.01 || wall <= 0 {
		t.Errorf("closing line: whole %.2f s, pass %.2f s, the call took %.2f s", wall, pass, whole)
	}
	for _, want := range []string{"time, whole command", "start-up", "recording opened in", "pipeline's host side prepared in", "device opened beside them",
		"pipeline set-up", "whitening", "templates", "detection", "window loop", "folder: run files", "folder: end",
		"drift raster", "other (closing"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("-v output lacks %q:\n%s", want, stderr.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "dspk.json"))
	if err != nil {
		t.Fatal(err)
	}
	var prov struct {
		Summary pipeline.Summary `json:"summary"`
	}
	if err := json.Unmarshal(b, &prov); err != nil {
		t.Fatal(err)
	}
	tm := prov.Summary.Timings
	for _, k := range []string{"startup", "recording_open", "pipeline_prepare", "device_open", "pipeline_setup", "folder_create", "whitening",
		"templates", "grid", "sink_begin", "detection", "folder_writing", "cluster_files", "plotting", "until_written"} {
		v, ok := tm[k]
		if !ok || v < 0 || v > whole {
			t.Errorf("dspk.json timings[%q] = %v (present %v), the call took %.2f s", k, v, ok, whole)
		}
	}
	if tm["detection"] < prov.Summary.PassSeconds["detection"] {
		t.Errorf("detection stage %.3f s shorter than its window loop %.3f s", tm["detection"], prov.Summary.PassSeconds["detection"])
	}
	if tm["folder_writing"] < tm["plotting"] || tm["folder_writing"] < tm["cluster_files"] {
		t.Errorf("folder %.3f s, its parts %.3f and %.3f s", tm["folder_writing"], tm["cluster_files"], tm["plotting"])
	}
	sum := tm["startup"] + tm["pipeline_setup"] + tm["folder_create"] + tm["whitening"] + tm["templates"] + tm["grid"] + tm["sink_begin"] + tm["detection"] + tm["folder_writing"]
	if sum > tm["until_written"]+0.01 || tm["until_written"] > wall+0.01 {
		t.Errorf("the parts add to %.3f s, until written %.3f s, whole %.3f s", sum, tm["until_written"], wall)
	}
	if prov.Summary.Kernels != nil {
		t.Errorf("kernel statistics on the CPU: %+v", prov.Summary.Kernels)
	}
}

// TestWholeSpeed checks the wording of the closing line's speed.
func TestWholeSpeed(t *testing.T) {
	for _, c := range []struct {
		rec, wall, pass float64
		want            string
	}{
		{600, 1.15, 0.55, "600.0 s of recording in 1.15 s (detection pass 0.55 s): 522× real time (faster than real time)"},
		{60, 4, 1, "60.0 s of recording in 4.00 s (detection pass 1.00 s): 15.0× real time (faster than real time)"},
		{60, 123, 100, "60.0 s of recording in 123.00 s (detection pass 100.00 s): 0.49× real time (slower than real time)"},
	} {
		s := &pipeline.Summary{Seconds: c.rec, PassSeconds: map[string]float64{"detection": c.pass}}
		if got := wholeSpeed(s, time.Duration(c.wall*float64(time.Second))); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
