package main

import (
	"dspk/batch"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
				pl, err := batch.Read(args[0])
				if err != nil {
					return err
				}
				if *exe == "" {
					if *exe, err = os.Executable(); err != nil {
						return err
					}
				}
				so := batch.SlurmOptions{Account: *account, Partition: *partition, Extra: extra, GPUs: *gpus, Executable: absPath(*exe)}
				scripts, err := batch.WriteSlurm(pl, so)
				if err != nil {
					return err
				}
				if len(scripts) == 0 {
					fmt.Fprintf(cmdOut, "every row is done; nothing to submit\n")
					return nil
				}
				for _, s := range scripts {
					fmt.Fprintf(cmdOut, "phase %d: %d tasks (rows %s), --time=%s --mem=%dM: %s\n", s.Phase, len(s.Rows), joinInts(s.Rows), s.Time, s.MemMiB, s.Path)
				}
				if !*submit {
					fmt.Fprintf(cmdOut, "submit with: sh %s\n", filepath.Join(batch.SlurmDir(pl), "submit.sh"))
					return nil
				}
				jobs, err := batch.SubmitSlurm(pl, scripts)
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
				pl, err := batch.Read(args[0])
				if err != nil {
					return err
				}
				return batch.PrintStatus(cmdOut, pl)
			}
		},
	})
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
