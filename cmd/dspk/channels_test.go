package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestChannelCountRefused runs detect, sort, drift and batch plan on the
// golden recording's values written as a raw file (33 channels) with
// channel counts that divide the file but are wrong: each is refused
// (detect, sort and drift as a misuse, exit 2) naming the count the data
// suggest, leaving the folder as it was; the right count is taken.
func TestChannelCountRefused(t *testing.T) {
	cases := []struct {
		cmd, channels string
		code          int
		want          string
	}{
		{"sort", "66", 2, "-channels 66: the data look like 33 channels per sample"},
		{"drift", "66", 2, "pass -channels 33"},
		{"detect", "66", 2, "pass -channels 33"},
		{"batch plan", "66", 1, "pass -channels 33"},
		{"detect", "33", 0, ""},
		{"batch plan", "33", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.cmd+" "+c.channels, func(t *testing.T) {
			dir := t.TempDir()
			raw := writeRaw(t, dir, "a.dat", "int16", nil)
			pr := probe32(t, dir)
			out := filepath.Join(dir, "new", "res")
			before := tree(t, dir)
			args := append(strings.Fields(c.cmd), "-o", out, "-channels", c.channels, "-rate", "30000", "-probe", pr, raw)
			if c.cmd != "batch plan" {
				args = append(args[:1], append([]string{"-device", "cpu"}, args[1:]...)...)
			}
			code, _, stderr := dspk(t, args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, c.code, c.want)
			}
			if after := tree(t, dir); c.code != 0 && after != before {
				t.Errorf("the folder changed:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}
