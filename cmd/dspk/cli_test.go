package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// env is the folder of one command-line case: dir holds rec/ (a copy of
// the golden recording, bin its .bin); out is dir/new/res, whose parent
// does not exist.
type env struct{ dir, bin, out string }

// goldenMeta is the golden recording's .meta text.
func goldenMeta(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenRec, simBase+".imec0.ap.meta"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// copyRec copies the golden recording into dir/rec, with the .meta passed
// through edit, and returns the .bin path.
func copyRec(t *testing.T, dir string, edit func(string) string) string {
	t.Helper()
	rec := filepath.Join(dir, "rec")
	if err := os.MkdirAll(rec, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(rec, simBase+".imec0.ap.bin")
	data, err := os.ReadFile(filepath.Join(goldenRec, simBase+".imec0.ap.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o644); err != nil {
		t.Fatal(err)
	}
	meta := goldenMeta(t)
	if edit != nil {
		meta = edit(meta)
	}
	if err := os.WriteFile(filepath.Join(rec, simBase+".imec0.ap.meta"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	return bin
}

// setMeta replaces the value of key in a .meta text.
func setMeta(key, value string) func(string) string {
	return func(m string) string {
		var out []string
		for _, l := range strings.Split(m, "\r\n") {
			if k, _, ok := strings.Cut(l, "="); ok && k == key {
				l = key + "=" + value
			}
			out = append(out, l)
		}
		return strings.Join(out, "\r\n")
	}
}

// geomMap returns a ~snsGeomMap of 32 used sites at the positions pos(i).
func geomMap(pos func(i int) string) string {
	var b strings.Builder
	b.WriteString("(NP1000,1,0,70)")
	for i := range 32 {
		fmt.Fprintf(&b, "(0:%s:1)", pos(i))
	}
	return b.String()
}

// ksProbe is a Kilosort probe JSON of 32 sites in a 33-channel file with
// the given xc and yc arrays.
func ksProbe(xc, yc string) string {
	var cm []string
	for i := range 32 {
		cm = append(cm, fmt.Sprint(i))
	}
	return fmt.Sprintf(`{"chanMap":[%s],"xc":%s,"yc":%s,"n_chan":33}`, strings.Join(cm, ","), xc, yc)
}

// list32 joins 32 values made by f.
func list32(f func(i int) string) string {
	var v []string
	for i := range 32 {
		v = append(v, f(i))
	}
	return "[" + strings.Join(v, ",") + "]"
}

// tree describes every file and folder under dir (names, sizes, contents'
// lengths), for checking that a refused command changed nothing.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fi, _ := d.Info()
		lines = append(lines, fmt.Sprintf("%s %v %d %d", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano()))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestCommandLineBadInput runs dspk on bad input, one case at a time in a
// fresh folder: each must exit with the stated status and a message
// holding the substring, and leave the folder exactly as it was (no
// output, no temporary or parent folder, input files untouched).
func TestCommandLineBadInput(t *testing.T) {
	coords := func(i int) string { return fmt.Sprintf("%d:%d", []int{43, 11, 59, 27}[i%4], 20*(i/2+1)) }
	cases := []struct {
		name  string
		setup func(t *testing.T, e *env) // optional
		meta  func(string) string        // optional edit of the .meta
		args  func(e *env) []string
		code  int
		want  string
	}{
		// detect: usage and time range
		{name: "detect no args", args: func(e *env) []string { return []string{"detect", "-o", e.out} }, code: 2, want: "a recording path"},
		{name: "detect no -o", args: func(e *env) []string { return []string{"detect", e.bin} }, code: 2, want: "-o DIR is required"},
		{name: "detect missing file", args: func(e *env) []string { return []string{"detect", "-o", e.out, filepath.Join(e.dir, "missing.ap.bin")} }, code: 1, want: "missing.ap.bin"},
		{name: "detect tmax negative", args: detectArgs("-tmax", "-1"), code: 1, want: "tmax -1 s must be greater than tmin"},
		{name: "detect tmax below tmin", args: detectArgs("-tmin", "3", "-tmax", "2"), code: 1, want: "must be greater than tmin 3 s"},
		{name: "detect tmax equal tmin", args: detectArgs("-tmin", "1", "-tmax", "1"), code: 1, want: "greater than tmin"},
		{name: "detect tmin negative", args: detectArgs("-tmin", "-1"), code: 1, want: "tmin -1 s must be finite and at least 0"},
		{name: "detect tmin NaN", args: detectArgs("-tmin", "NaN"), code: 1, want: "tmin NaN"},
		{name: "detect tmax NaN", args: detectArgs("-tmax", "NaN"), code: 1, want: "tmax NaN"},
		{name: "detect tmin past the end", args: detectArgs("-tmin", "100"), code: 1, want: "holds no samples"},
		// detect: parameters
		{name: "detect threshold Inf", args: detectArgs("-threshold", "Inf"), code: 1, want: "positive and finite"},
		{name: "detect threshold NaN", args: detectArgs("-threshold", "NaN"), code: 1, want: "positive and finite"},
		{name: "detect threshold 0", args: detectArgs("-threshold", "0"), code: 1, want: "Th_universal 0"},
		{name: "detect th-single-ch -1", args: detectArgs("-th-single-ch", "-1"), code: 1, want: "Th_single_ch -1"},
		{name: "detect highpass Inf", args: detectArgs("-highpass", "+Inf"), code: 1, want: "high-pass cut-off +Inf Hz"},
		{name: "detect batch 0", args: detectArgs("-batch", "0"), code: 1, want: "batch size 0"},
		{name: "detect nskip 0", args: detectArgs("-nskip", "0"), code: 1, want: "nskip 0"},
		{name: "detect bad flag value", args: detectArgs("-threshold", "high"), code: 2, want: "invalid value"},
		{name: "detect bad device", args: detectArgs("-device", "tpu"), code: 1, want: "tpu"},
		// detect: templates
		{name: "detect templates missing", args: detectArgs("-templates", "nope.npz"), code: 1, want: "nope.npz"},
		{name: "detect templates not npz", setup: func(t *testing.T, e *env) {
			os.WriteFile(filepath.Join(e.dir, "t.npz"), []byte("hello"), 0o644)
		}, args: func(e *env) []string { return detectArgs("-templates", filepath.Join(e.dir, "t.npz"))(e) }, code: 1, want: "t.npz"},
		// detect: probes
		{name: "probe unknown", args: detectArgs("-probe", "np9"), code: 1, want: "neither a file nor a preset"},
		{name: "probe wrong channel count", args: detectArgs("-probe", "np1"), code: 1, want: "has only 33 channels"},
		{name: "probe null coordinate", setup: writeProbe(ksProbe(list32(func(i int) string {
			if i == 7 {
				return "null"
			}
			return fmt.Sprint(i % 2 * 32)
		}), list32(func(i int) string { return fmt.Sprint(20 * (i / 2)) }))), args: probeArgs, code: 1, want: "xc[7] is null"},
		{name: "probe duplicate sites", setup: writeProbe(ksProbe(list32(func(i int) string { return "0" }),
			list32(func(i int) string { return fmt.Sprint(20 * (i / 2)) }))), args: probeArgs, code: 1, want: "sites 0 and 1 are both at (0, 0)"},
		{name: "probe sites coincide", setup: writeProbe(ksProbe(list32(func(i int) string { return "5" }),
			list32(func(i int) string { return "5" }))), args: probeArgs, code: 1, want: "all 32 sites are at (5, 5)"},
		{name: "probe spacing 1e9", setup: writeProbe(ksProbe(list32(func(i int) string { return "0" }),
			list32(func(i int) string { return fmt.Sprint(1e9 * float64(i)) }))), args: probeArgs, code: 1, want: "from the origin"},
		{name: "probe NaN coordinate", setup: writeProbe(ksProbe(list32(func(i int) string { return "0" }),
			list32(func(i int) string { return "1e999" }))), args: probeArgs, code: 1, want: "probe.json"},
		{name: "probe not JSON", setup: writeProbe("chanMap = [0, 1]"), args: probeArgs, code: 1, want: "not a JSON probe file"},
		// detect: .meta geometry
		{name: "meta geometry malformed", meta: setMeta("~snsGeomMap", "(NP1000,1,0,70)(0:43:20)"), args: detectArgs(), code: 1, want: "snsGeomMap"},
		{name: "meta geometry not a number", meta: setMeta("~snsGeomMap", geomMap(func(i int) string {
			if i == 3 {
				return "nan:20"
			}
			return coords(i)
		})), args: detectArgs(), code: 1, want: "entry 3"},
		{name: "meta geometry sites coincide", meta: setMeta("~snsGeomMap", geomMap(func(i int) string { return "0:0" })), args: detectArgs(), code: 1, want: "all 32 sites are at (0, 0)"},
		{name: "meta geometry duplicate", meta: setMeta("~snsGeomMap", geomMap(func(i int) string {
			if i == 5 {
				return coords(4)
			}
			return coords(i)
		})), args: detectArgs(), code: 1, want: "sites 4 and 5 are both at"},
		{name: "meta geometry absurd spacing", meta: setMeta("~snsGeomMap", geomMap(func(i int) string { return fmt.Sprintf("0:%d", 2000*i) })), args: detectArgs(), code: 1, want: "median 2000 µm"},
		{name: "meta size mismatch, -strict-size", meta: setMeta("fileSizeBytes", "8910002"), args: detectArgs("-strict-size"), code: 1, want: "fileSizeBytes=8910002"},
		{name: "meta bad rate", meta: setMeta("imSampRate", "-5"), args: detectArgs(), code: 1, want: "imSampRate"},
		// detect: output folders
		{name: "overwrite the recording's folder", args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-overwrite", "-o", filepath.Dir(e.bin), e.bin}
		}, code: 1, want: "holds the input"},
		{name: "overwrite a parent of the recording", args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-overwrite", "-o", e.dir, e.bin}
		}, code: 1, want: "holds the input"},
		{name: "overwrite a folder of notes", setup: func(t *testing.T, e *env) {
			os.MkdirAll(filepath.Join(e.dir, "notes"), 0o755)
			os.WriteFile(filepath.Join(e.dir, "notes", "todo.txt"), []byte("mine"), 0o644)
		}, args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-overwrite", "-o", filepath.Join(e.dir, "notes"), e.bin}
		}, code: 1, want: "not written by dspk"},
		{name: "output exists", setup: func(t *testing.T, e *env) { os.MkdirAll(filepath.Join(e.dir, "old"), 0o755) }, args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-o", filepath.Join(e.dir, "old"), e.bin}
		}, code: 1, want: "exists; use -overwrite"},
		{name: "output is a file", args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-overwrite", "-o", filepath.Join(e.dir, "rec", simBase+".imec0.ap.meta"), e.bin}
		}, code: 1, want: "holds the input"},
		// preprocess
		{name: "preprocess overwrite the recording's folder", args: func(e *env) []string {
			return []string{"preprocess", "-device", "cpu", "-save-data", "-overwrite", "-o", filepath.Dir(e.bin), e.bin}
		}, code: 1, want: "holds the input"},
		{name: "preprocess tmax 0", args: func(e *env) []string {
			return []string{"preprocess", "-device", "cpu", "-tmax", "0", "-o", e.out, e.bin}
		}, code: 1, want: "tmax 0 s"},
		{name: "preprocess no -o", args: func(e *env) []string { return []string{"preprocess", e.bin} }, code: 2, want: "-o DIR is required"},
		// simulate
		{name: "simulate duration 0", args: func(e *env) []string { return []string{"simulate", "-o", e.out, "-duration", "0s"} }, code: 2, want: "-duration must be positive"},
		{name: "simulate units -1", args: func(e *env) []string { return []string{"simulate", "-o", e.out, "-units", "-1"} }, code: 2, want: "-units non-negative"},
		{name: "simulate probe np3", args: func(e *env) []string { return []string{"simulate", "-o", e.out, "-probe", "np3"} }, code: 2, want: "unknown preset"},
		{name: "simulate drift NaN", args: func(e *env) []string { return []string{"simulate", "-o", e.out, "-drift", "NaN"} }, code: 2, want: "must be finite"},
		{name: "simulate drift 1e9", args: func(e *env) []string { return []string{"simulate", "-o", e.out, "-drift", "1e9"} }, code: 2, want: "want at most 100 µm/s"},
		{name: "simulate over a foreign folder", args: func(e *env) []string {
			return []string{"simulate", "-overwrite", "-duration", "1s", "-o", filepath.Dir(e.bin)}
		}, code: 1, want: "not written by dspk"},
		{name: "simulate argument", args: func(e *env) []string { return []string{"simulate", "-o", e.out, "extra"} }, code: 2, want: "takes no arguments"},
		// compare
		{name: "compare max-lag -5", args: func(e *env) []string { return []string{"compare", "-truth", e.dir, "-max-lag", "-5", e.dir} }, code: 1, want: "at least 0"},
		{name: "compare max-depth NaN", args: func(e *env) []string { return []string{"compare", "-truth", e.dir, "-max-depth", "NaN", e.dir} }, code: 1, want: "positive and finite"},
		{name: "compare max-depth 0", args: func(e *env) []string { return []string{"compare", "-truth", e.dir, "-max-depth", "0", e.dir} }, code: 1, want: "depth difference 0"},
		{name: "compare no truth", args: func(e *env) []string { return []string{"compare", e.dir} }, code: 2, want: "-truth DIR is required"},
		{name: "compare truth missing", args: func(e *env) []string {
			return []string{"compare", "-truth", filepath.Join(e.dir, "none"), e.dir}
		}, code: 1, want: "none"},
		// sort: settings refused before any work
		{name: "sort Th_learned negative", args: sortArgs("-Th_learned", "-5"), code: 2, want: "Th_learned = -5 must be positive"},
		{name: "sort max_peels 0", args: sortArgs("-max_peels", "0"), code: 2, want: "max_peels = 0"},
		{name: "sort cluster_neighbors 0", args: sortArgs("-cluster_neighbors", "0"), code: 2, want: "cluster_neighbors 0"},
		{name: "sort acg_threshold NaN", args: sortArgs("-acg_threshold", "NaN"), code: 2, want: "acg_threshold = NaN"},
		{name: "sort ccg_threshold Inf", args: sortArgs("-ccg_threshold", "Inf"), code: 2, want: "ccg_threshold = +Inf"},
		{name: "sort duplicate_spike_ms -1", args: sortArgs("-duplicate_spike_ms", "-1"), code: 2, want: "duplicate_spike_ms = -1"},
		{name: "sort position_limit 0", args: sortArgs("-position_limit", "0"), code: 2, want: "position_limit = 0"},
		{name: "sort same-waveform 2", args: sortArgs("-same-waveform", "2"), code: 2, want: "same-waveform = 2 must be in [0, 1]"},
		{name: "sort x_centers beyond the probe", args: sortArgs("-x_centers", "9"), code: 2, want: "-x_centers 9: the sites of probe"},
		{name: "batch plan sort same-waveform -1", args: func(e *env) []string {
			return []string{"batch", "plan", "-kind", "sort", "-same-waveform", "-1", "-o", e.out, e.dir}
		}, code: 2, want: "same-waveform = -1"},
		// demo and info
		{name: "demo into existing results", setup: func(t *testing.T, e *env) { os.MkdirAll(filepath.Join(e.dir, "d", "sim"), 0o755) }, args: func(e *env) []string {
			return []string{"demo", "-o", filepath.Join(e.dir, "d")}
		}, code: 1, want: "demo does not replace earlier results"},
		{name: "demo too short", args: func(e *env) []string { return []string{"demo", "-duration", "2s"} }, code: 2, want: "too short"},
		{name: "demo argument", args: func(e *env) []string { return []string{"demo", "x"} }, code: 2, want: "takes no arguments"},
		{name: "demo duration 0", args: func(e *env) []string { return []string{"demo", "-duration", "0s"} }, code: 2, want: "-duration must be positive"},
		{name: "info missing", args: func(e *env) []string { return []string{"info", filepath.Join(e.dir, "none.bin")} }, code: 1, want: "none.bin"},
	}
	if len(cases) < 40 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &env{dir: t.TempDir()}
			e.bin = copyRec(t, e.dir, c.meta)
			e.out = filepath.Join(e.dir, "new", "res")
			if c.setup != nil {
				c.setup(t, e)
			}
			before := tree(t, e.dir)
			code, _, stderr := dspk(t, c.args(e)...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, c.code, c.want)
			}
			if c.name == "demo into existing results" && strings.Contains(stderr, "-overwrite") {
				t.Errorf("demo suggests -overwrite, which it lacks: %q", stderr)
			}
			if after := tree(t, e.dir); after != before {
				t.Errorf("the folder changed:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// detectArgs returns the arguments of a CPU detect run of the case's
// recording into its output with extra flags.
func detectArgs(extra ...string) func(e *env) []string {
	return func(e *env) []string {
		return append(append([]string{"detect", "-device", "cpu", "-o", e.out}, extra...), e.bin)
	}
}

// sortArgs returns the arguments of a CPU sort of the case's recording
// into its output with extra flags.
func sortArgs(extra ...string) func(e *env) []string {
	return func(e *env) []string {
		return append(append([]string{"sort", "-device", "cpu", "-o", e.out}, extra...), e.bin)
	}
}

func writeProbe(json string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		if err := os.WriteFile(filepath.Join(e.dir, "probe.json"), []byte(json), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func probeArgs(e *env) []string {
	return detectArgs("-probe", filepath.Join(e.dir, "probe.json"))(e)
}
