// Command dspk is a Kilosort4-compatible spike sorter: it reads
// extracellular recordings, preprocesses them as Kilosort4 does, detects
// spikes with Kilosort4's universal-template method, corrects probe
// motion and sorts the spikes into units, on the CPU or an NVIDIA GPU;
// it runs many recordings in batch and scores results against ground
// truth.
//
// Usage:
//
//	dspk <command> [flags] [arguments]
//
// The commands are:
//
//	demo        simulate a short Neuropixels recording, detect spikes, report
//	info        describe a recording (format, channels, rate, probe)
//	simulate    write a synthetic SpikeGLX recording with ground truth
//	preprocess  compute the whitening matrix (and optionally write whitened data)
//	detect      detect spikes and write a Phy/SpikeInterface-readable folder
//	drift       estimate the probe's motion
//	sort        Kilosort4's whole sort into units, in a Phy/SpikeInterface folder
//	batch       plan and run many recordings locally or on SLURM (plan, run, slurm, status)
//	compare     score spikes, units or a motion estimate against ground truth
//	plot        draw the drift raster of a detect or sort folder
//	metrics     recompute a sort folder's quality metrics and labels
//	report      write a sort folder's curation report (one HTML page)
//	bench       measure the ops on this machine
//	version     print the version
//
// Run "dspk <command> -h" for a command's flags and an example. A flag's
// name may be written with '-' or '_' between its words (-Th-learned for
// -Th_learned); a misspelt flag is answered with the closest one.
//
// Exit status: 0 on success, 1 on a runtime error (one line on stderr),
// 2 on a usage error, 130, 143 or 129 when interrupted by SIGINT, SIGTERM or SIGHUP
// (the run stops within 0.5 s at any point, removes its temporary output,
// leaves an -overwrite target as it was and says so; a second signal
// exits at once).
//
// DSPK_CPUPROFILE=FILE writes a Go CPU profile of the command to FILE,
// for `go tool pprof`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"dspk/compute"
	"dspk/internal/cliflag"
	"dspk/pipeline"
)

// version is the dspk release; set at link time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// command is one sub-command, in the style of cmd/go's base.Command.
type command struct {
	name    string
	short   string
	usage   string // arguments after the flags
	example string
	setup   func(fs *flag.FlagSet) func(args []string) error
	// writesNothing marks a command that writes no file: a signal ends
	// it at once, with the interrupt message.
	writesNothing bool
	// endsOnSignal marks a command that a first signal ends as the end
	// of its input does (stream): it is given the time to write its output.
	endsOnSignal bool
}

// usageError marks an error that should exit with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

var commands []*command

func register(c *command) { commands = append(commands, c) }

func main() {
	inMain = true
	ctx, finish := signalContext(os.Stderr)
	stopProfile := startCPUProfile(os.Getenv("DSPK_CPUPROFILE"), os.Stderr)
	code := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	code = finish(code)
	if os.Getenv("DSPK_MEMORY_REPORT") == "1" {
		reportMemory(os.Stderr)
	}
	os.Exit(code)
}

// startCPUProfile writes a Go CPU profile of the whole command to path
// (DSPK_CPUPROFILE; empty: none) and returns the function that ends it. A
// profile that cannot be started is reported and the command runs without.
func startCPUProfile(path string, stderr io.Writer) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "dspk: warning: DSPK_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "dspk: warning: DSPK_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "dspk: warning: DSPK_CPUPROFILE: %v\n", err)
		}
	}
}

// run executes dspk with args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext executes dspk with args under ctx, whose cancellation (with
// an [interrupted] cause) stops the command, and returns the exit status.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmdStart = time.Now()
	if inMain {
		cmdStart = processStart
	}
	pipeline.Version = version
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		printUsage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	name := args[0]
	if name == "batch" && len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		// "dspk batch plan …" is the command "batch plan".
		name, args = "batch "+args[1], args[1:]
	} else if name == "batch" {
		fmt.Fprintf(stderr, "usage: dspk batch <plan|run|slurm|status|task> [flags] [arguments]\n\n%s", batchUsage())
		return 2
	}
	var cmd *command
	for _, c := range commands {
		if c.name == name {
			cmd = c
		}
	}
	if cmd == nil {
		fmt.Fprintf(stderr, "dspk: unknown command %q\nRun 'dspk help' for usage.\n", name)
		return 2
	}
	// The flag package's messages (its error, then every flag) are
	// discarded: a flag error is one line here, the flags shown on -h.
	fs := flag.NewFlagSet("dspk "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	exec := cmd.setup(fs)
	cmdOut, cmdErr, cmdCtx = stdout, stderr, ctx
	setStage("")
	setOutput("")
	setCommand(cmd) // kept after the command returns, for finish's message
	positional, err := cliflag.Parse(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "usage: dspk %s [flags] %s\n\n%s\n\nFlags:\n", name, cmd.usage, cmd.short)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		if cmd.example != "" {
			fmt.Fprintf(stderr, "\nExample:\n%s\n", indent(cmd.example))
		}
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "dspk %s: %s\nRun 'dspk %s -h' for all flags.\n", name, cliflag.Explain(fs, err), name)
		return 2
	}
	startWork()
	err = exec(positional)
	endWork()
	if err != nil {
		var sig interrupted
		if errors.As(context.Cause(ctx), &sig) {
			fmt.Fprintf(stderr, "\ndspk %s: %s\n", name, interruptMessage(sig))
			return sig.exitCode()
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "dspk %s: %s\n", name, ue.msg)
			fmt.Fprintf(stderr, "Run 'dspk %s -h' for usage.\n", name)
			return 2
		}
		msg := oneLine(err.Error())
		if errors.Is(err, compute.ErrNotFound) && fs.Lookup("device") != nil {
			msg += "; use -device cpu to run on the CPU"
		}
		fmt.Fprintf(stderr, "dspk %s: %s\n", name, msg)
		return 1
	}
	return 0 // a signal after the output was committed: see signalContext's finish
}

// cmdOut and cmdErr are where the running command writes data and
// messages; tests replace them. cmdCtx is the run's context.
var (
	cmdOut, cmdErr io.Writer       = os.Stdout, os.Stderr
	cmdCtx         context.Context = context.Background()
)

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "dspk %s: a fast Kilosort4-compatible spike sorter. It sorts extracellular recordings into units,\n"+
		"detects spikes, estimates probe drift, runs many recordings on GPUs or SLURM, and scores results against ground truth.\n\n", version)
	fmt.Fprintf(w, "Usage:\n\n\tdspk <command> [flags] [arguments]\n\nCommands:\n\n")
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-13s %s\n", c.name, c.short)
	}
	fmt.Fprintf(w, "\nRun 'dspk <command> -h' for a command's flags and an example.\n")
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "\t" + l
	}
	return strings.Join(lines, "\n")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func init() {
	register(&command{
		name:          "version",
		writesNothing: true,
		short:         "print the version",
		example:       "dspk version",
		setup: func(fs *flag.FlagSet) func([]string) error {
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("version takes no arguments")
				}
				fmt.Fprintf(cmdOut, "dspk %s\n", version)
				return nil
			}
		},
	})
}
