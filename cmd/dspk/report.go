package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dspk/export"
	"dspk/pipeline"
	"dspk/report"
)

func init() {
	register(&command{
		name:  "report",
		short: "write a sort folder's curation report: one self-contained HTML page of its units, metrics and figures",
		usage: "SORTDIR",
		example: `dspk report sort1                      # sort1/report.html
dspk report -o ~/reports/mouse3.html sort1`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			out := fs.String("o", "", "HTML page to write, named .html (default SORTDIR/"+report.File+"); an existing file is replaced only if it is a report dspk wrote")
			overwrite := fs.Bool("overwrite", false, "replace the -o file even if dspk did not write it (never a folder or a link)")
			points := fs.Int("max-points", report.DefaultOptions().MaxPoints, "most spikes per unit in the amplitude and depth plots")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("report takes one sort folder")
				}
				if *points < 1 {
					return usagef("-max-points %d: must be 1 or more", *points)
				}
				dir := args[0]
				if fi, err := os.Stat(dir); err != nil {
					return err
				} else if !fi.IsDir() {
					return fmt.Errorf("%s is not a folder; report takes a sort folder (Kilosort's or dspk sort's)", dir)
				}
				page := *out
				if page == "" {
					page = filepath.Join(dir, report.File)
				}
				if ext := strings.ToLower(filepath.Ext(page)); ext != ".html" && ext != ".htm" {
					return usagef("-o %s: report writes an HTML page; name the file .html", page)
				}
				exists, err := report.CheckTarget(page, *overwrite)
				if err != nil {
					return err
				}
				setOutput(page)
				setStage("the report")
				opt := report.DefaultOptions()
				opt.MaxPoints = *points
				b, err := report.Page(dir, pipeline.Version, opt)
				if err != nil {
					return err
				}
				if err := export.WriteFileAtomic(cmdCtx, page, b, !exists); err != nil {
					return err
				}
				if samePath(page, filepath.Join(dir, report.File)) {
					printWarnings(cmdErr, report.Record(dir))
				}
				fmt.Fprintf(cmdOut, "wrote %s (%.1f MB)\n", page, float64(len(b))/1e6)
				return nil
			}
		},
	})
}
