package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"dspk/internal/gputest"
	"dspk/pipeline"
)

// TestDetectGPUKernelCache runs `dspk detect -device cuda:0 -v` as
// separate processes (the test binary re-executed as dspk) on the golden
// recording: with an empty kernel cache every module is compiled and
// stored, the next process loads every one from the disk cache and
// compiles none, DSPK_KERNEL_CACHE=off compiles them all again (a module
// loaded a second time in a process, by the warm-up's device and the
// pipeline's, comes from memory); the spikes are byte-identical in all
// three, and dspk.json holds the CUDA start-up timings.
func TestDetectGPUKernelCache(t *testing.T) {
	gputest.Device(t) // skips without a GPU
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	bin := filepath.Join(goldenRec, simBase+".imec0.ap.bin")
	if strings.ContainsAny(dir+bin, " \t") {
		t.Skip("paths with spaces cannot pass through DSPK_TEST_ARGS")
	}
	run := func(name string, env ...string) *pipeline.Summary {
		t.Helper()
		out := filepath.Join(dir, name)
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "DSPK_TEST_MAIN=1", "DSPK_CACHE="+cache,
			"DSPK_TEST_ARGS=detect -device cuda:0 -v -nskip 1 -o "+out+" "+bin)
		cmd.Env = append(cmd.Env, env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr.String())
		}
		t.Logf("%s: %s%s", name, stdout.String(), stderr.String())
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
		s := &prov.Summary
		if s.Kernels == nil || s.Kernels.Modules == 0 {
			t.Fatalf("%s: no kernel statistics: %+v", name, s.Kernels)
		}
		for _, k := range []string{"cuda_context", "cuda_libraries", "device_open", "startup", "pipeline_setup", "detection"} {
			if !(s.Timings[k] > 0) {
				t.Errorf("%s: timings[%q] = %v", name, k, s.Timings[k])
			}
		}
		return s
	}
	// A module the warm-up beside the set-up loaded first (pipeline.WarmUp,
	// on a device of its own) is loaded again by the pipeline from the
	// process's memory: each distinct module is compiled or read from the
	// disk once.
	cold := run("cold")
	if k := cold.Kernels; k.Compiled == 0 || k.Compiled+k.FromMemory != k.Modules || k.FromDisk != 0 || k.CacheDir != filepath.Join(cache, "kernels") {
		t.Errorf("cold cache: %+v, want every module compiled (or reused from memory) into %s", k, filepath.Join(cache, "kernels"))
	}
	ents, _ := os.ReadDir(filepath.Join(cache, "kernels"))
	if len(ents) != cold.Kernels.Compiled {
		t.Errorf("%d cache entries after %d compiles", len(ents), cold.Kernels.Compiled)
	}
	warm := run("warm")
	if k := warm.Kernels; k.Compiled != 0 || k.FromDisk != cold.Kernels.Compiled || k.FromDisk+k.FromMemory != k.Modules || k.CacheErrors != 0 {
		t.Errorf("warm cache: %+v, want all %d compiled modules from the disk", k, cold.Kernels.Compiled)
	}
	off := run("off", "DSPK_KERNEL_CACHE=off")
	if k := off.Kernels; k.Compiled != cold.Kernels.Compiled || k.Compiled+k.FromMemory != k.Modules || k.CacheDir != "" {
		t.Errorf("cache off: %+v, want every module compiled and no cache", k)
	}
	t.Logf("kernels: cold %.3f s (NVRTC %.3f s), warm %.3f s, off %.3f s",
		cold.Kernels.Seconds, cold.Kernels.NVRTCSeconds, warm.Kernels.Seconds, off.Kernels.Seconds)
	for _, f := range goldenArrays {
		a, err1 := os.ReadFile(filepath.Join(dir, "cold", f))
		b, err2 := os.ReadFile(filepath.Join(dir, "warm", f))
		c, err3 := os.ReadFile(filepath.Join(dir, "off", f))
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: %v %v %v", f, err1, err2, err3)
		}
		if !bytes.Equal(a, b) || !bytes.Equal(a, c) {
			t.Errorf("%s differs between the cold, warm and uncached runs", f)
		}
	}
}
