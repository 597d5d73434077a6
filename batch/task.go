package batch

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"dspk/compute"
	"dspk/export"
	"dspk/pipeline"
)

// MarkFile is the file every folder a batch row writes holds (listed in
// the folder's manifest): the row's key, which says with which inputs and
// settings the folder was made.
const MarkFile = "batch.json"

// batchMark is the content of MarkFile.
type batchMark struct {
	Format string `json:"format"`
	Key    string `json:"key"`
	Step   string `json:"step"`
	Row    int    `json:"row"`
	Plan   string `json:"plan"`
	Device string `json:"device"`
}

// rowKey is the hash of everything a row's output depends on: the kind,
// the flags, the step, the data files (path, size, modification time),
// the stream, the window range and the folders it reads. Two runs of
// rows of equal keys write equal result files on one kind of device.
func rowKey(pl *Plan, r *Row) (string, error) {
	type stat struct {
		Path  string
		Size  int64
		MTime int64
	}
	var files []stat
	for _, f := range r.Files {
		st, err := os.Stat(f)
		if err != nil {
			return "", fmt.Errorf("batch: row %d: %w", r.ID, err)
		}
		files = append(files, stat{f, st.Size(), st.ModTime().UnixNano()})
	}
	b, _ := json.Marshal(map[string]any{
		"format": planFormat, "kind": pl.Kind, "args": pl.Args(), "step": r.Step, "files": files, "stream": r.Stream,
		"windows": r.Windows, "total": r.Total, "shard": r.Shard, "shards": r.Shards, "global": r.Global, "parts": r.Parts,
	})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// Done reports whether row r's output folder exists, was committed (it
// has its manifest) and was made with the row's key.
func (pl *Plan) Done(r *Row) bool {
	if _, err := os.Stat(filepath.Join(r.Out, export.ManifestName)); err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(r.Out, MarkFile))
	if err != nil {
		return false
	}
	var m batchMark
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	key, err := rowKey(pl, r)
	return err == nil && m.Key == key
}

// writeMark writes MarkFile into dir for row r.
func writeMark(dir string, pl *Plan, r *Row, device string) error {
	key, err := rowKey(pl, r)
	if err != nil {
		return err
	}
	return export.WriteJSON(filepath.Join(dir, MarkFile), batchMark{Format: planFormat, Key: key, Step: r.Step, Row: r.ID,
		Plan: pipeline.AbsPath(pl.path), Device: device})
}

// replaceable reports whether row r replaces a folder at its output
// path: false where there is none; true where a batch row of r's step
// wrote it (its batch.json says so) or w.Overwrite is set, the folder's
// manifest being checked when it is replaced. Any other folder or file
// there is refused with the way out.
func (w *Worker) replaceable(r *Row) (bool, error) {
	if _, err := os.Lstat(r.Out); err != nil {
		return false, nil
	}
	if w.Overwrite {
		return true, nil
	}
	var m batchMark
	b, err := os.ReadFile(filepath.Join(r.Out, MarkFile))
	if err != nil || json.Unmarshal(b, &m) != nil || m.Format != planFormat || m.Step != r.Step {
		return false, fmt.Errorf("batch: row %d: %s exists and was not written by a batch row of step %s (no %s of one); "+
			"batch run replaces only its own folders — run with -overwrite to replace a dspk folder there, or plan with another -o",
			r.ID, r.Out, r.Step, MarkFile)
	}
	return true, nil
}

// Worker runs rows of plans in this process, on devices it opens once
// (Close closes them), so that a process running rows back to back
// initialises each device once. Its hooks let a program follow the work;
// the zero value reports nothing. The folders it writes are those of the
// commands, figures included.
type Worker struct {
	// Progress, if set, returns the progress function of the passes of a
	// sort row whose messages go to log.
	Progress func(log io.Writer) func(pass string, done, total int)
	// Stage, if set, is told each stage of a sort as it starts.
	Stage func(stage string)
	// Started, if set, is called as a row starts.
	Started func(r *Row)
	// Overwrite lets a row replace a dspk folder of its kind at its
	// output path that no batch row wrote (dspk's -overwrite); without
	// it a row replaces only a folder a batch row of its step wrote.
	Overwrite bool

	devs map[string]*compute.Device
}

// device opens spec (a device spec: auto, cpu or cuda:N) or returns it
// opened before.
func (w *Worker) device(spec string) (*compute.Device, error) {
	if dev, ok := w.devs[spec]; ok {
		return dev, nil
	}
	dev, _, err := compute.Open(spec)
	if err != nil {
		return nil, err
	}
	if w.devs == nil {
		w.devs = map[string]*compute.Device{}
	}
	w.devs[spec] = dev
	return dev, nil
}

