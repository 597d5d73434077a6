package main

import (
	"flag"
	"fmt"
	"path/filepath"
)

func init() {
	register(&command{
		name:  "plot",
		short: "redraw the drift raster of a detect folder (depth × time by amplitude, rate along the probe)",
		usage: "DETDIR",
		example: `dspk plot det1
dspk plot -o raster.png det1`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			out := fs.String("o", "", "PNG to write (default DETDIR/"+rasterFile+")")
			title := fs.String("title", "", "title of the raster (default: recording, spikes, clusters)")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("plot takes one detect folder")
				}
				png := *out
				if png == "" {
					png = filepath.Join(args[0], rasterFile)
				}
				if err := plotFolder(args[0], png, *title); err != nil {
					return err
				}
				fmt.Fprintf(cmdOut, "wrote %s\n", png)
				return nil
			}
		},
	})
}
