package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"dspk/compute"
)

func init() {
	register(&command{
		name:  "batch run",
		short: "run a batch plan here: one process per device, rows back to back, resumable",
		usage: "PLAN",
		example: `dspk batch run out/plan.json
dspk batch run -devices cuda:0,cuda:1 out/plan.json
dspk batch run -devices cpu,cpu out/plan.json`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			devices := fs.String("devices", "auto", "devices to run rows on, one process each: a comma-separated list of cpu and cuda:N,\n"+
				"or auto (every GPU of the host, else one cpu)")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("batch run takes one plan file")
				}
				pl, err := readPlan(args[0])
				if err != nil {
					return err
				}
				devs, err := parseDevices(*devices)
				if err != nil {
					return usagef("%v", err)
				}
				return runPlan(cmdCtx, pl, devs, cmdOut, cmdErr)
			}
		},
	})
}

func init() {
	register(&command{
		name:    "batch worker",
		short:   "run rows of a batch plan on one device, row ids read from standard input (what batch run starts)",
		usage:   "PLAN",
		example: `printf '0\n3\n' | dspk batch worker -device cuda:0 out/plan.json`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			device := fs.String("device", "auto", "compute device: auto, cpu or cuda:N")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("batch worker takes one plan file")
				}
				pl, err := readPlan(args[0])
				if err != nil {
					return err
				}
				return worker(cmdCtx, pl, *device, os.Stdin, cmdOut)
			}
		},
	})
}

// worker runs the rows whose ids it reads, one per line, from in, on one
// device opened once, and answers each on out with one line: "done N",
// "skip N" (done already) or "fail N MESSAGE". Each row's messages go to
// OUTROOT/.dspk-batch/logs/row-N.log.
func worker(ctx context.Context, pl *Plan, device string, in io.Reader, out io.Writer) error {
	devs := devices{}
	defer devs.Close()
	logs := filepath.Join(pl.OutRoot, ".dspk-batch", "logs")
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		id, err := strconv.Atoi(line)
		if err != nil || id < 0 || id >= len(pl.Rows) {
			fmt.Fprintf(out, "fail %s no such row\n", line)
			continue
		}
		r := &pl.Rows[id]
		setOutput(r.Out)
		f, err := os.Create(filepath.Join(logs, fmt.Sprintf("row-%d.log", id)))
		if err != nil {
			fmt.Fprintf(out, "fail %d %s\n", id, oneLine(err.Error()))
			continue
		}
		ran, err := runRow(ctx, pl, r, device, devs, f)
		switch {
		case err != nil:
			fmt.Fprintf(f, "dspk batch worker: %s\n", oneLine(err.Error()))
			fmt.Fprintf(out, "fail %d %s\n", id, oneLine(err.Error()))
		case ran:
			fmt.Fprintf(out, "done %d\n", id)
		default:
			fmt.Fprintf(out, "skip %d\n", id)
		}
		f.Close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return sc.Err()
}

// parseDevices turns the -devices value into device specs.
func parseDevices(s string) ([]string, error) {
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

// taskCommand returns the command that runs "dspk args..." in a process
// of its own; tests replace it.
var taskCommand = func(args []string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = "dspk"
	}
	return exec.Command(exe, args...)
}

// runPlan runs the plan's rows phase by phase: the rows of a phase that
// are not done go to the devices' workers — one process per device
// (dspk batch worker), which opens its device once and runs one row at a
// time, the next as soon as one ends; a worker that dies is replaced for
// the next row. A row whose needs failed is skipped. Each row's messages
// go to OUTROOT/.dspk-batch/logs/row-N.log, the workers' own to
// worker-I-DEVICE.log.
func runPlan(ctx context.Context, pl *Plan, devs []string, out, log io.Writer) error {
	logs := filepath.Join(pl.OutRoot, ".dspk-batch", "logs")
	if err := os.MkdirAll(logs, 0o777); err != nil {
		return err
	}
	planAbs, err := filepath.Abs(pl.path)
	if err != nil {
		return err
	}
	failed := map[int]bool{}
	var mu sync.Mutex
	ran, skipped, done := 0, 0, 0
	maxPhase := 0
	for _, r := range pl.Rows {
		maxPhase = max(maxPhase, r.Phase)
	}
	start := time.Now()
	// One worker process per device, kept across phases.
	procs := make([]*workerProc, len(devs))
	defer func() {
		for _, w := range procs {
			if w != nil {
				w.close()
			}
		}
	}()
	for phase := 0; phase <= maxPhase; phase++ {
		queue := make(chan *Row, len(pl.Rows))
		for i := range pl.Rows {
			r := &pl.Rows[i]
			if r.Phase != phase {
				continue
			}
			blocked := false
			for _, n := range r.Needs {
				blocked = blocked || failed[n]
			}
			switch {
			case blocked:
				failed[r.ID] = true
				skipped++
				fmt.Fprintf(log, "row %d (%s %s %s): skipped, a row it needs failed\n", r.ID, r.Step, r.Recording, r.Probe)
			case rowDone(pl, r):
				done++
			default:
				queue <- r
			}
		}
		close(queue)
		var wg sync.WaitGroup
		for i, dev := range devs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := procs[i]
				defer func() { procs[i] = w }()
				for r := range queue {
					if ctx.Err() != nil {
						return
					}
					t0 := time.Now()
					var err error
					if w == nil {
						w, err = startWorker(ctx, planAbs, dev, filepath.Join(logs, fmt.Sprintf("worker-%d-%s.log", i, strings.ReplaceAll(dev, ":", ""))))
					}
					if err == nil {
						if err = w.run(r.ID); errors.Is(err, errWorkerGone) {
							w.close()
							w = nil // a fresh process for the next row
						}
					}
					mu.Lock()
					if err != nil {
						failed[r.ID] = true
						fmt.Fprintf(log, "row %d (%s %s %s) on %s failed after %.1f s: %v\n", r.ID, r.Step, r.Recording, r.Probe, dev, time.Since(t0).Seconds(), err)
					} else {
						ran++
						fmt.Fprintf(out, "row %d (%s %s %s) on %s: %.1f s -> %s\n", r.ID, r.Step, r.Recording, r.Probe, dev, time.Since(t0).Seconds(), r.Out)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	nf := len(failed) - skipped
	fmt.Fprintf(out, "%d rows ran, %d were done already, %d failed, %d skipped in %.1f s on %s\n", ran, done, nf, skipped,
		time.Since(start).Seconds(), strings.Join(devs, ","))
	if len(failed) > 0 {
		return fmt.Errorf("batch: %d rows failed and %d were skipped (logs in %s); run again to retry them", nf, skipped, logs)
	}
	return nil
}

// workerProc is a running "dspk batch worker" process.
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
func startWorker(ctx context.Context, plan, dev, logPath string) (*workerProc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return nil, err
	}
	cmd := taskCommand([]string{"batch", "worker", "-device", dev, plan})
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
