package batch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"dspk/compute"
)

// ParseDevices turns a list of devices (dspk batch run's -devices) into
// device specs: a comma-separated list of cpu and cuda:N, or auto (every
// GPU of the host, else one cpu).
func ParseDevices(s string) ([]string, error) {
	if strings.TrimSpace(s) == "auto" {
		var gpus []string
		for _, d := range compute.Devices().Devices {
			if strings.HasPrefix(d.Spec, "cuda:") {
				gpus = append(gpus, d.Spec)
			}
		}
		if len(gpus) == 0 {
			return []string{"cpu"}, nil
		}
		return gpus, nil
	}
	var out []string
	for _, d := range strings.Split(s, ",") {
		d = strings.TrimSpace(d)
		if d != "cpu" && !strings.HasPrefix(d, "cuda:") {
			return nil, fmt.Errorf("-devices: %q is not cpu or cuda:N", d)
		}
		if n, ok := strings.CutPrefix(d, "cuda:"); ok {
			if _, err := strconv.Atoi(n); err != nil {
				return nil, fmt.Errorf("-devices: %q is not cpu or cuda:N", d)
			}
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-devices: no device")
	}
	return out, nil
}

// Runner runs plans on the devices of this host: one worker process per
// device, which opens its device once and runs one row at a time.
type Runner struct {
	// Executable is the program each worker process runs (default: this
	// process's executable).
	Executable string
	// WorkerArgs returns the arguments that make Executable a worker of
	// the plan file plan on device: a process that serves rows on its
	// standard input and output as [Worker.Serve] does (default:
	// [WorkerArgs], dspk's).
	WorkerArgs func(device, plan string) []string
	// Env, if not nil, is the workers' environment (default: this
	// process's).
	Env []string
	// Overwrite passes -overwrite to the workers ([Worker.Overwrite]),
	// before the last of their arguments (the plan).
	Overwrite bool
	// Out receives a line per row run and the closing counts (nil:
	// none); Log a line per row failed or skipped.
	Out, Log io.Writer
}

// WorkerArgs are the arguments of a dspk worker process of the plan file
// plan on device: batch worker -device DEVICE PLAN.
func WorkerArgs(device, plan string) []string {
	return []string{"batch", "worker", "-device", device, plan}
}

// Run runs the plan's rows phase by phase: the rows of a phase that are
// not done go to the devices' workers — one process per device, which
// opens its device once and runs one row at a time, the next as soon as
// one ends; a worker that dies is replaced for the next row. A row whose
// needs failed is skipped. Each row's messages go to
// OUTROOT/.dspk-batch/logs/row-N.log, the workers' own to
// worker-I-DEVICE.log. The plan must have been written or read
// ([Plan.Path]): the workers read it.
func (rn *Runner) Run(ctx context.Context, pl *Plan, devs []string) error {
	logs := LogDir(pl)
	if err := os.MkdirAll(logs, 0o777); err != nil {
		return err
	}
	if pl.path == "" {
		return fmt.Errorf("batch: the plan has no file for the workers to read: write it first")
	}
	planAbs, err := filepath.Abs(pl.path)
	if err != nil {
		return err
	}
	pr := &planRun{rn: rn, pl: pl, planAbs: planAbs, logs: logs, devs: devs, out: orDiscard(rn.Out), log: orDiscard(rn.Log),
		procs: make([]*workerProc, len(devs)), failed: map[int]bool{}}
	maxPhase := 0
	for _, r := range pl.Rows {
		maxPhase = max(maxPhase, r.Phase)
	}
	start := time.Now()
	// One worker process per device, kept across phases.
	defer func() {
		for _, w := range pr.procs {
			if w != nil {
				w.close()
			}
		}
	}()
	for phase := 0; phase <= maxPhase; phase++ {
		queue := pr.queue(phase)
		var wg sync.WaitGroup
		for i := range devs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pr.serve(ctx, i, queue)
			}()
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	nf := len(pr.failed) - pr.skipped
	fmt.Fprintf(pr.out, "%d rows ran, %d were done already, %d failed, %d skipped in %.1f s on %s\n", pr.ran, pr.done, nf, pr.skipped,
		time.Since(start).Seconds(), strings.Join(devs, ","))
	if len(pr.failed) > 0 {
		return fmt.Errorf("batch: %d rows failed and %d were skipped (logs in %s); run again to retry them", nf, pr.skipped, logs)
	}
	return nil
}

// planRun is one [Runner.Run] of a plan: its worker processes (one per
// device) and its counts.
type planRun struct {
	rn            *Runner
	pl            *Plan
	planAbs, logs string
	devs          []string
	out, log      io.Writer
	procs         []*workerProc

	mu                 sync.Mutex
	failed             map[int]bool // rows failed or skipped
	ran, skipped, done int
}

// queue returns the rows of phase to run: those not done whose needs did
// not fail (the others are counted skipped).
func (pr *planRun) queue(phase int) <-chan *Row {
	queue := make(chan *Row, len(pr.pl.Rows))
	for i := range pr.pl.Rows {
		r := &pr.pl.Rows[i]
		if r.Phase != phase {
			continue
		}
		blocked := false
		for _, n := range r.Needs {
			blocked = blocked || pr.failed[n]
		}
		switch {
		case blocked:
			pr.failed[r.ID] = true
			pr.skipped++
			fmt.Fprintf(pr.log, "row %d (%s %s %s): skipped, a row it needs failed\n", r.ID, r.Step, r.Recording, r.Probe)
		case pr.pl.Done(r):
			pr.done++
		default:
			queue <- r
		}
	}
	close(queue)
	return queue
}

// serve runs rows of queue on device i's worker process (started when
// there is none; replaced after one that died) until the queue is empty
// or ctx is done.
func (pr *planRun) serve(ctx context.Context, i int, queue <-chan *Row) {
	dev := pr.devs[i]
	w := pr.procs[i]
	defer func() { pr.procs[i] = w }()
	for r := range queue {
		if ctx.Err() != nil {
			return
		}
		t0 := time.Now()
		var err error
		if w == nil {
			w, err = pr.rn.startWorker(ctx, pr.planAbs, dev, filepath.Join(pr.logs, fmt.Sprintf("worker-%d-%s.log", i, strings.ReplaceAll(dev, ":", ""))))
		}
		if err == nil {
			if err = w.run(r.ID); errors.Is(err, errWorkerGone) {
				w.close()
				w = nil // a fresh process for the next row
			}
		}
		pr.mu.Lock()
		if err != nil {
			pr.failed[r.ID] = true
			fmt.Fprintf(pr.log, "row %d (%s %s %s) on %s failed after %.1f s: %v\n", r.ID, r.Step, r.Recording, r.Probe, dev, time.Since(t0).Seconds(), err)
		} else {
			pr.ran++
			fmt.Fprintf(pr.out, "row %d (%s %s %s) on %s: %.1f s -> %s\n", r.ID, r.Step, r.Recording, r.Probe, dev, time.Since(t0).Seconds(), r.Out)
		}
		pr.mu.Unlock()
	}
}

// workerProc is a running worker process.
type workerProc struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	log  *os.File
	stop func() bool
}

