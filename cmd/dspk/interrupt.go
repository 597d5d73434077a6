package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"dspk/export"
)

// interrupted is the cancellation cause of a run stopped by a signal.
type interrupted struct{ sig syscall.Signal }

func (e interrupted) Error() string { return "interrupted by " + signalName(e.sig) }

// exitCode is the shell's status of a process ended by the signal.
func (e interrupted) exitCode() int { return 128 + int(e.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// stopGrace is how long a command has after the first signal to stop by
// itself (every pass checks the context before each window; a window's
// work, template learning's clustering or the drawing of a raster do
// not) before the process removes what it was writing and exits.
const stopGrace = 100 * time.Millisecond

// signalContext returns a context that the first SIGINT, SIGTERM or
// SIGHUP cancels with an [interrupted] cause, so that the running pass
// stops, removes its temporary folder and the command reports what it stopped.
// A command still running stopGrace later is ended by forceExit; a
// command that writes no file (bench, compare, info) ends at once. A
// second signal exits at once with the signal's status; what that leaves
// (a locked temporary folder) the next run writing beside it removes. A
// batch worker takes no second signal: its SIGTERM at its parent's death
// comes once per thread, and Ctrl-C reaches it from the terminal and from
// its batch run; forceExit ends it stopGrace after the first.
// finish takes the command's exit status and returns the process's: after
// a signal that came once the command's output was committed, the
// signal's, saying the output is complete and kept (a signal later still
// exits so at once).
func signalContext(stderr io.Writer) (ctx context.Context, finish func(code int) int) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	if signalsReady != nil {
		signalsReady()
	}
	go func() {
		n := 0
		for s := range ch {
			sig := s.(syscall.Signal)
			n++
			runState.Lock()
			if runState.finished { // the command returned: end now, with its failure or as finish would
				if runState.code != 0 {
					os.Exit(runState.code)
				}
				fmt.Fprintf(stderr, "\ndspk %s: %s\n", runState.name, completedMessage(interrupted{sig}, runState.out))
				os.Exit(128 + int(sig))
			}
			now, worker, own := runState.writesNothing, runState.name == "batch worker", runState.endsOnSignal
			if n == 1 {
				cancel(interrupted{sig}) // under the lock: finish sees it, or this sees finished
			}
			runState.Unlock()
			if n > 1 && !worker {
				fmt.Fprintf(stderr, "\ndspk: second %s: exiting at once (the next run removes the partial output)\n", signalName(sig))
				os.Exit(128 + int(sig))
			}
			if now {
				forceExit(stderr, sig)
			} else if !own {
				time.AfterFunc(stopGrace, func() { forceExit(stderr, sig) })
			}
		}
	}()
	return ctx, func(code int) int {
		runState.Lock()
		runState.finished, runState.code = true, code
		cause, name, out := context.Cause(ctx), runState.name, runState.out
		runState.Unlock()
		if afterCommand != nil {
			afterCommand()
		}
		if sig := (interrupted{}); code == 0 && errors.As(cause, &sig) {
			fmt.Fprintf(stderr, "\ndspk %s: %s\n", name, completedMessage(sig, out))
			return sig.exitCode()
		}
		return code
	}
}

// afterCommand, if set (by the tests' re-executed dspk), is called once
// the command has returned, before the process exits.
var afterCommand func()

// signalsReady, if set (by the tests' re-executed dspk), is called once
// the signals are caught.
var signalsReady func()

// runState records what the command is doing, for the message after an
// interrupt.
var runState struct {
	sync.Mutex
	name          string // the command
	finished      bool   // the command returned and the process is ending
	code          int    // the command's exit status, once finished
	writesNothing bool   // the command writes no file: a signal exits at once
	endsOnSignal  bool   // the command ends by itself on a signal, its output written
	running       bool   // the command's work is under way
	ended         bool   // the command returned, or forceExit took over
	stage         string // the pass or step running
	out           string // the folder being written
}

// startWork marks the command's work as under way.
func startWork() {
	runState.Lock()
	runState.running, runState.ended = true, false
	runState.Unlock()
}

// endWork marks the command's work as returned. If forceExit has taken
// over, the process is exiting and endWork never returns.
func endWork() {
	runState.Lock()
	if runState.ended {
		runState.Unlock()
		select {} // forceExit ends the process
	}
	runState.running, runState.ended = false, true
	runState.Unlock()
}

// cleanups are what commands ask forceExit to remove besides their
// pending output folders (export.AbortPending).
var cleanups struct {
	sync.Mutex
	next int
	fns  map[int]func()
}

// atForcedExit registers fn to be run by forceExit; the returned function
// unregisters it.
func atForcedExit(fn func()) (unregister func()) {
	cleanups.Lock()
	defer cleanups.Unlock()
	if cleanups.fns == nil {
		cleanups.fns = map[int]func(){}
	}
	id := cleanups.next
	cleanups.next++
	cleanups.fns[id] = fn
	return func() {
		cleanups.Lock()
		delete(cleanups.fns, id)
		cleanups.Unlock()
	}
}

// forceExit ends a command that is still running after a signal: it
// aborts the output folders being written (a commit under way is waited
// for, and a cancelled one puts an old folder back), runs the commands'
// cleanups, prints the interrupt message and exits with the signal's
// status. It does nothing if the command has returned.
func forceExit(stderr io.Writer, sig syscall.Signal) {
	runState.Lock()
	if !runState.running || runState.ended {
		runState.Unlock()
		return
	}
	runState.ended = true
	name, out := runState.name, runState.out
	runState.Unlock()
	export.AbortPending()
	cleanups.Lock()
	for _, fn := range cleanups.fns {
		fn()
	}
	cleanups.Unlock()
	msg := interruptMessage(interrupted{sig})
	if wasWritten() { // committed before the signal could stop it
		msg = completedMessage(interrupted{sig}, out)
	}
	fmt.Fprintf(stderr, "\ndspk %s: %s\n", name, msg)
	os.Exit(128 + int(sig))
}

// setCommand records the running command.
func setCommand(c *command) {
	runState.Lock()
	runState.name, runState.writesNothing, runState.endsOnSignal = c.name, c.writesNothing, c.endsOnSignal
	runState.Unlock()
}

func setStage(s string) {
	runState.Lock()
	runState.stage = s
	runState.Unlock()
}

func setOutput(dir string) {
	runState.Lock()
	runState.out = dir
	runState.Unlock()
}

// interruptMessage says what a signal interrupted and that nothing was
// written.
func interruptMessage(cause interrupted) string {
	runState.Lock()
	defer runState.Unlock()
	msg := cause.Error()
	if runState.stage != "" {
		msg += " during " + runState.stage
	}
	if runState.out != "" {
		return msg + "; nothing was written to " + runState.out
	}
	return msg + "; nothing was written"
}

// written holds the files plotFolder completed.
var written struct {
	sync.Mutex
	paths map[string]bool
}

// markWritten records that path was written whole.
func markWritten(path string) {
	written.Lock()
	if written.paths == nil {
		written.paths = map[string]bool{}
	}
	written.paths[filepath.Clean(path)] = true
	written.Unlock()
}

// wasWritten reports whether the command's output (a folder or a file)
// was committed by this process and is still there.
func wasWritten() bool {
	runState.Lock()
	out := runState.out
	runState.Unlock()
	if out == "" {
		return false
	}
	written.Lock()
	file := written.paths[filepath.Clean(out)]
	written.Unlock()
	if !file && !export.Committed(out) {
		return false
	}
	_, err := os.Lstat(out)
	return err == nil
}

// completedMessage says that a signal came after the command's output
// (out, "" for none named) was complete, which it keeps.
func completedMessage(cause interrupted, out string) string {
	if out != "" {
		return cause.Error() + " after the work was done; " + out + " is complete and kept"
	}
	return cause.Error() + " after the work was done; its result is complete and kept"
}

// trackProgress wraps a progress callback so that the pass it reports is
// recorded for the interrupt message (after its last window, what
// follows it).
func trackProgress(bar func(pass string, done, total int)) func(pass string, done, total int) {
	return func(pass string, done, total int) {
		if done < total {
			setStage("the " + pass + " pass")
		} else {
			setStage("the work after the " + pass + " pass")
		}
		if bar != nil {
			bar(pass, done, total)
		}
	}
}
