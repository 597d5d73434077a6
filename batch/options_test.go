package batch

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestArgsRoundTrip checks that options encode as the flags that differ
// from the defaults or were given, in name order, and parse back to the
// same options.
func TestArgsRoundTrip(t *testing.T) {
	for _, kind := range []string{KindDetect, KindSort} {
		if a := DefaultOptions(kind).Args(kind); a != nil {
			t.Errorf("%s: the default options encode as %q, want nil", kind, a)
		}
	}
	o := DefaultOptions(KindSort)
	o.Config.NSkip, o.Config.Tmax, o.Config.DoCAR = 5, 9, false
	o.Config.ThUniversal = 8
	o.Sort.Match.ThLearned = 7
	o.Input.Probe = "np2"
	o.Given = []string{"seed"} // given at its default
	want := []string{"-Th_learned=7", "-Th_universal=8", "-no-car=true", "-nskip=5", "-probe=np2", "-seed=1", "-tmax=9"}
	args := o.Args(KindSort)
	if !slices.Equal(args, want) {
		t.Fatalf("args %q, want %q", args, want)
	}
	back, err := ParseArgs(KindSort, args)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(back.Given)
	o.Given = slices.Sorted(slices.Values([]string{"Th_learned", "Th_universal", "no-car", "nskip", "probe", "seed", "tmax"}))
	if !reflect.DeepEqual(back, o) {
		t.Errorf("parsed back\n%+v\nwant\n%+v", back, o)
	}
	if !slices.Equal(back.Args(KindSort), want) {
		t.Errorf("encoded again: %q", back.Args(KindSort))
	}
}

// TestArgsKinds checks that each kind of plan takes its own flags: a
// detect plan -threshold and -templates, a sort plan sort's settings.
func TestArgsKinds(t *testing.T) {
	d, s := FlagNames(KindDetect), FlagNames(KindSort)
	for _, c := range []struct {
		names []string
		has   string
		lacks string
	}{{d, "threshold", "Th_universal"}, {d, "templates", "nblocks"}, {s, "Th_learned", "threshold"}, {s, "pc-overwrite", "templates"}} {
		if !slices.Contains(c.names, c.has) || slices.Contains(c.names, c.lacks) {
			t.Errorf("%v: want %s and not %s", c.names, c.has, c.lacks)
		}
	}
	if !slices.IsSorted(d) || !slices.IsSorted(s) || slices.Contains(d, "stream") {
		t.Errorf("flag names %v %v", d, s)
	}
	o, err := ParseArgs(KindDetect, []string{"-threshold=8", "-templates=/t.npz"})
	if err != nil || o.Config.ThUniversal != 8 || o.Templates != "/t.npz" {
		t.Errorf("%+v %v", o, err)
	}
	for _, bad := range [][]string{{"-Th_learned=7"}, {"-threshold=x"}, {"-nskip=2", "extra"}} {
		if _, err := ParseArgs(KindDetect, bad); err == nil || !strings.Contains(err.Error(), "the plan's flags") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
