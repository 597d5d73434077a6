package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"dspk/compute"
	"dspk/pipeline"
)

// processStart is when the dspk process started: from /proc where the
// kernel says (to 10 ms; the runtime and the packages' initialisation
// before main are then counted), else when the main package's variables
// were set. main makes it the start of the command's whole time.
var processStart = procStart(time.Now())

// procStart returns the process's start time from /proc/self/stat (field
// 22, clock ticks after boot) and /proc/uptime, assuming 100 ticks per
// second (Linux's USER_HZ); now where they cannot be read or disagree
// with now by more than a minute.
func procStart(now time.Time) time.Time {
	st, err1 := os.ReadFile("/proc/self/stat")
	up, err2 := os.ReadFile("/proc/uptime")
	if err1 != nil || err2 != nil {
		return now
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(st, ')')
	if i < 0 {
		return now
	}
	f := strings.Fields(string(st[i+1:]))
	u := strings.Fields(string(up))
	if len(f) < 20 || len(u) < 1 {
		return now
	}
	ticks, err1 := strconv.ParseFloat(f[19], 64) // field 22
	uptime, err2 := strconv.ParseFloat(u[0], 64)
	if err1 != nil || err2 != nil {
		return now
	}
	age := time.Duration((uptime - ticks/100) * float64(time.Second))
	if age < 0 || age > time.Minute {
		return now
	}
	return now.Add(-age)
}

// cmdStart is when the running command started: the process's start for
// the dspk binary, the call of runContext for tests.
var cmdStart = time.Now()

// inMain is set by main: the command runs as the dspk process.
var inMain bool

// pendingDevice is a compute device being opened in the background, so
// that the CUDA driver, its context and the libraries load while the
// recording is opened.
type pendingDevice struct {
	done   chan struct{}
	dev    *compute.Device
	reason string
	err    error
	took   time.Duration
}

// openDeviceAsync starts opening the device named by spec.
func openDeviceAsync(spec string) *pendingDevice {
	p := &pendingDevice{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.Now()
		p.dev, p.reason, p.err = compute.Open(spec)
		p.took = time.Since(t)
	}()
	return p
}

// wait returns the device once it is open.
func (p *pendingDevice) wait() (*compute.Device, string, error) {
	<-p.done
	return p.dev, p.reason, p.err
}

// mayBeGPU reports whether the device may turn out a GPU: it is not yet
// open (a GPU's driver takes 0.1 s or more to start, where a machine
// without one answers at once), or it is open and is a GPU.
func (p *pendingDevice) mayBeGPU() bool {
	select {
	case <-p.done:
		return p.err == nil && p.dev.Kind() == compute.CUDA
	default:
		return true
	}
}

// discard closes the device, once it is open, for a command that failed
// before using it; it does not wait.
func (p *pendingDevice) discard() {
	go func() {
		<-p.done
		if p.dev != nil {
			p.dev.Close()
		}
	}()
}

// secs formats d in seconds for the time breakdown.
func secs(v float64) string { return fmt.Sprintf("%6.3f s", v) }

// timesRealTime formats how many times faster than real time a run of
// wall seconds over rec seconds of recording was: no decimals from 100×
// on, one from 10×, else two.
func timesRealTime(rec, wall float64) string {
	x := rec / wall
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f×", x)
	case x >= 10:
		return fmt.Sprintf("%.1f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

// wholeSpeed says how fast the whole command went against the recording,
// and what the detection pass alone took: "600.0 s of recording in 1.15 s
// (detection pass 0.55 s): 522× real time (faster than real time)".
func wholeSpeed(s *pipeline.Summary, wall time.Duration) string {
	w := wall.Seconds()
	how := "faster than real time"
	if s.Seconds < w {
		how = "slower than real time"
	}
	return fmt.Sprintf("%.1f s of recording in %.2f s (detection pass %.2f s): %s real time (%s)",
		s.Seconds, w, s.PassSeconds["detection"], timesRealTime(s.Seconds, w), how)
}

// printTimes writes the -v breakdown of where the whole command's time
// went: start-up (device, recording, pipeline), the stages of the run
// with their window loops, the folder, the kernels.
func printTimes(w io.Writer, s *pipeline.Summary, wall time.Duration) {
	t, p := s.Timings, s.PassSeconds
	fmt.Fprintf(w, "time, whole command %.3f s (recording %.1f s):\n", wall.Seconds(), s.Seconds)
	line := func(what string, v float64, note string) {
		if note != "" {
			note = "  " + note
		}
		fmt.Fprintf(w, "  %-26s %s%s\n", what, secs(v), note)
	}
	if v, ok := t["startup"]; ok {
		note := fmt.Sprintf("(recording opened in %.3f s", t["recording_open"])
		beside := "it"
		if v, ok := t["pipeline_prepare"]; ok {
			note += fmt.Sprintf(" and the pipeline's host side prepared in %.3f s", v)
			beside = "them"
		}
		if d, ok := t["device_open"]; ok {
			note += fmt.Sprintf(", device opened beside %s in %.3f s", beside, d)
			if c, ok := t["cuda_context"]; ok {
				note += fmt.Sprintf(": CUDA driver and context %.3f s, NVRTC %.3f s, concurrently", c, t["cuda_libraries"])
			}
		}
		line("start-up", v, note+")")
	}
	if v, ok := t["pipeline_setup"]; ok {
		line("pipeline set-up", v, "(preprocessing kernels, buffers)")
	}
	for _, st := range []struct{ key, name string }{{"whitening", "whitening"}, {"templates", "templates"}, {"detection", "detection"}} {
		if v, ok := t[st.key]; ok {
			line(st.name, v, fmt.Sprintf("(window loop %.3f s)", p[st.key]))
		}
	}
	if v, ok := t["grid"]; ok {
		line("template grid", v, "")
	}
	if v, ok := t["sink_begin"]; ok {
		line("folder: run files", v, "(whitening, templates, probe, params.py)")
	}
	if v, ok := t["folder_writing"]; ok {
		note := fmt.Sprintf("(cluster files %.3f s, drift raster %.3f s beside them", t["cluster_files"], t["plotting"])
		if c, ok := t["device_close"]; ok {
			note += fmt.Sprintf("; the device closed beside them in %.3f s", c)
		}
		line("folder: end", v, note+")")
	}
	var known float64
	for _, k := range []string{"startup", "pipeline_setup", "templates_load", "folder_create", "whitening", "templates", "grid", "sink_begin", "detection", "folder_writing"} {
		known += t[k]
	}
	line("other (closing, …)", max(wall.Seconds()-known, 0), "")
	if k := s.Kernels; k != nil {
		cache := k.CacheDir
		if cache == "" {
			cache = "disabled"
		}
		fmt.Fprintf(w, "  kernels: %d modules in %.3f s: %d compiled by NVRTC (%.3f s), %d from the disk cache, %d from memory; cache %s",
			k.Modules, k.Seconds, k.Compiled, k.NVRTCSeconds, k.FromDisk, k.FromMemory, cache)
		if k.CacheErrors > 0 {
			fmt.Fprintf(w, " (%d cache errors, last: %s)", k.CacheErrors, k.LastCacheError)
		}
		fmt.Fprintln(w)
	}
	var rest []string
	for k := range t {
		switch k {
		case "startup", "recording_open", "pipeline_prepare", "device_open", "cuda_context", "cuda_libraries", "pipeline_setup",
			"whitening", "templates", "grid", "detection", "sink_begin", "folder_writing", "cluster_files", "plotting", "device_close":
			continue
		}
		rest = append(rest, fmt.Sprintf("%s %.3f s", strings.ReplaceAll(k, "_", " "), t[k]))
	}
	sort.Strings(rest)
	if len(rest) > 0 {
		fmt.Fprintf(w, "  also: %s\n", strings.Join(rest, ", "))
	}
}
