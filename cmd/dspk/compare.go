package main

import (
	"encoding/json"
	"flag"
	"io"

	"dspk/compare"
)

func init() {
	register(&command{
		name:  "compare",
		short: "score detected spikes, a sort's units or a drift estimate against ground truth (or one sort against another)",
		usage: "-truth SIMDIR|SORTDIR|TRUTHDIR [-rate HZ] DETDIR|SORTDIR|DRIFTDIR",
		example: `dspk simulate -o sim1 -duration 60s
dspk detect -o det1 sim1/sim_g0_t0.imec0.ap.bin
dspk compare -truth sim1 det1              # sim1 or sim1/truth
dspk compare -json -truth sim1/truth det1
dspk compare -truth sim1/truth -units sort1
dspk compare -truth sort-cpu sort-gpu      # two sorts: units of one against the other
dspk compare -truth si/truth -rate 30000 sort1  # spike_times.npy + spike_clusters.npy, no params.py
dspk drift -o drift1 sim1/sim_g0_t0.imec0.ap.bin
dspk compare -truth sim1/truth drift1`,
		writesNothing: true,
		setup: func(fs *flag.FlagSet) func([]string) error {
			truthDir := fs.String("truth", "", "reference (required): a folder dspk simulate wrote (or its truth/), or any folder of spike_times.npy + spike_clusters.npy "+
				"(another sort, a SpikeInterface truth; its rate from params.py or -rate)")
			asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
			opt := compare.DefaultOptions()
			fs.Int64Var(&opt.MaxLag, "max-lag", opt.MaxLag, "largest time difference in samples")
			fs.Float64Var(&opt.MaxDepth, "max-depth", opt.MaxDepth, "largest depth difference in µm (exclusive)")
			units := addUnitFlags(fs)
			return func(args []string) error {
				if *truthDir == "" {
					return usagef("-truth DIR is required: dspk compare -truth DIR FOLDER, with DIR a dspk simulate folder (or its truth/) " +
						"or a reference sort folder, and FOLDER the detect, sort or drift folder to score")
				}
				if len(args) != 1 {
					return usagef("compare takes one detect, sort or drift folder after -truth %s; got %d arguments", *truthDir, len(args))
				}
				*truthDir = compare.TruthDir(*truthDir)
				if units.wanted(args[0]) {
					return units.run(*truthDir, args[0], *asJSON)
				}
				mr, err := compareMotion(*truthDir, args[0])
				if err != nil {
					return err
				}
				if mr != nil && !compare.HasSpikes(args[0]) {
					return printMotionOnly(cmdOut, mr, *asJSON)
				}
				r, warnings, err := compare.MatchDirs(*truthDir, args[0], opt)
				if err != nil {
					return err
				}
				printWarnings(cmdErr, warnings)
				if *asJSON {
					enc := json.NewEncoder(cmdOut)
					enc.SetIndent("", "  ")
					return enc.Encode(struct {
						compare.Report
						Motion   *compare.MotionReport `json:"motion,omitempty"`
						Warnings []string              `json:"warnings,omitempty"`
					}{r, mr, warnings})
				}
				r.WriteText(cmdOut)
				if mr != nil {
					mr.WriteText(cmdOut)
				}
				return nil
			}
		},
	})
}

// printReport prints the spike comparison r as a table.
func printReport(w io.Writer, r compare.Report) { r.WriteText(w) }
