package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"dspk/compute"
	"dspk/probe"
	"dspk/recording"
)

// DefaultOps are the ops dspk bench measures unless told others.
var DefaultOps = []string{"read", "covariance", "preprocess", "detect", "trailing"}

// Options say what Run measures and where its results go.
type Options struct {
	// Ops are the ops to measure, in order: read, covariance,
	// preprocess, detect, trailing, motion, sort, load, file.
	Ops []string
	// Reps is the number of timed repetitions of an op (the median is
	// reported); at least 1.
	Reps int
	// File is the recording of the ops load and file (required there)
	// and of sort (a simulated 20-s recording without it).
	File string
	// Open opens File as the caller's other commands open a recording,
	// with the probe it uses and the warnings opening it raised; the
	// sort and file ops need it when File is set.
	Open func(path string) (recording.Recording, *probe.Probe, []string, error)
	// Warnings receives the warnings of opening File for the file op;
	// nil drops them.
	Warnings func([]string)
	// Row receives each result as soon as it is measured.
	Row func(Row)
	// DetectStages receives the table of the GPU detection stages of the
	// detect op; nil hands its rows (DetectStages.Rows) to Row.
	DetectStages func(*DetectStages)
	// TrailingShapes are the cases of the trailing op; nil: the default
	// ones, [4096, 8192] and [16, 10⁶] in float32 and bfloat16.
	TrailingShapes []TrailingShape
}

// UnknownOpError is Run's error for an op it does not know.
type UnknownOpError struct{ Op string }

// Error describes e.
func (e UnknownOpError) Error() string { return fmt.Sprintf("bench: unknown op %q", e.Op) }

// NeedsFileError is Run's error for an op that needs Options.File
// without one.
type NeedsFileError struct{ Op string }

// Error describes e.
func (e NeedsFileError) Error() string {
	return fmt.Sprintf("bench: op %s needs a recording (Options.File)", e.Op)
}

// runner is one Run: the device, the options and the host device that
// reads and times the host's work.
type runner struct {
	ctx  context.Context
	dev  *compute.Device
	host *compute.Device
	opt  Options
	reps int
}

// host is the device of the ops that run on the host whatever device
// Run was given (reading, the motion histogram; timing is by the CPU
// device's Median).
var host = sync.OnceValues(func() (*compute.Device, error) {
	d, _, err := compute.Open("cpu")
	return d, err
})

// Run measures opt.Ops on dev in order and hands each result to opt.Row
// (and opt.DetectStages). It stops at the first error: an
// UnknownOpError, a NeedsFileError, or what an op returned.
func Run(ctx context.Context, dev *compute.Device, opt Options) error {
	h, err := host()
	if err != nil {
		return err
	}
	r := &runner{ctx: ctx, dev: dev, host: h, opt: opt, reps: max(opt.Reps, 1)}
	if r.opt.TrailingShapes == nil {
		r.opt.TrailingShapes = defaultTrailingShapes
	}
	which := opt.Ops
	for _, op := range which {
		var err error
		switch strings.TrimSpace(op) {
		case "read":
			err = r.read()
		case "covariance":
			err = r.secondMoment()
		case "preprocess", "detect":
			if op == "preprocess" || !slices.Contains(which, "preprocess") {
				err = r.window(slices.Contains(which, "preprocess"), slices.Contains(which, "detect"))
			}
		case "trailing":
			err = r.trailing()
		case "motion":
			err = r.motion()
		case "sort":
			err = r.sort()
		case "load":
			err = r.load()
		case "file":
			err = r.wholeFile()
		default:
			return UnknownOpError{op}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// row hands x to the caller.
func (r *runner) row(x Row) {
	if r.opt.Row != nil {
		r.opt.Row(x)
	}
}

// open opens opt.File with opt.Open.
func (r *runner) open() (recording.Recording, *probe.Probe, []string, error) {
	if r.opt.Open == nil {
		return nil, nil, nil, fmt.Errorf("bench: no Options.Open to open %s", r.opt.File)
	}
	return r.opt.Open(r.opt.File)
}
