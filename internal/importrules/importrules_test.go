package importrules

import (
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "dspk"

// layers ranks dspk's packages as docs/architecture.md §1 draws them:
// a package imports only packages of its own layer or lower ones, except
// that the data layer imports no device package. batch (plans of many
// runs, their workers and SLURM jobs) sits between the folder writer and
// the command. The base layer (−1), below the devices, holds plain Go
// helpers every package may use.
var layers = map[string]int{
	"cmd/dspk":   6,
	"batch":      5,
	"phy":        4,
	"bench":      4,
	"pipeline":   3,
	"stream":     3,
	"preprocess": 2, "detect": 2, "cluster": 2, "curate": 2, "match": 2, "motion": 2, "linalg": 2, "ops": 2,
	"recording": 1, "probe": 1, "export": 1, "sim": 1, "compare": 1, "kilosort": 1, "figure": 1, "quality": 1, "report": 1,
	"compute": 0, "internal/cuda": 0, "internal/gputest": 0, "internal/emutest": 0,
	"internal/par":         -1,
	"internal/testseed":    -1,
	"internal/cliflag":     -1,
	"internal/importrules": 7,
}

const (
	layerData    = 1
	layerDevices = 0
	bindings     = "internal/cuda"
)

// bindingUsers are the packages that may import the CUDA bindings: the
// device layer.
var bindingUsers = []string{"compute", "internal/cuda"}

// pkg is one package of the module with its dspk imports (tests
// included).
type pkg struct {
	path    string // relative to the module, e.g. "linalg"
	imports []string
}

// modulePackages lists every package of the module under root.
func modulePackages(t *testing.T, root string) []pkg {
	t.Helper()
	var out []pkg
	err := filepath.WalkDir(root, func(dir string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if n := d.Name(); dir != root && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata" || n == "kernels") {
			return filepath.SkipDir
		}
		bp, err := build.Default.ImportDir(dir, 0)
		if _, ok := err.(*build.NoGoError); ok {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, dir)
		p := pkg{path: filepath.ToSlash(rel)}
		for _, list := range [][]string{bp.Imports, bp.TestImports, bp.XTestImports} {
			for _, imp := range list {
				if r, ok := strings.CutPrefix(imp, module+"/"); ok && !slices.Contains(p.imports, r) {
					p.imports = append(p.imports, r)
				}
			}
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// violations returns every breach of the rules by pkgs.
func violations(pkgs []pkg) []string {
	var out []string
	add := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }
	deps := map[string][]string{}
	for _, p := range pkgs {
		deps[p.path] = p.imports
		lp, ok := layers[p.path]
		if !ok {
			add("package %s has no layer: add it to the table of docs/architecture.md §1 and to layers", p.path)
			continue
		}
		for _, imp := range p.imports {
			li, ok := layers[imp]
			if !ok {
				continue // reported as the package itself
			}
			switch {
			case li > lp:
				add("%s (layer %d) imports %s (layer %d): imports point down only", p.path, lp, imp, li)
			case lp == layerData && li == layerDevices:
				add("%s imports the device package %s: the data layer imports no device package", p.path, imp)
			}
			if imp == bindings {
				if !slices.Contains(bindingUsers, p.path) {
					add("%s imports the CUDA bindings %s: only compute may (use compute's GPU API)", p.path, bindings)
				}
			}
		}
	}
	// recording reaches no device package even indirectly.
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if !seen[p] {
			seen[p] = true
			for _, d := range deps[p] {
				walk(d)
			}
		}
	}
	walk("recording")
	for _, dev := range []string{"compute", bindings, "internal/gputest"} {
		if seen[dev] {
			add("recording reaches the device package %s", dev)
		}
	}
	return out
}

// TestImportRules checks every package of the module against the rules.
func TestImportRules(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !strings.HasPrefix(string(b), "module "+module+"\n") {
		t.Fatalf("%s is not the root of module %s: %v", root, module, err)
	}
	pkgs := modulePackages(t, root)
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under %s", len(pkgs), root)
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// TestRulesCatch checks that violations finds each kind of breach in a
// made-up module.
func TestRulesCatch(t *testing.T) {
	pkgs := []pkg{
		{"recording", []string{"probe", "sim"}},
		{"sim", []string{"compute"}},                  // data → device, and recording indirectly
		{"linalg", []string{"internal/cuda"}},         // algorithm → bindings
		{"probe", []string{"pipeline"}},               // upwards
		{"ops", []string{"internal/cuda"}},            // algorithm → bindings
		{"newpkg", nil},                               // no layer
		{"compute", []string{"internal/cuda"}},        // allowed
		{"preprocess", []string{"compute", "linalg"}}, // allowed
	}
	got := strings.Join(violations(pkgs), "\n")
	for _, want := range []string{
		"sim imports the device package compute",
		"linalg imports the CUDA bindings",
		"probe (layer 1) imports pipeline (layer 3)",
		"ops imports the CUDA bindings",
		"package newpkg has no layer",
		"recording reaches the device package compute",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("violations lack %q; got:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n") + 1; n != 7 {
		t.Errorf("%d violations, want 7:\n%s", n, got)
	}
}
