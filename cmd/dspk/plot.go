package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"dspk/export"
	"dspk/figure"
	"dspk/phy"
	"dspk/pipeline"
)

func init() {
	register(&command{
		name:  "plot",
		short: "draw the drift raster of a detect or sort folder (depth × time by amplitude, rate along the probe)",
		usage: "DETDIR|SORTDIR",
		example: `dspk plot det1
dspk plot sort1
dspk plot -o raster.png det1`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			out := fs.String("o", "", "PNG to write, named .png (default DIR/"+phy.RasterFile+"); an existing file is replaced only if it is a PNG dspk drew")
			title := fs.String("title", "", "title of the raster (default: recording, spikes, clusters)")
			overwrite := fs.Bool("overwrite", false, "replace the -o file even if dspk did not draw it (never a folder, a link or an input)")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("plot takes one detect or sort folder")
				}
				png := *out
				if png == "" {
					png = filepath.Join(args[0], phy.RasterFile)
				}
				exists, err := checkPlotTarget(png, args[0], *overwrite)
				if err != nil {
					return err
				}
				setOutput(png)
				setStage("the drift raster")
				if err := plotFolder(cmdCtx, args[0], png, *title, !exists); err != nil {
					return err
				}
				// Drawn in place, the folder's raster is a file dspk wrote:
				// its manifest lists it (a sort folder's gains the entry), so
				// that -overwrite still replaces the folder.
				if samePath(png, filepath.Join(args[0], phy.RasterFile)) {
					if err := export.UpdateManifest(args[0], phy.RasterFile); err != nil {
						fmt.Fprintf(cmdErr, "warning: %s: the manifest was not updated (%v); -overwrite will refuse this folder\n", args[0], err)
					}
				}
				fmt.Fprintf(cmdOut, "wrote %s\n", png)
				return nil
			}
		},
	})
}

// checkPlotTarget refuses a PNG path that plot must not write: a name
// not ending in .png (plot draws PNG only), a folder, a symbolic link or
// any other non-regular file, a file of the detect folder det other than
// its drift raster, and, unless overwrite, an existing file that is not
// a PNG dspk drew (see isDspkPNG). It reports whether png exists.
func checkPlotTarget(png, det string, overwrite bool) (bool, error) {
	if !strings.EqualFold(filepath.Ext(png), ".png") {
		return false, usagef("-o %s: plot writes PNG pictures only; name the file .png", png)
	}
	fi, err := os.Lstat(png)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return true, fmt.Errorf("%s exists and is not a regular file (a folder or a link); plot does not replace it", png)
	}
	if figure.IsDspkPNG(png) {
		return true, nil
	}
	if !overwrite {
		return true, fmt.Errorf("%s exists and is not a picture dspk drew; plot does not replace it — choose another name, or use -overwrite", png)
	}
	// Even with -overwrite, never a file the picture is drawn from.
	if abs, err := filepath.Abs(png); err == nil {
		if d, err := filepath.Abs(det); err == nil && filepath.Dir(abs) == d && filepath.Base(abs) != phy.RasterFile {
			return true, fmt.Errorf("%s is a file of the detect folder %s; plot does not replace it", png, det)
		}
	}
	return true, nil
}

// samePath reports whether a and b name the same path once made absolute.
func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// plotFolder draws the drift raster of the detect folder dir into png
// (with title, if not empty), which appears whole or not at all (see
// export.WriteFileAtomic, and noReplace there); it stops with ctx's error
// once ctx is done.
func plotFolder(ctx context.Context, dir, png, title string, noReplace bool) error {
	d, err := phy.ReadRaster(dir)
	if err != nil {
		return err
	}
	if title != "" {
		d.Title = title
	}
	b, err := figure.EncodeRaster(ctx, d, pipeline.Version, nil)
	if err != nil {
		return err
	}
	if err := export.WriteFileAtomic(ctx, png, b, noReplace); err != nil {
		return err
	}
	markWritten(png)
	return nil
}