// errWorkerGone is returned when the worker process ended mid-row.
var errWorkerGone = errors.New("the worker process ended")

// startWorker starts a worker process on dev; its own messages go to
// logPath (appended).
func (rn *Runner) startWorker(ctx context.Context, plan, dev, logPath string) (*workerProc, error) {
	exe := rn.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	args := WorkerArgs
	if rn.WorkerArgs != nil {
		args = rn.WorkerArgs
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return nil, err
	}
	a := args(dev, plan)
	if rn.Overwrite {
		a = slices.Insert(a, len(a)-1, "-overwrite")
	}
	cmd := exec.Command(exe, a...)
	cmd.Env = rn.Env
	// The worker dies with this process, even one killed at once.
	cmd.SysProcAttr = workerAttr()
	cmd.Stderr = f
	in, err := cmd.StdinPipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	w := &workerProc{cmd: cmd, in: in, out: bufio.NewScanner(out), log: f}
	w.stop = context.AfterFunc(ctx, func() { cmd.Process.Signal(os.Interrupt) })
	return w, nil
}

// run has the worker run row id and waits for its answer.
func (w *workerProc) run(id int) error {
	if _, err := fmt.Fprintf(w.in, "%d\n", id); err != nil {
		return fmt.Errorf("%w: %v", errWorkerGone, err)
	}
	for w.out.Scan() {
		f := strings.SplitN(w.out.Text(), " ", 3)
		if len(f) < 2 || f[1] != strconv.Itoa(id) {
			continue
		}
		switch f[0] {
		case "done", "skip":
			return nil
		case "fail":
			if len(f) == 3 {
				return errors.New(f[2])
			}
			return errors.New("failed")
		}
	}
	err := w.cmd.Wait()
	w.cmd = nil
	return fmt.Errorf("%w (%v) while running row %d; see %s", errWorkerGone, err, id, w.log.Name())
}

// close ends the worker (its input closed, it exits) and waits for it.
func (w *workerProc) close() {
	w.in.Close()
	if w.cmd != nil {
		w.cmd.Wait()
	}
	w.stop()
	w.log.Close()
}

// orDiscard is w, or io.Discard for nil.
func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