// Close closes every device the worker opened.
func (w *Worker) Close() {
	for k, dev := range w.devs {
		dev.Close()
		delete(w.devs, k)
	}
}

func (w *Worker) progress(log io.Writer) func(pass string, done, total int) {
	if w.Progress == nil {
		return nil
	}
	return w.Progress(log)
}

func (w *Worker) stage(s string) {
	if w.Stage != nil {
		w.Stage(s)
	}
}

// Run runs row id of the plan on device (a device spec) unless it is done
// already; it reports whether it ran. A row that needs others fails
// unless they are done. The row's messages go to log.
func (w *Worker) Run(ctx context.Context, pl *Plan, id int, device string, log io.Writer) (bool, error) {
	if id < 0 || id >= len(pl.Rows) {
		return false, fmt.Errorf("batch: row %d: the plan has rows 0 to %d", id, len(pl.Rows)-1)
	}
	r := &pl.Rows[id]
	if w.Started != nil {
		w.Started(r)
	}
	if pl.Done(r) {
		return false, nil
	}
	for _, n := range r.Needs {
		if !pl.Done(&pl.Rows[n]) {
			return false, fmt.Errorf("batch: row %d (%s %s %s) needs row %d (%s), which is not done", r.ID, r.Step, r.Recording, r.Probe, n, pl.Rows[n].Step)
		}
	}
	switch r.Step {
	case StepSort:
		return w.runSortRow(ctx, pl, r, device, log)
	case StepSortGlobal, StepSortShard:
		return w.runSortStep(ctx, pl, r, device, log)
	case StepSortMerge:
		return w.runSortMerge(ctx, pl, r, device, log)
	case StepDetect, StepGlobal, StepShard, StepMerge:
		return w.runDetectRow(ctx, pl, r, device, log)
	}
	return false, fmt.Errorf("batch: row %d: unknown step %q", r.ID, r.Step)
}

// Serve runs the rows whose ids it reads, one per line, from in, on
// device, and answers each on out with one line: "done N", "skip N"
// (done already) or "fail N MESSAGE". Each row's messages go to
// OUTROOT/.dspk-batch/logs/row-N.log. It is the worker process's side of
// [Runner].
func (w *Worker) Serve(ctx context.Context, pl *Plan, device string, in io.Reader, out io.Writer) error {
	logs := LogDir(pl)
	defer watchParent(ctx, time.Second)()
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
		f, err := os.Create(filepath.Join(logs, fmt.Sprintf("row-%d.log", id)))
		if err != nil {
			fmt.Fprintf(out, "fail %d %s\n", id, oneLine(err.Error()))
			continue
		}
		ran, err := w.Run(ctx, pl, id, device, f)
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

// watchParent checks every interval whether the process that started
// this one is gone (this one was handed to another parent) and then sends
// this process SIGTERM, which stops its row as an interrupt does: a
// worker must not run on without its batch run (where the system has no
// parent-death signal, see workerAttr, or that signal was lost). Once ctx
// is done the parent-death signal is being handled, and a second signal
// would exit at once, leaving the row's temporary folder: none is sent.
// It returns the function that stops the watch.
func watchParent(ctx context.Context, interval time.Duration) (stop func()) {
	ppid := os.Getppid()
	t := time.NewTicker(interval)
	done := make(chan struct{})
	go func() {
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if os.Getppid() != ppid {
					if ctx.Err() != nil {
						return
					}
					if p, err := os.FindProcess(os.Getpid()); err == nil {
						p.Signal(syscall.SIGTERM)
					}
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// oneLine is s on one line, its runs of white space one space each.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// LogDir is the folder of a plan's logs: each row's (row-N.log), each
// worker process's and SLURM's.
func LogDir(pl *Plan) string { return filepath.Join(pl.OutRoot, ".dspk-batch", "logs") }

// checkWindows refuses a recording whose schedule no longer has the
// plan's window count.
func checkWindows(r *Row, name string, got int) error {
	if got != r.Total {
		return fmt.Errorf("batch: row %d: %s has %d windows now, the plan says %d; plan again", r.ID, name, got, r.Total)
	}
	return nil
}

// testPause waits, when DSPK_BATCH_TEST_PAUSE is "ROW:SECONDS" and row
// is ROW, that many seconds with every result file written in the
// temporary folder and before it is committed: the SLURM test kills a
// task there to show that a killed task leaves no folder behind.
func testPause(ctx context.Context, row int) error {
	v := os.Getenv("DSPK_BATCH_TEST_PAUSE")
	id, secs, ok := strings.Cut(v, ":")
	if !ok || id != strconv.Itoa(row) {
		return nil
	}
	d, err := strconv.ParseFloat(secs, 64)
	if err != nil {
		return nil
	}
	select {
	case <-time.After(time.Duration(d * float64(time.Second))):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
