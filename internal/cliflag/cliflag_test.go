package cliflag

import (
	"errors"
	"flag"
	"io"
	"slices"
	"testing"
)

// testFlags is a flag set with names of both spellings, a bool and
// flags that take values.
func testFlags() (*flag.FlagSet, *float64, *bool, *string) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	th := fs.Float64("Th_learned", 8, "")
	noCAR := fs.Bool("no-car", false, "")
	dev := fs.String("device", "auto", "")
	fs.Int("nblocks", 1, "")
	fs.String("o", "", "")
	fs.Float64("tmin", 0, "")
	return fs, th, noCAR, dev
}

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"-Th-learned", "7", "rec.bin"}, []string{"-Th_learned", "7", "rec.bin"}},
		{[]string{"--Th-learned=7"}, []string{"--Th_learned=7"}},
		{[]string{"-no_car", "rec.bin", "-o", "out"}, []string{"-no-car", "rec.bin", "-o", "out"}},
		{[]string{"-no_car=false"}, []string{"-no-car=false"}},
		// A value that looks like a flag is left alone.
		{[]string{"-o", "-no_car", "rec.bin"}, []string{"-o", "-no_car", "rec.bin"}},
		{[]string{"-tmin", "-Th-learned"}, []string{"-tmin", "-Th-learned"}},
		// After "--" nothing is a flag.
		{[]string{"--", "-Th-learned"}, []string{"--", "-Th-learned"}},
		// Unknown flags and "-" pass through for Parse to judge.
		{[]string{"-devcie", "cpu", "-"}, []string{"-devcie", "cpu", "-"}},
		// Case is not a spelling rule.
		{[]string{"-th_learned", "7"}, []string{"-th_learned", "7"}},
	} {
		fs, _, _, _ := testFlags()
		in := slices.Clone(c.in)
		got := Normalize(fs, in)
		if !slices.Equal(got, c.want) {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("Normalize(%q) modified its argument", c.in)
		}
	}
	fs, th, noCAR, _ := testFlags()
	if err := fs.Parse(Normalize(fs, []string{"-Th-learned", "6.5", "-no_car"})); err != nil || *th != 6.5 || !*noCAR {
		t.Errorf("parsed -Th-learned 6.5 -no_car: %v, Th_learned %g, no-car %v", err, *th, *noCAR)
	}
}

func TestClosest(t *testing.T) {
	fs, _, _, _ := testFlags()
	for _, c := range []struct{ in, want string }{
		{"devcie", "device"},   // swapped neighbours
		{"--devise", "device"}, // a changed letter, two dashes
		{"nblock", "nblocks"},
		{"TH_LEARNED", "Th_learned"},
		{"learned", "Th_learned"}, // held in the name
		{"Th-learn", "Th_learned"},
		{"tmim", "tmin"},
		{"oo", "o"},
		{"frobnicate", ""},
		{"x", ""},
		{"", ""},
	} {
		if got := Closest(fs, c.in); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestExplain(t *testing.T) {
	fs, _, _, _ := testFlags()
	err := fs.Parse([]string{"-devcie", "cpu"})
	if got, want := Explain(fs, err), "flag provided but not defined: -devcie; did you mean -device?"; got != want {
		t.Errorf("Explain = %q, want %q", got, want)
	}
	err = fs.Parse([]string{"-frobnicate"})
	if got, want := Explain(fs, err), "flag provided but not defined: -frobnicate"; got != want {
		t.Errorf("Explain = %q, want %q", got, want)
	}
	if got, want := Explain(fs, errors.New("invalid value")), "invalid value"; got != want {
		t.Errorf("Explain = %q, want %q", got, want)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"device", "device", 0},
		{"devcie", "device", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3},
	} {
		if got := distance(c.a, c.b); got != c.want {
			t.Errorf("distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, pos []string
		th      float64
		noCAR   bool
	}{
		{[]string{"rec.bin", "-Th-learned", "7", "-no_car"}, []string{"rec.bin"}, 7, true},
		{[]string{"-o", "out", "a", "b", "-Th_learned=6"}, []string{"a", "b"}, 6, false},
		{[]string{"a", "--", "-no_car", "b"}, []string{"a", "-no_car", "b"}, 8, false},
		{nil, nil, 8, false},
	} {
		fs, th, noCAR, _ := testFlags()
		pos, err := Parse(fs, c.in)
		if err != nil || !slices.Equal(pos, c.pos) || *th != c.th || *noCAR != c.noCAR {
			t.Errorf("Parse(%q) = %q, %v; Th_learned %g, no-car %v", c.in, pos, err, *th, *noCAR)
		}
	}
	fs, _, _, _ := testFlags()
	if _, err := Parse(fs, []string{"a", "-devcie", "cpu"}); err == nil || Explain(fs, err) != "flag provided but not defined: -devcie; did you mean -device?" {
		t.Errorf("Parse of a misspelt flag: %v", err)
	}
}
