package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressInterval is the least time between two progress lines of a
// pass when stderr is not a terminal (a log file, a pipe, nohup, SLURM).
var progressInterval = 10 * time.Second

// newBar returns the progress callback of a pipeline for the command's
// stderr: a bar on a terminal, plain lines otherwise.
func newBar() func(pass string, done, total int) {
	if f, ok := cmdErr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return terminalBar(f)
	}
	return progressLines(cmdErr, progressInterval, time.Now)
}

// terminalBar draws one bar per pass on the terminal f.
func terminalBar(f *os.File) func(pass string, done, total int) {
	var bar *progressbar.ProgressBar
	var cur string
	return func(pass string, done, total int) {
		if pass != cur || bar == nil {
			if bar != nil {
				bar.Finish()
				fmt.Fprintln(f)
			}
			cur = pass
			bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(f),
				progressbar.OptionSetDescription(fmt.Sprintf("%-10s", pass)),
				progressbar.OptionShowCount(),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish(),
			)
		}
		bar.Set(done)
		if done == total {
			bar.Finish()
		}
	}
}

// progressLines writes plain progress lines to w: for each pass at most
// one line per interval while it runs,
//
//	detection: 12/31 windows (39%), 0.41 windows/s, ETA 46s
//
// and one line when it completes ("detection: 31/31 windows in 1m15s").
// A pass starts with its call for 0 windows done; a pass whose first call
// is for a window done is taken to have started when the previous call
// came. now is the clock.
func progressLines(w io.Writer, interval time.Duration, now func() time.Time) func(pass string, done, total int) {
	var cur string
	prev := now()
	var t0, last time.Time
	return func(pass string, done, total int) {
		t := now()
		if pass != cur {
			if done == 0 {
				prev = t
			}
			cur, t0, last = pass, prev, prev
		}
		prev = t
		if done == 0 && total > 0 {
			return // a start: nothing done to report
		}
		if done >= total {
			fmt.Fprintf(w, "%s: %d/%d windows in %s\n", pass, done, total, roundDur(t.Sub(t0)))
			return
		}
		if t.Sub(last) < interval {
			return
		}
		last = t
		line := fmt.Sprintf("%s: %d/%d windows (%d%%)", pass, done, total, 100*done/max(total, 1))
		if el := t.Sub(t0).Seconds(); el > 0 && done > 0 {
			rate := float64(done) / el
			eta := time.Duration(float64(total-done) / rate * float64(time.Second))
			line += fmt.Sprintf(", %.2f windows/s, ETA %s", rate, roundDur(eta))
		}
		fmt.Fprintln(w, line)
	}
}

// roundDur rounds d for display: tenths of a second below 10 s, whole
// seconds above.
func roundDur(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
