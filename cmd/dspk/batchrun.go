package main

import (
	"context"
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
// are not done go to the devices' workers, each running one row at a
// time in a process of its own (dspk batch task), the next as soon as
// one ends. A row whose needs failed is skipped. Each row's output goes
// to OUTROOT/.dspk-batch/logs/row-N.log.
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
		for _, dev := range devs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range queue {
					if ctx.Err() != nil {
						return
					}
					t0 := time.Now()
					err := runTaskProcess(ctx, planAbs, r.ID, dev, filepath.Join(logs, fmt.Sprintf("row-%d.log", r.ID)))
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

// runTaskProcess runs one row in a process of its own, its output in
// logPath; the error carries the log's last line.
func runTaskProcess(ctx context.Context, plan string, id int, dev, logPath string) error {
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := taskCommand([]string{"batch", "task", "-device", dev, plan, strconv.Itoa(id)})
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { cmd.Process.Signal(os.Interrupt) })
	defer stop()
	if err := cmd.Wait(); err != nil {
		b, _ := os.ReadFile(logPath)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		return fmt.Errorf("%v: %s", err, lines[len(lines)-1])
	}
	return nil
}
