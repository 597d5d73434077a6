package phy

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"dspk/detect"
	"dspk/export"
	"dspk/linalg"
	"dspk/pipeline"
)

// The files of a detection split in time: the global step's folder holds
// the whitening operator and the universal templates (SaveGlobal); each
// shard is a detect folder of its windows, whose per-spike arrays a merge
// reads back ([OpenShard]).

// SaveGlobal writes the global results of a detection split in time into
// dir: the whitening operator (whitening_index.npy, int32 C×K;
// whitening_value.npy, float32 C×K), the templates (wTEMP.npy, wPCA.npy)
// and global.json (their source, the clip count and the warnings).
func SaveGlobal(dir string, g *pipeline.Global) error {
	w, tm := g.Whitening, g.Universal
	err := writeNPYs(dir, []npyFile{
		{"whitening_index.npy", []int{w.C, w.K}, w.Index},
		{"whitening_value.npy", []int{w.C, w.K}, w.Value},
		{"wTEMP.npy", []int{tm.K, tm.NT}, tm.WTEMP},
		{"wPCA.npy", []int{tm.P, tm.NT}, tm.WPCA},
	})
	if err != nil {
		return err
	}
	return export.WriteJSON(filepath.Join(dir, "global.json"), globalInfo{Source: g.UniversalSource, Clips: g.Clips, Warnings: g.Warnings})
}

// globalInfo is global.json.
type globalInfo struct {
	Source   string   `json:"templates"`
	Clips    int      `json:"template_clips"`
	Warnings []string `json:"warnings"`
}

// LoadGlobal reads what SaveGlobal wrote into dir, for templates of nt
// samples.
func LoadGlobal(dir string, nt int) (*pipeline.Global, error) {
	tm, err := detect.LoadTemplates(dir, nt)
	if err != nil {
		return nil, err
	}
	ia, err := readNPYOf(dir, "whitening_index.npy", "<i4", -1, -1)
	if err != nil {
		return nil, err
	}
	va, err := readNPYOf(dir, "whitening_value.npy", "<f4", ia.Shape[0], ia.Shape[1])
	if err != nil {
		return nil, err
	}
	w := &linalg.Whitening{C: ia.Shape[0], K: ia.Shape[1]}
	if w.Index, err = npyInt32(ia); err != nil {
		return nil, err
	}
	if w.Value, err = va.Float32(); err != nil {
		return nil, err
	}
	if err := checkWhitening(dir, w); err != nil {
		return nil, err
	}
	var gi globalInfo
	if err := readJSON(filepath.Join(dir, "global.json"), &gi); err != nil {
		return nil, err
	}
	return &pipeline.Global{Whitening: w, Universal: tm, UniversalSource: gi.Source, Clips: gi.Clips, Warnings: gi.Warnings}, nil
}

// checkWhitening refuses a whitening operator read from dir whose index
// names a channel it does not have.
func checkWhitening(dir string, w *linalg.Whitening) error {
	for i, v := range w.Index {
		if v < 0 || int(v) >= w.C {
			return fmt.Errorf("phy: %s: whitening_index.npy entry %d is %d, outside [0, %d)", dir, i, v, w.C)
		}
	}
	return nil
}

// readJSON reads the JSON file path into v.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("phy: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("phy: %s: %w", path, err)
	}
	return nil
}

// ShardSummary is the part of a detect folder's dspk.json summary that a
// merge of shards uses.
type ShardSummary struct {
	// Spikes is the number of spikes of the folder.
	Spikes int `json:"spikes"`
	// Work counts the detector's work.
	Work detect.Stats `json:"work"`
	// Wall is the run's wall time in seconds and Passes each pass's.
	Wall   float64            `json:"wall_seconds"`
	Passes map[string]float64 `json:"pass_seconds"`
}

// ReadShardSummary reads the summary of the detect folder dir's
// dspk.json.
func ReadShardSummary(dir string) (ShardSummary, error) {
	var d struct {
		Summary ShardSummary `json:"summary"`
	}
	err := readJSON(filepath.Join(dir, "dspk.json"), &d)
	return d.Summary, err
}

// ShardReader reads the per-spike arrays of a detect folder back as the
// detector's spikes, a chunk at a time, so that a merge holds only a
// chunk of each shard in memory. Replayed in order through a [Writer],
// the shards of a recording write the folder of one run over it.
type ShardReader struct {
	nc, p                                   int
	times, tmpl, amp, pos, cent, pcf, chans *npyChunks
	all                                     []*npyChunks
	// Scratch for the dtype and axis-order conversions.
	t32  []int32
	fxy  []float32
	feat []float32
}

