package main

import (
	"encoding/json"
	"flag"
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

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func init() {
	register(&command{
		name:  "batch slurm",
		short: "write (and with -submit, submit) SLURM job arrays for the rows of a batch plan that are not done",
		usage: "PLAN",
		example: `dspk batch slurm -gpus -account lab -partition gpu -submit out/plan.json
dspk batch slurm -sbatch-opt=--qos=short -sbatch-opt=--constraint=h100 out/plan.json
dspk batch status out/plan.json`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			account := fs.String("account", "", "SLURM account (--account)")
			partition := fs.String("partition", "", "SLURM partition (--partition)")
			var extra stringList
			fs.Var(&extra, "sbatch-opt", "an extra sbatch option for every job, e.g. -sbatch-opt=--qos=short (repeatable)")
			gpus := fs.Bool("gpus", false, "ask for one GPU per task (--gres=gpu:1) and run it on cuda:0")
			submit := fs.Bool("submit", false, "submit the jobs with sbatch (each phase's array depends on the one before)")
			exe := fs.String("dspk", "", "the dspk executable the jobs run (default: this one)")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("batch slurm takes one plan file")
				}
				pl, err := readPlan(args[0])
				if err != nil {
					return err
				}
				if *exe == "" {
					if *exe, err = os.Executable(); err != nil {
						return err
					}
				}
				so := slurmOptions{account: *account, partition: *partition, extra: extra, gpus: *gpus, exe: pipelineAbs(*exe)}
				scripts, err := writeSlurm(pl, so)
				if err != nil {
					return err
				}
				if len(scripts) == 0 {
					fmt.Fprintf(cmdOut, "every row is done; nothing to submit\n")
					return nil
				}
				for _, s := range scripts {
					fmt.Fprintf(cmdOut, "phase %d: %d tasks (rows %s), --time=%s --mem=%dM: %s\n", s.phase, len(s.rows), joinInts(s.rows), s.time, s.memMiB, s.path)
				}
				if !*submit {
					fmt.Fprintf(cmdOut, "submit with: sh %s\n", filepath.Join(slurmDir(pl), "submit.sh"))
					return nil
				}
				jobs, err := submitSlurm(pl, scripts)
				if err != nil {
					return err
				}
				for _, j := range jobs {
					fmt.Fprintf(cmdOut, "submitted phase %d as job %s\n", j.Phase, j.Job)
				}
				return nil
			}
		},
	})
	register(&command{
		name:    "batch status",
		short:   "report each row of a batch plan: from its output folder and from SLURM",
		usage:   "PLAN",
		example: `dspk batch status out/plan.json`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("batch status takes one plan file")
				}
				pl, err := readPlan(args[0])
				if err != nil {
					return err
				}
				return printStatus(cmdOut, pl)
			}
		},
	})
}

