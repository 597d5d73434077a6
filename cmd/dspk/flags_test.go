package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dspk/internal/cliflag"
)

// TestFlagMisspelt checks that a misspelt flag is answered in two lines,
// the flag and its closest spelling, then where the flags are listed,
// with exit status 2 and nothing on stdout, for every command.
func TestFlagMisspelt(t *testing.T) {
	for _, c := range []struct {
		args       []string
		name, want string
	}{
		{[]string{"sort", "-devcie", "cpu", "rec.bin"}, "sort", "-devcie; did you mean -device?"},
		{[]string{"detect", "rec.bin", "-o", "x", "-devise", "cpu"}, "detect", "-devise; did you mean -device?"},
		{[]string{"batch", "plan", "-o", "p", "-nblock", "5", "dir"}, "batch plan", "-nblock; did you mean -nblocks?"},
		{[]string{"compare", "-truht", "sim", "det"}, "compare", "-truht; did you mean -truth?"},
	} {
		code, stdout, stderr := dspk(t, c.args...)
		want := []string{"dspk " + c.name + ": flag provided but not defined: " + c.want, "Run 'dspk " + c.name + " -h' for all flags."}
		if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != 2 || stdout != "" || !slices.Equal(lines, want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, want)
		}
	}
	// Nothing close: no guess, still two lines.
	code, _, stderr := dspk(t, "sort", "-frobnicate", "rec.bin")
	if code != 2 || strings.Contains(stderr, "did you mean") || strings.Count(stderr, "\n") != 2 || !strings.Contains(stderr, "-frobnicate") {
		t.Errorf("sort -frobnicate: exit %d, %q", code, stderr)
	}
	// A bad value is one line too, naming the flag by its defined name.
	code, _, stderr = dspk(t, "sort", "-Th-learned", "seven", "rec.bin")
	if code != 2 || strings.Count(stderr, "\n") != 2 || !strings.Contains(stderr, `invalid value "seven" for flag -Th_learned`) {
		t.Errorf("sort -Th-learned seven: exit %d, %q", code, stderr)
	}
	// -h still lists every flag.
	code, _, stderr = dspk(t, "sort", "-h")
	if code != 0 || !strings.Contains(stderr, "-Th_learned") || !strings.Contains(stderr, "Example:") || strings.Count(stderr, "\n") < 40 {
		t.Errorf("sort -h: exit %d, %d lines", code, strings.Count(stderr, "\n"))
	}
}

// TestFlagSpellingOneRule checks that '-' and '_' are interchangeable in
// every flag of every command: no two flags of a command are one name
// under that rule, and each flag's other spelling reaches it.
func TestFlagSpellingOneRule(t *testing.T) {
	for _, c := range commands {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.setup(fs)
		seen := map[string]string{}
		fs.VisitAll(func(fl *flag.Flag) {
			k := strings.ReplaceAll(fl.Name, "_", "-")
			if prev, ok := seen[k]; ok {
				t.Errorf("%s: flags -%s and -%s differ only in '-' and '_'", c.name, prev, fl.Name)
			}
			seen[k] = fl.Name
			for _, other := range []string{strings.ReplaceAll(fl.Name, "_", "-"), strings.ReplaceAll(fl.Name, "-", "_")} {
				args := []string{"-" + other + "=1"}
				if got := cliflag.Normalize(fs, args); got[0] != "-"+fl.Name+"=1" {
					t.Errorf("%s: -%s normalised to %q, want -%s", c.name, other, got[0], fl.Name)
				}
			}
		})
	}
}

// TestHelpSaysWhatDspkDoes checks that dspk -h says that dspk sorts, not
// only that it preprocesses and detects.
func TestHelpSaysWhatDspkDoes(t *testing.T) {
	code, _, stderr := dspk(t, "-h")
	first := strings.SplitN(stderr, "\n\n", 2)[0]
	for _, want := range []string{"spike sorter", "sorts", "detects", "drift", "GPUs or SLURM", "ground truth"} {
		if code != 0 || !strings.Contains(first, want) {
			t.Errorf("dspk -h: exit %d, first lines %q lack %q", code, first, want)
		}
	}
}

// TestFlagDeviceHint checks that a GPU that cannot be opened is answered
// with the way to run without one, and that a sample rate typed in kHz
// is refused with the rate in Hz suggested.
func TestFlagDeviceHint(t *testing.T) {
	dir := t.TempDir()
	bin := sortRecording(t, dir)
	code, _, stderr := dspk(t, "sort", "-device", "cuda:99", "-o", filepath.Join(dir, "s"), bin)
	if code != 1 || !strings.Contains(stderr, "cuda:99") || !strings.Contains(stderr, "use -device cpu") || strings.Count(stderr, "dspk sort:") != 1 {
		t.Errorf("sort -device cuda:99: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "s")); err == nil {
		t.Error("a folder was left by the failed sort")
	}
	raw := filepath.Join(dir, "data.dat")
	if err := os.WriteFile(raw, make([]byte, 4*2*100), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"info", "-channels", "4", "-rate", "30", raw},
		{"detect", "-device", "cpu", "-o", filepath.Join(dir, "d"), "-channels", "4", "-rate", "30", raw},
	} {
		code, _, stderr := dspk(t, args...)
		if code != 2 || !strings.Contains(stderr, "did you mean -rate 30000 (30 kHz)?") {
			t.Errorf("%s -rate 30: exit %d, %q", args[0], code, stderr)
		}
	}
}
