package cliflag

import (
	"flag"
	"fmt"
	"strings"
)

// key is the name under which two spellings of one flag are the same:
// '_' read as '-'.
func key(name string) string { return strings.ReplaceAll(name, "_", "-") }

// isBool reports whether fl takes no value unless given with '='.
func isBool(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Normalize returns args with every flag name that fs does not define,
// but that names one of its flags once '-' and '_' are taken as the same
// character, rewritten to the name fs defines: "-Th-learned 7" becomes
// "-Th_learned 7" and "--no_car" "--no-car". Arguments are read as
// [flag.FlagSet.Parse] reads them, with positional arguments allowed
// between flags: the value after a flag that takes one is left alone,
// and so is everything after "--". args itself is not modified.
func Normalize(fs *flag.FlagSet, args []string) []string {
	byKey := map[string]*flag.Flag{}
	fs.VisitAll(func(fl *flag.Flag) { byKey[key(fl.Name)] = fl })
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		dashes := "-"
		if a[1] == '-' {
			dashes = "--"
		}
		name, value, hasValue := strings.Cut(a[len(dashes):], "=")
		fl := fs.Lookup(name)
		if fl == nil {
			fl = byKey[key(name)]
			if fl == nil {
				continue // flag.Parse reports it
			}
			out[i] = dashes + fl.Name
			if hasValue {
				out[i] += "=" + value
			}
		}
		if !hasValue && !isBool(fl) {
			i++ // its value
		}
	}
	return out
}

// Parse parses the flags of args into fs, spelt as [Normalize] allows,
// before or after the positional arguments ("dspk detect REC -o DIR"),
// and returns the positional arguments; "--" ends the flags.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	args = Normalize(fs, args)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// Closest returns the name of the flag of fs that name most likely
// misspells, or "" if none is close: the fewest edits (a letter added,
// dropped, changed, or two neighbours swapped; case, '-' and '_' not
// counted), at most one for every three letters of name (at least one,
// and fewer than its letters), or a flag whose name holds name or is held in it (three letters or
// more). Ties go to the first name in lexical order.
func Closest(fs *flag.FlagSet, name string) string {
	want := strings.ToLower(key(strings.TrimLeft(name, "-")))
	if want == "" {
		return ""
	}
	best, bestD := "", -1
	fs.VisitAll(func(fl *flag.Flag) {
		have := strings.ToLower(key(fl.Name))
		d := distance(want, have)
		if d > max(1, len(want)/3) || d >= len(want) {
			if len(want) < 3 || len(have) < 3 || !strings.Contains(have, want) && !strings.Contains(want, have) {
				return
			}
			d = max(1, len(want)/3) + 1 // a containment ranks after every close spelling
		}
		if bestD < 0 || d < bestD {
			best, bestD = fl.Name, d
		}
	})
	return best
}

// distance is the optimal string alignment distance of a and b, in
// bytes: insertions, deletions, substitutions and transpositions of
// neighbours.
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// undefinedPrefix starts the error [flag.FlagSet.Parse] returns for a
// flag it does not define.
const undefinedPrefix = "flag provided but not defined: -"

// Explain returns the message of err, an error of parsing fs's flags, on
// one line; for a flag fs does not define it names the closest flag
// ("flag provided but not defined: -devcie; did you mean -device?").
func Explain(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, undefinedPrefix); ok {
		if c := Closest(fs, name); c != "" {
			msg += fmt.Sprintf("; did you mean -%s?", c)
		}
	}
	return msg
}
