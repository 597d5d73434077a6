package batch

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"dspk/export"
)

// absPath is p made absolute where it can be.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// SlurmOptions say how the SLURM jobs of a plan run.
type SlurmOptions struct {
	// Account and Partition are sbatch's --account and --partition ("":
	// none).
	Account, Partition string
	// Extra are more sbatch options for every job (e.g. --qos=short).
	Extra []string
	// GPUs asks for one GPU per task (--gres=gpu:1) and runs it on
	// cuda:0; else on the CPU.
	GPUs bool
	// Executable is the dspk executable the jobs run (an absolute path).
	Executable string
}

// SlurmScript is one phase's job array.
type SlurmScript struct {
	// Phase is the phase of its rows, Rows their ids (the array's task
	// ids).
	Phase int
	Rows  []int
	// Time and MemMiB are each task's limits (--time, --mem).
	Time   string
	MemMiB int64
	// Path is the sbatch script.
	Path string
}

// SlurmDir is where the scripts and job ids of a plan go.
func SlurmDir(pl *Plan) string { return filepath.Join(pl.OutRoot, ".dspk-batch", "slurm") }

// slurmLimits are a phase's limits by the rule of docs/cluster-running.md:
// time 4× the longest row's estimate, at least 10 minutes; memory 1.5×
// the largest row's estimate, at least 2 GiB.
func slurmLimits(rows []*Row) (string, int64) {
	var est float64
	var mem int64
	for _, r := range rows {
		est, mem = max(est, r.EstSeconds), max(mem, r.EstMemBytes)
	}
	minutes := int64(max(10, math.Ceil(4*est/60)))
	mib := max(2048, int64(math.Ceil(1.5*float64(mem)/(1<<20))))
	return fmt.Sprintf("%d:%02d:00", minutes/60, minutes%60), mib
}

// WriteSlurm writes one sbatch script per phase that has rows not done
// (an array of their row ids, each task running dspk batch task) and
// submit.sh, which submits them in order, each depending on the one
// before (afterok).
func WriteSlurm(pl *Plan, so SlurmOptions) ([]SlurmScript, error) {
	dir := SlurmDir(pl)
	logs := LogDir(pl)
	for _, d := range []string{dir, logs} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			return nil, err
		}
	}
	planAbs := absPath(pl.path)
	byPhase := map[int][]*Row{}
	maxPhase := 0
	for i := range pl.Rows {
		r := &pl.Rows[i]
		maxPhase = max(maxPhase, r.Phase)
		if !pl.Done(r) {
			byPhase[r.Phase] = append(byPhase[r.Phase], r)
		}
	}
	device := "cpu"
	if so.GPUs {
		device = "cuda:0" // SLURM makes the task's GPU the first visible one
	}
	var out []SlurmScript
	var submit strings.Builder
	submit.WriteString("#!/bin/sh\n# Submits the job arrays of " + planAbs + " in phase order.\nset -e\ndep=\n")
	for phase := 0; phase <= maxPhase; phase++ {
		rows := byPhase[phase]
		if len(rows) == 0 {
			continue
		}
		s := SlurmScript{Phase: phase}
		for _, r := range rows {
			s.Rows = append(s.Rows, r.ID)
		}
		s.Time, s.MemMiB = slurmLimits(rows)
		var b strings.Builder
		fmt.Fprintf(&b, "#!/bin/bash\n")
		fmt.Fprintf(&b, "#SBATCH --job-name=dspk-%s-p%d\n", filepath.Base(pl.OutRoot), phase)
		fmt.Fprintf(&b, "#SBATCH --array=%s\n", joinInts(s.Rows))
		fmt.Fprintf(&b, "#SBATCH --time=%s\n#SBATCH --mem=%dM\n#SBATCH --ntasks=1\n", s.Time, s.MemMiB)
		fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(logs, "slurm-%A_%a.log"))
		if so.Account != "" {
			fmt.Fprintf(&b, "#SBATCH --account=%s\n", so.Account)
		}
		if so.Partition != "" {
			fmt.Fprintf(&b, "#SBATCH --partition=%s\n", so.Partition)
		}
		if so.GPUs {
			fmt.Fprintf(&b, "#SBATCH --gres=gpu:1\n")
		}
		for _, e := range so.Extra {
			fmt.Fprintf(&b, "#SBATCH %s\n", e)
		}
		fmt.Fprintf(&b, "# One plan row per array task: the task id is the row id. A row that is\n"+
			"# done already (its folder's batch.json) is skipped; a failed row leaves no folder.\n")
		fmt.Fprintf(&b, "exec %s batch task -device %s %s \"$SLURM_ARRAY_TASK_ID\"\n", shellQuote(so.Executable), device, shellQuote(planAbs))
		s.Path = filepath.Join(dir, fmt.Sprintf("phase-%d.sbatch", phase))
		if err := os.WriteFile(s.Path, []byte(b.String()), 0o666); err != nil {
			return nil, fmt.Errorf("batch: %w", err)
		}
		fmt.Fprintf(&submit, "j=$(sbatch --parsable --kill-on-invalid-dep=yes ${dep:+--dependency=afterok:$dep} %s)\necho \"phase %d: job $j\"\ndep=${j%%%%;*}\n",
			shellQuote(s.Path), phase)
		out = append(out, s)
	}
	if err := os.WriteFile(filepath.Join(dir, "submit.sh"), []byte(submit.String()), 0o777); err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	return out, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// SlurmJob is one submitted phase, as jobs.json records it.
