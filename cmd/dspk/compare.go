package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"dspk/compare"
	"dspk/export"
	"dspk/sim"
)

func init() {
	register(&command{
		name:  "compare",
		short: "match detected spikes against ground truth: recall, precision, recall per amplitude band",
		usage: "DETDIR",
		example: `dspk simulate -o sim1 -duration 60s
dspk detect -o det1 sim1/sim_g0_t0.imec0.ap.bin
dspk compare -truth sim1/truth det1
dspk compare -json -truth sim1/truth det1`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			truthDir := fs.String("truth", "", "ground-truth folder written by dspk simulate (required)")
			asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
			opt := compare.DefaultOptions()
			fs.Int64Var(&opt.MaxLag, "max-lag", opt.MaxLag, "largest time difference in samples")
			fs.Float64Var(&opt.MaxDepth, "max-depth", opt.MaxDepth, "largest depth difference in µm (exclusive)")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("compare takes one detection folder")
				}
				if *truthDir == "" {
					return usagef("-truth DIR is required")
				}
				r, err := compareDirs(*truthDir, args[0], opt)
				if err != nil {
					return err
				}
				if *asJSON {
					enc := json.NewEncoder(cmdOut)
					enc.SetIndent("", "  ")
					return enc.Encode(r)
				}
				printReport(cmdOut, r)
				return nil
			}
		},
	})
}

// compareDirs matches the spikes of a detection folder against a
// ground-truth folder.
func compareDirs(truthDir, detDir string, opt compare.Options) (compare.Report, error) {
	truth, err := sim.ReadTruthDir(truthDir)
	if err != nil {
		return compare.Report{}, err
	}
	det, err := readDetections(detDir)
	if err != nil {
		return compare.Report{}, err
	}
	return compare.Match(compare.Spikes{Times: truth.SpikeTimes, Y: truth.SpikeY(), Amplitude: truth.SpikeAmplitude()}, det, opt)
}

// readDetections reads spike_times.npy and spike_positions.npy of a
// detection folder.
func readDetections(dir string) (compare.Spikes, error) {
	a, err := readNPY(filepath.Join(dir, "spike_times.npy"))
	if err != nil {
		return compare.Spikes{}, err
	}
	times, err := a.Int64()
	if err != nil {
		return compare.Spikes{}, fmt.Errorf("%s: %w", filepath.Join(dir, "spike_times.npy"), err)
	}
	if a, err = readNPY(filepath.Join(dir, "spike_positions.npy")); err != nil {
		return compare.Spikes{}, err
	}
	pos, err := a.Float32()
	if err != nil {
		return compare.Spikes{}, fmt.Errorf("%s: %w", filepath.Join(dir, "spike_positions.npy"), err)
	}
	if len(pos) != 2*len(times) {
		return compare.Spikes{}, fmt.Errorf("%s: %d positions for %d spikes", filepath.Join(dir, "spike_positions.npy"), len(pos)/2, len(times))
	}
	y := make([]float64, len(times))
	for i := range y {
		y[i] = float64(pos[2*i+1])
	}
	return compare.Spikes{Times: times, Y: y}, nil
}

// readNPY reads the .npy array at path.
func readNPY(path string) (*export.NPY, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := export.ReadNPY(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

func printReport(w io.Writer, r compare.Report) {
	fmt.Fprintf(w, "true spikes      %d\n", r.NTruth)
	fmt.Fprintf(w, "detections       %d\n", r.NDetected)
	fmt.Fprintf(w, "matched          %d (mean lag %+.2f samples)\n", r.Matched, r.MeanLag)
	fmt.Fprintf(w, "recall           %.3f\n", r.Recall)
	fmt.Fprintf(w, "precision        %.3f\n", r.Precision)
	for _, b := range r.Bands {
		fmt.Fprintf(w, "recall %4.0f–%-3.0f SD %.3f  (%d of %d)\n", b.Band.Lo, b.Band.Hi, b.Recall, b.Matched, b.NTruth)
	}
}