// OpenShard opens the per-spike arrays of the detect folder dir, of nc
// channels and p features per spike, and checks that each holds spikes
// rows.
func OpenShard(dir string, nc, p, spikes int) (*ShardReader, error) {
	r := &ShardReader{nc: nc, p: p}
	var err error
	open := func(name, descr string, tail ...int) *npyChunks {
		if err != nil {
			return nil
		}
		var c *npyChunks
		if c, err = openChunks(filepath.Join(dir, name), descr, tail...); err == nil {
			r.all = append(r.all, c)
		}
		return c
	}
	r.times = open("spike_times.npy", "<i8")
	r.tmpl = open("spike_detection_templates.npy", "<i4")
	r.amp = open("amplitudes.npy", "<f4")
	r.pos = open("spike_positions.npy", "<f4", 2)
	r.cent = open("spike_centres.npy", "<i4")
	r.pcf = open("pc_features.npy", "<f4", p, nc)
	r.chans = open("spike_channels.npy", "<i4", nc)
	if err == nil {
		for _, c := range r.all {
			if c.rows != spikes {
				err = fmt.Errorf("phy: %s: %d rows, the shard's dspk.json says %d spikes", c.path, c.rows, spikes)
				break
			}
		}
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Next reads the next m spikes into s (its slices reused).
func (r *ShardReader) Next(s *detect.Spikes, m int) error {
	var err error
	read := func(c *npyChunks) []byte {
		if err != nil {
			return nil
		}
		var b []byte
		b, err = c.next(m)
		return b
	}
	s.NC, s.P = r.nc, r.p
	s.Sample = int64sLE(s.Sample, read(r.times))
	r.t32 = int32sLE(r.t32, read(r.tmpl))
	s.Amplitude = float32sLE(s.Amplitude, read(r.amp))
	r.fxy = float32sLE(r.fxy, read(r.pos))
	s.Center = int32sLE(s.Center, read(r.cent))
	r.feat = float32sLE(r.feat, read(r.pcf))
	s.Channels = int32sLE(s.Channels, read(r.chans))
	if err != nil {
		return err
	}
	s.Template = s.Template[:0]
	s.X, s.Y = s.X[:0], s.Y[:0]
	for i := range m {
		s.Template = append(s.Template, int16(r.t32[i]))
		s.X = append(s.X, r.fxy[2*i])
		s.Y = append(s.Y, r.fxy[2*i+1])
	}
	// pc_features is (spike, pc, channel); the detector's order is
	// (spike, channel, pc).
	nc, np := r.nc, r.p
	s.Features = slices.Grow(s.Features[:0], m*nc*np)[:m*nc*np]
	for i := range m {
		for q := range np {
			for j := range nc {
				s.Features[(i*nc+j)*np+q] = r.feat[(i*np+q)*nc+j]
			}
		}
	}
	return nil
}

// Close closes the arrays.
func (r *ShardReader) Close() error {
	var first error
	for _, c := range r.all {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// npyChunks reads a little-endian .npy array of 4- or 8-byte elements
// row by row, a chunk at a time.
type npyChunks struct {
	path  string
	f     *os.File
	r     *bufio.Reader
	rows  int // rows left
	width int // elements per row
	size  int // bytes per element
	raw   []byte
}

// openChunks opens path and checks its dtype and trailing shape.
func openChunks(path, descr string, tail ...int) (*npyChunks, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("phy: %w", err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	d, fortran, shape, err := export.ReadNPYHeader(r)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("phy: %s: %w", path, err)
	}
	if d != descr || fortran || len(shape) != 1+len(tail) || !slices.Equal(shape[1:], tail) {
		f.Close()
		return nil, fmt.Errorf("phy: %s: %s %v, want %s (n, %v)", path, d, shape, descr, tail)
	}
	c := &npyChunks{path: path, f: f, r: r, rows: shape[0], width: 1, size: 4}
	for _, t := range tail {
		c.width *= t
	}
	if d == "<i8" || d == "<f8" {
		c.size = 8
	}
	return c, nil
}

// next reads the next m rows' raw bytes.
func (c *npyChunks) next(m int) ([]byte, error) {
	n := m * c.width * c.size
	if cap(c.raw) < n {
		c.raw = make([]byte, n)
	}
	c.raw = c.raw[:n]
	if _, err := io.ReadFull(c.r, c.raw); err != nil {
		return nil, fmt.Errorf("phy: reading %s: %w", c.path, err)
	}
	c.rows -= m
	return c.raw, nil
}

func (c *npyChunks) Close() error { return c.f.Close() }

func int64sLE(dst []int64, b []byte) []int64 {
	dst = dst[:0]
	for i := 0; i < len(b); i += 8 {
		dst = append(dst, int64(binary.LittleEndian.Uint64(b[i:])))
	}
	return dst
}

func int32sLE(dst []int32, b []byte) []int32 {
	dst = dst[:0]
	for i := 0; i < len(b); i += 4 {
		dst = append(dst, int32(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}

func float32sLE(dst []float32, b []byte) []float32 {
	dst = dst[:0]
	for i := 0; i < len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}
