package main

import (
	"flag"
	"io"
	"reflect"
	"slices"
	"testing"

	"dspk/batch"
)

// TestBatchPlanFlags checks that the flags batch plan records for each
// kind of plan are those package batch encodes, and that batch plan's
// defaults are batch's: options of no flags given encode as no flags,
// and given flags encode as batch plan wrote them.
func TestBatchPlanFlags(t *testing.T) {
	for _, kind := range []string{batch.KindDetect, batch.KindSort} {
		fs := flag.NewFlagSet("batch plan", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		setupBatchPlan(fs)
		var pass []string
		fs.VisitAll(func(f *flag.Flag) {
			if passFlag(kind, f.Name, sortOnlyOf(fs)) {
				pass = append(pass, f.Name)
			}
		})
		if want := batch.FlagNames(kind); !slices.Equal(pass, want) {
			t.Errorf("%s: batch plan records %v, package batch encodes %v", kind, pass, want)
		}
	}
	for _, c := range []struct {
		kind string
		args []string
	}{
		{batch.KindDetect, nil},
		{batch.KindSort, nil},
		{batch.KindDetect, []string{"-batch=30000", "-no-car=true", "-probe=np2", "-threshold=9", "-tmax=600"}},
		{batch.KindSort, []string{"-Th_learned=7", "-correction=kilosort", "-nblocks=0", "-same-waveform=0", "-seed=1", "-x_centers=2"}},
	} {
		fs := flag.NewFlagSet("batch plan", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var in inputFlags
		in.register(fs)
		var pf pipelineFlags
		pf.register(fs)
		fs.Float64("threshold", batch.DefaultOptions(batch.KindDetect).Config.ThUniversal, "")
		fs.String("templates", "", "")
		sf, sortOnly := sortPlanFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		opt := planOptions(c.kind, &in, &pf, sf, fs)
		fs.Visit(func(f *flag.Flag) {
			if passFlag(c.kind, f.Name, sortOnly) {
				opt.Given = append(opt.Given, f.Name)
			}
		})
		if got := opt.Args(c.kind); !slices.Equal(got, c.args) {
			t.Errorf("%s %q: encoded as %q", c.kind, c.args, got)
		}
		back, err := batch.ParseArgs(c.kind, c.args)
		if err != nil {
			t.Fatal(err)
		}
		if back.Config != opt.Config || !reflect.DeepEqual(back.Sort, opt.Sort) || back.Input != opt.Input || back.Templates != opt.Templates {
			t.Errorf("%s %q: batch parses\n%+v\nbatch plan made\n%+v", c.kind, c.args, back, opt)
		}
	}
}

// sortOnlyOf lists the flags of fs that only a sort plan takes: sort's
// own, which batch plan adds after its -estimate-for.
func sortOnlyOf(fs *flag.FlagSet) map[string]bool {
	scratch := flag.NewFlagSet("sort", flag.ContinueOnError)
	var sf sortFlags
	sf.register(scratch)
	only := map[string]bool{}
	scratch.VisitAll(func(f *flag.Flag) {
		if !sortNotPlanned[f.Name] && fs.Lookup(f.Name) != nil {
			only[f.Name] = true
		}
	})
	return only
}