func pipelineAbs(p string) string {
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

// slurmOptions are the flags of batch slurm.
type slurmOptions struct {
	account, partition string
	extra              []string
	gpus               bool
	exe                string
}

// slurmScript is one phase's job array.
type slurmScript struct {
	phase  int
	rows   []int
	time   string
	memMiB int64
	path   string
}

// slurmDir is where the scripts, job ids and logs of a plan go.
func slurmDir(pl *Plan) string { return filepath.Join(pl.OutRoot, ".dspk-batch", "slurm") }

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

// writeSlurm writes one sbatch script per phase that has rows not done
// (an array of their row ids) and submit.sh, which submits them in order,
// each depending on the one before (afterok).
func writeSlurm(pl *Plan, so slurmOptions) ([]slurmScript, error) {
	dir := slurmDir(pl)
	logs := filepath.Join(pl.OutRoot, ".dspk-batch", "logs")
	for _, d := range []string{dir, logs} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			return nil, err
		}
	}
	planAbs := pipelineAbs(pl.path)
	byPhase := map[int][]*Row{}
	maxPhase := 0
	for i := range pl.Rows {
		r := &pl.Rows[i]
		maxPhase = max(maxPhase, r.Phase)
		if !rowDone(pl, r) {
			byPhase[r.Phase] = append(byPhase[r.Phase], r)
		}
	}
	device := "cpu"
	if so.gpus {
		device = "cuda:0" // SLURM makes the task's GPU the first visible one
	}
	var out []slurmScript
	var submit strings.Builder
	submit.WriteString("#!/bin/sh\n# Submits the job arrays of " + planAbs + " in phase order.\nset -e\ndep=\n")
	for phase := 0; phase <= maxPhase; phase++ {
		rows := byPhase[phase]
		if len(rows) == 0 {
			continue
		}
		s := slurmScript{phase: phase}
		for _, r := range rows {
			s.rows = append(s.rows, r.ID)
		}
		s.time, s.memMiB = slurmLimits(rows)
		var b strings.Builder
		fmt.Fprintf(&b, "#!/bin/bash\n")
		fmt.Fprintf(&b, "#SBATCH --job-name=dspk-%s-p%d\n", filepath.Base(pl.OutRoot), phase)
		fmt.Fprintf(&b, "#SBATCH --array=%s\n", joinInts(s.rows))
		fmt.Fprintf(&b, "#SBATCH --time=%s\n#SBATCH --mem=%dM\n#SBATCH --ntasks=1\n", s.time, s.memMiB)
		fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(logs, "slurm-%A_%a.log"))
		if so.account != "" {
			fmt.Fprintf(&b, "#SBATCH --account=%s\n", so.account)
		}
		if so.partition != "" {
			fmt.Fprintf(&b, "#SBATCH --partition=%s\n", so.partition)
		}
		if so.gpus {
			fmt.Fprintf(&b, "#SBATCH --gres=gpu:1\n")
		}
		for _, e := range so.extra {
			fmt.Fprintf(&b, "#SBATCH %s\n", e)
		}
		fmt.Fprintf(&b, "# One plan row per array task: the task id is the row id. A row that is\n"+
			"# done already (its folder's batch.json) is skipped; a failed row leaves no folder.\n")
		fmt.Fprintf(&b, "exec %s batch task -device %s %s \"$SLURM_ARRAY_TASK_ID\"\n", shellQuote(so.exe), device, shellQuote(planAbs))
		s.path = filepath.Join(dir, fmt.Sprintf("phase-%d.sbatch", phase))
		if err := os.WriteFile(s.path, []byte(b.String()), 0o666); err != nil {
			return nil, fmt.Errorf("batch: %w", err)
		}
		fmt.Fprintf(&submit, "j=$(sbatch --parsable --kill-on-invalid-dep=yes ${dep:+--dependency=afterok:$dep} %s)\necho \"phase %d: job $j\"\ndep=${j%%%%;*}\n",
			shellQuote(s.path), phase)
		out = append(out, s)
	}
	if err := os.WriteFile(filepath.Join(dir, "submit.sh"), []byte(submit.String()), 0o777); err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	return out, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// slurmJob is one submitted phase, as jobs.json records it.
type slurmJob struct {
	Phase int    `json:"phase"`
	Job   string `json:"job"`
	Rows  []int  `json:"rows"`
}

// submitSlurm submits the scripts in order, each depending on the one
// before, and appends the job ids to jobs.json.
func submitSlurm(pl *Plan, scripts []slurmScript) ([]slurmJob, error) {
	var jobs []slurmJob
	dep := ""
	for _, s := range scripts {
		args := []string{"--parsable", "--kill-on-invalid-dep=yes"}
		if dep != "" {
			args = append(args, "--dependency=afterok:"+dep)
		}
		args = append(args, s.path)
		b, err := exec.Command("sbatch", args...).CombinedOutput()
		if err != nil {
			return jobs, fmt.Errorf("batch: sbatch %s: %v: %s", s.path, err, strings.TrimSpace(string(b)))
		}
		id, _, _ := strings.Cut(strings.TrimSpace(string(b)), ";")
		dep = id
		jobs = append(jobs, slurmJob{Phase: s.phase, Job: id, Rows: s.rows})
	}
	path := filepath.Join(slurmDir(pl), "jobs.json")
	var all []slurmJob
	if b, err := os.ReadFile(path); err == nil {
		json.Unmarshal(b, &all)
	}
	all = append(all, jobs...)
	return jobs, export.WriteJSON(path, all)
}

// slurmStates returns the SLURM state of every row of the plan's latest
// submission of it, from sacct (or, where accounting is off, squeue:
// scontrol for recently finished jobs, and squeue).
func slurmStates(pl *Plan) map[int]string {
	b, err := os.ReadFile(filepath.Join(slurmDir(pl), "jobs.json"))
	if err != nil {
		return nil
	}
	var jobs []slurmJob
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

// rowState says what a row's output folder holds: done (committed with
// the row's key), stale (committed with another key), writing (a
// temporary folder of a live process) or missing.
func rowState(pl *Plan, r *Row) string {
	if rowDone(pl, r) {
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

// printStatus writes one line per row: its folder's state and its SLURM
// state, then the counts.
func printStatus(w io.Writer, pl *Plan) error {
	states := slurmStates(pl)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTEP\tRECORDING\tPROBE\tSHARD\tFOLDER\tSLURM\tOUTPUT")
	count := map[string]int{}
	for i := range pl.Rows {
		r := &pl.Rows[i]
		st := rowState(pl, r)
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
