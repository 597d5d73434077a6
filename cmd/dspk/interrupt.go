package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
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
	}
	return s.String()
}

// signalContext returns a context that the first SIGINT or SIGTERM
// cancels with an [interrupted] cause, so that the running pass stops,
// removes its temporary folder and the command reports what it stopped;
// a command that writes no file (bench, compare, info) exits at once
// with the message instead. A second signal exits at once with the
// signal's status; what that leaves (a locked temporary folder) the next
// run writing beside it removes.
func signalContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case s := <-ch:
				sig := s.(syscall.Signal)
				n++
				if n == 1 {
					runState.Lock()
					name, now := runState.name, runState.writesNothing
					runState.Unlock()
					if now {
						fmt.Fprintf(stderr, "\ndspk %s: %s\n", name, interruptMessage(interrupted{sig}))
						os.Exit(128 + int(sig))
					}
					cancel(interrupted{sig})
					continue
				}
				fmt.Fprintf(stderr, "\ndspk: second %s: exiting at once (the next run removes the partial output)\n", signalName(sig))
				os.Exit(128 + int(sig))
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// runState records what the command is doing, for the message after an
// interrupt.
var runState struct {
	sync.Mutex
	name          string // the command
	writesNothing bool   // the command writes no file: a signal exits at once
	stage         string // the pass or step running
	out           string // the folder being written
}

// setCommand records the running command.
func setCommand(c *command) {
	runState.Lock()
	runState.name, runState.writesNothing = c.name, c.writesNothing
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

// completedMessage says that a signal came after the command's output
// was complete, which it keeps.
func completedMessage(cause interrupted) string {
	runState.Lock()
	defer runState.Unlock()
	if runState.out != "" {
		return cause.Error() + " after the work was done; " + runState.out + " is complete and kept"
	}
	return cause.Error() + " after the work was done"
}

// trackProgress wraps a progress callback so that the pass it reports is
// recorded for the interrupt message.
func trackProgress(bar func(pass string, done, total int)) func(pass string, done, total int) {
	return func(pass string, done, total int) {
		setStage("the " + pass + " pass")
		if bar != nil {
			bar(pass, done, total)
		}
	}
}