type SlurmJob struct {
	Phase int    `json:"phase"`
	Job   string `json:"job"`
	Rows  []int  `json:"rows"`
}

// SubmitSlurm submits the scripts in order with sbatch, each depending on
// the one before, and appends the job ids to jobs.json.
func SubmitSlurm(pl *Plan, scripts []SlurmScript) ([]SlurmJob, error) {
	var jobs []SlurmJob
	dep := ""
	for _, s := range scripts {
		args := []string{"--parsable", "--kill-on-invalid-dep=yes"}
		if dep != "" {
			args = append(args, "--dependency=afterok:"+dep)
		}
		args = append(args, s.Path)
		b, err := exec.Command("sbatch", args...).CombinedOutput()
		if err != nil {
			return jobs, fmt.Errorf("batch: sbatch %s: %v: %s", s.Path, err, strings.TrimSpace(string(b)))
		}
		id, _, _ := strings.Cut(strings.TrimSpace(string(b)), ";")
		dep = id
		jobs = append(jobs, SlurmJob{Phase: s.Phase, Job: id, Rows: s.Rows})
	}
	path := filepath.Join(SlurmDir(pl), "jobs.json")
	var all []SlurmJob
	if b, err := os.ReadFile(path); err == nil {
		json.Unmarshal(b, &all)
	}
	all = append(all, jobs...)
	return jobs, export.WriteJSON(path, all)
}

// SlurmStates returns the SLURM state of every row of the plan's latest
// submission of it, from sacct (or, where accounting is off, squeue:
// scontrol for recently finished jobs, and squeue).
func SlurmStates(pl *Plan) map[int]string {
	b, err := os.ReadFile(filepath.Join(SlurmDir(pl), "jobs.json"))
	if err != nil {
		return nil
	}
	var jobs []SlurmJob
	if json.Unmarshal(b, &jobs) != nil {
		return nil
	}
	states := map[int]string{}
	for _, j := range jobs {
		for _, r := range j.Rows {
			states[r] = "SUBMITTED"
		}
		seen := map[int]bool{}
		if out, err := exec.Command("sacct", "-n", "-P", "-X", "-j", j.Job, "--format=JobID,State").Output(); err == nil {
			for _, l := range strings.Split(string(out), "\n") {
				if id, st, ok := parseTaskState(l, j.Job); ok {
					states[id], seen[id] = st, true
				}
			}
		}
		if out, err := exec.Command("scontrol", "-o", "show", "job", j.Job).Output(); err == nil {
			// Finished jobs stay here for the controller's MinJobAge.
			for _, l := range strings.Split(string(out), "\n") {
				f := map[string]string{}
				for _, kv := range strings.Fields(l) {
					if k, v, ok := strings.Cut(kv, "="); ok {
						f[k] = v
					}
				}
				if n, err := strconv.Atoi(f["ArrayTaskId"]); err == nil && f["ArrayJobId"] == j.Job && !seen[n] {
					states[n], seen[n] = f["JobState"], true
				}
			}
		}
		if out, err := exec.Command("squeue", "-h", "-r", "-j", j.Job, "-o", "%i|%T").Output(); err == nil {
			for _, l := range strings.Split(string(out), "\n") {
				if id, st, ok := parseTaskState(l, j.Job); ok {
					states[id], seen[id] = st, true
				}
			}
		}
		for _, r := range j.Rows {
			if !seen[r] && states[r] == "SUBMITTED" {
				states[r] = "GONE" // neither queued nor in the accounting
			}
		}
	}
	return states
}

// parseTaskState parses "JOB_TASK|STATE".
func parseTaskState(line, job string) (int, string, bool) {
	id, st, ok := strings.Cut(strings.TrimSpace(line), "|")
	if !ok {
		return 0, "", false
	}
	rest, ok := strings.CutPrefix(id, job+"_")
	if !ok {
		return 0, "", false
	}
	n, err := strconv.Atoi(rest)
	if err != nil {
		return 0, "", false
	}
	return n, strings.Fields(st + " ")[0], true
}

// State says what row r's output folder holds: done (committed with the
// row's key), stale (committed with another key), writing (a temporary
// folder of a live process) or missing.
func (pl *Plan) State(r *Row) string {
	if pl.Done(r) {
		return "done"
	}
	if _, err := os.Stat(r.Out); err == nil {
		return "stale"
	}
	tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(r.Out), "."+filepath.Base(r.Out)+".tmp-*"))
	if len(tmps) > 0 {
		return "writing"
	}
	return "missing"
}

// PrintStatus writes one line per row of the plan: its folder's state
// ([Plan.State]) and its SLURM state ([SlurmStates]), then the counts.
func PrintStatus(w io.Writer, pl *Plan) error {
	states := SlurmStates(pl)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTEP\tRECORDING\tPROBE\tSHARD\tFOLDER\tSLURM\tOUTPUT")
	count := map[string]int{}
	for i := range pl.Rows {
		r := &pl.Rows[i]
		st := pl.State(r)
		count[st]++
		sl := states[r.ID]
		if sl == "" {
			sl = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", r.ID, r.Step, r.Recording, r.Probe, r.Shard+1, r.Shards, st, sl, r.Out)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d rows: %d done, %d missing, %d writing, %d stale\n", len(pl.Rows), count["done"], count["missing"], count["writing"], count["stale"])
	return nil
}
