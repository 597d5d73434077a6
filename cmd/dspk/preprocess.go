package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"dspk/compute"
	"dspk/export"
	"dspk/linalg"
	"dspk/pipeline"
	"dspk/recording"
)

// whitenedScale is the factor Kilosort4 applies before storing whitened
// data as int16 (temp_wh.dat).
const whitenedScale = 200

func init() {
	register(&command{
		name:  "preprocess",
		short: "compute the whitening matrix (and optionally write the whitened recording)",
		usage: "REC",
		example: `dspk preprocess -o pre run_g0_t0.imec0.ap.bin
dspk preprocess -save-data -o pre run_g0_t0.imec0.ap.bin   # also temp_wh.dat + params.py`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			var in inputFlags
			in.register(fs)
			var pf pipelineFlags
			pf.register(fs)
			out := fs.String("o", "", "output folder (required)")
			device := fs.String("device", "auto", "compute device: auto, cpu or cuda:N")
			save := fs.Bool("save-data", false, "also write the whitened recording as int16 ×200 (temp_wh.dat) and params.py")
			overwrite := fs.Bool("overwrite", false, "replace the output folder if it exists and is a folder dspk wrote, unchanged, holding no input of this run")
			return func(args []string) error {
				if err := checkRunArgs("preprocess", args, *out); err != nil {
					return err
				}
				setOutput(*out)
				rec, pr, err := in.open(args...)
				if err != nil {
					return err
				}
				defer rec.Close()
				if err := pf.check(pr, preprocessUnused); err != nil {
					return err
				}
				printWarnings(cmdErr, in.warnings)
				dev, reason, err := compute.Open(*device)
				if err != nil {
					return err
				}
				defer dev.Close()
				fmt.Fprintf(cmdErr, "device: %s (%s)\n", dev, reason)
				p, err := pipeline.New(dev, rec, pr, pf.config())
				if err != nil {
					return err
				}
				defer p.Close() // before dev.Close
				p.Progress = trackProgress(newBar())
				opt := export.OutputOptions{Overwrite: *overwrite, Inputs: append(recordingFiles(args[0], rec), in.inputFiles()...)}
				return preprocessRun(cmdCtx, p, rec, *out, *save, opt, in.warnings)
			}
		},
	})
}

// preprocessRun writes the whitening matrices (and with save the
// whitened data and params.py) and dspk.json, the provenance with the
// warnings, into out.
func preprocessRun(ctx context.Context, p *pipeline.Pipeline, rec recording.Recording, out string, save bool,
	opt export.OutputOptions, warnings []string) error {
	start := time.Now()
	opt.Kind, opt.Context = "preprocess", ctx
	od, err := export.CreateOutputDir(out, opt)
	if err != nil {
		return err
	}
	defer od.Abort()
	w, _, passWarnings, err := p.Whitening(ctx)
	if err != nil {
		return err
	}
	runWarnings := append(p.Warnings(), passWarnings...)
	warnings = append(append([]string{}, warnings...), runWarnings...)
	dense, inv, err := pipeline.WhiteningMatrices(w)
	if err != nil {
		return err
	}
	c := w.C
	if err := export.WriteNPYFile(od.Path("whitening_mat.npy"), []int{c, c}, dense); err != nil {
		return err
	}
	if err := export.WriteNPYFile(od.Path("whitening_mat_inv.npy"), []int{c, c}, inv); err != nil {
		return err
	}
	if save {
		if err := writeWhitened(ctx, p, w, od.Path("temp_wh.dat")); err != nil {
			return err
		}
		err := export.WriteParamsPy(od.Path("params.py"), export.ParamsPy{
			DatPath: []string{"temp_wh.dat"}, NChannelsDat: c, DType: "int16",
			SampleRate: rec.SampleRate(), HPFiltered: true,
		})
		if err != nil {
			return err
		}
	}
	prov := map[string]any{
		"dspk_version": version,
		"command":      "preprocess",
		"input": map[string]any{"path": absPath(rec.Name()), "format": rec.Format(), "channels": rec.Channels(),
			"sample_rate": rec.SampleRate(), "samples": rec.Samples()},
		"probe":             map[string]any{"name": p.Probe().Name, "summary": p.Probe().Summary(), "sites": p.Probe().Len()},
		"config":            p.Config(),
		"schedule":          p.Schedule(),
		"whitening_windows": p.StatWindows(),
		"whitened_data":     save,
		"warnings":          warnings,
	}
	if err := export.WriteJSON(od.Path("dspk.json"), prov); err != nil {
		return err
	}
	if err := od.Commit(); err != nil {
		return err
	}
	printWarnings(cmdErr, runWarnings)
	s := p.Schedule()
	fmt.Fprintf(cmdOut, "wrote %s: whitening from %d of %d windows, %d channels, %.1f s\n",
		out, len(p.StatWindows()), s.Windows, c, time.Since(start).Seconds())
	return nil
}

// writeWhitened writes the owned samples of every window, whitened, as
// int16 ×200 interleaved [sample][channel] in file order.
func writeWhitened(ctx context.Context, p *pipeline.Pipeline, w *linalg.Whitening, path string) error {
	c := w.C
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	pad := p.Config().NT
	T := p.Schedule().Len()
	var row []byte
	err = p.Whitened(ctx, "whitened", w, func(win recording.Window, x []float32) error {
		n := win.Owned()
		if cap(row) < 2*c {
			row = make([]byte, 2*c)
		}
		row = row[:2*c]
		for t := pad; t < pad+n; t++ {
			for ch := 0; ch < c; ch++ {
				v := math.Round(float64(x[ch*T+t]) * whitenedScale)
				v = max(-32768, min(32767, v))
				u := uint16(int16(v))
				row[2*ch], row[2*ch+1] = byte(u), byte(u>>8)
			}
			if _, err := bw.Write(row); err != nil {
				return fmt.Errorf("writing %s: %w", path, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// absPath returns path made absolute where possible.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
