package recording

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"dspk/probe"
)

// Warner is implemented by recordings that opened despite a problem in
// their files (for example a SpikeGLX size that disagrees with the meta).
type Warner interface {
	// Warnings returns one line per problem.
	Warnings() []string
}

// Filer is implemented by recordings stored in several data files that
// are read one after the other.
type Filer interface {
	// Files returns the data files in reading order.
	Files() []string
}

// Concat is several recordings of one run read as one recording, in
// order: sample Samples() of the first is sample 0 of the second, and so
// on. It is what a SpikeGLX run split by triggers or gates (_t0, _t1, …)
// becomes; spike times count from the first sample of the first file.
type Concat struct {
	parts  []Recording
	starts []int64 // first sample of each part; starts[len(parts)] = total
}

// NewConcat returns the parts read as one recording. They must agree in
// format, channel count, sample rate, µV per count and stated geometry;
// errors name the first part that differs. NewConcat takes ownership of
// the parts: Close closes them all.
func NewConcat(parts []Recording) (*Concat, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("recording: no files to read as one recording")
	}
	a := parts[0]
	c := &Concat{parts: parts, starts: []int64{0}}
	for i, p := range parts {
		if i > 0 {
			if p.Format() != a.Format() || p.Channels() != a.Channels() || p.SampleRate() != a.SampleRate() {
				return nil, fmt.Errorf("recording: %s (%s, %d channels, %g Hz) cannot follow %s (%s, %d channels, %g Hz) in one recording",
					p.Name(), p.Format(), p.Channels(), p.SampleRate(), a.Name(), a.Format(), a.Channels(), a.SampleRate())
			}
			if !slices.Equal(p.MicrovoltsPerCount(), a.MicrovoltsPerCount()) {
				return nil, fmt.Errorf("recording: %s has other gains (µV per count) than %s: not one recording", p.Name(), a.Name())
			}
			if !sameProbe(stated(p), stated(a)) {
				return nil, fmt.Errorf("recording: %s states another geometry than %s: not one recording", p.Name(), a.Name())
			}
		}
		c.starts = append(c.starts, c.starts[i]+p.Samples())
	}
	return c, nil
}

func stated(r Recording) *probe.Probe {
	if p, ok := r.(Prober); ok {
		return p.Probe()
	}
	return nil
}

func sameProbe(a, b *probe.Probe) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.ChanMap, b.ChanMap) && slices.Equal(a.X, b.X) && slices.Equal(a.Y, b.Y) &&
		slices.Equal(a.Shank, b.Shank) && a.NChanFile == b.NChanFile
}

// Name returns the first file's name.
func (c *Concat) Name() string { return c.parts[0].Name() }

// Format returns the parts' format.
func (c *Concat) Format() string { return c.parts[0].Format() }

// Channels returns the parts' channel count.
func (c *Concat) Channels() int { return c.parts[0].Channels() }

// SampleRate returns the parts' rate.
func (c *Concat) SampleRate() float64 { return c.parts[0].SampleRate() }

// Samples returns the total number of time points.
func (c *Concat) Samples() int64 { return c.starts[len(c.parts)] }

// MicrovoltsPerCount returns the parts' scales.
func (c *Concat) MicrovoltsPerCount() []float64 { return c.parts[0].MicrovoltsPerCount() }

// Probe returns the geometry the files state, or nil.
func (c *Concat) Probe() *probe.Probe { return stated(c.parts[0]) }

// Parts returns the recordings read one after the other.
func (c *Concat) Parts() []Recording { return slices.Clone(c.parts) }

// PartStarts returns the first sample of each part in the whole.
func (c *Concat) PartStarts() []int64 { return slices.Clone(c.starts[:len(c.parts)]) }

// Files returns the parts' names in order.
func (c *Concat) Files() []string {
	out := make([]string, len(c.parts))
	for i, p := range c.parts {
		out[i] = p.Name()
	}
	return out
}

// Warnings returns the parts' warnings.
func (c *Concat) Warnings() []string {
	var w []string
	for _, p := range c.parts {
		if pw, ok := p.(Warner); ok {
			w = append(w, pw.Warnings()...)
		}
	}
	return w
}

// ReadInt16 reads samples [start, start+n) into dst, across parts (see
// [Recording]).
func (c *Concat) ReadInt16(dst []int16, start int64, n int) error {
	ch := c.Channels()
	if err := checkRead(c.Name(), ch, c.Samples(), dst, start, n); err != nil {
		return err
	}
	// The part holding start: the last whose first sample is ≤ start.
	i, found := slices.BinarySearch(c.starts[:len(c.parts)], start)
	if !found {
		i--
	}
	for n > 0 {
		for c.starts[i+1] == start { // skip empty parts
			i++
		}
		m := int(min(int64(n), c.starts[i+1]-start))
		if err := c.parts[i].ReadInt16(dst[:m*ch], start-c.starts[i], m); err != nil {
			return err
		}
		dst, start, n = dst[m*ch:], start+int64(m), n-m
	}
	return nil
}

// Close closes every part and returns the first error.
func (c *Concat) Close() error {
	var first error
	for _, p := range c.parts {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// runName matches the gate and trigger of a SpikeGLX file name,
// run_g0_t3.imec0.ap.bin (or CatGT's _tcat).
var runName = regexp.MustCompile(`_g(\d+)_t(\d+|cat)`)

// SortRunFiles orders SpikeGLX files of one run by gate, then trigger
// (numerically: _t10 after _t9). It is an error if two names differ in
// more than their _gN_tM part (files of different runs, probes or bands).
func SortRunFiles(paths []string) ([]string, error) {
	type key struct {
		g, t int
		p    string
	}
	keys := make([]key, len(paths))
	var stem string
	for i, p := range paths {
		base := filepath.Base(p)
		m := runName.FindStringSubmatchIndex(base)
		if m == nil {
			return nil, fmt.Errorf("recording: %s: not a SpikeGLX run file name (<run>_g<gate>_t<trigger>…)", p)
		}
		s := base[:m[0]] + "_g*_t*" + base[m[1]:]
		if i == 0 {
			stem = s
		} else if s != stem {
			return nil, fmt.Errorf("recording: %s and %s are not files of one run (names differ beyond _g/_t)", paths[0], p)
		}
		g, _ := strconv.Atoi(base[m[2]:m[3]])
		t, err := strconv.Atoi(base[m[4]:m[5]])
		if err != nil {
			t = -1 // _tcat: a whole run already
		}
		keys[i] = key{g, t, p}
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.g, b.g), cmp.Compare(a.t, b.t))
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.p
		if i > 0 && keys[i-1].g == k.g && keys[i-1].t == k.t {
			return nil, fmt.Errorf("recording: %s and %s are the same gate and trigger", keys[i-1].p, k.p)
		}
	}
	return out, nil
}
