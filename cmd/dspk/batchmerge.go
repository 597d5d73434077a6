package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"dspk/detect"
	"dspk/export"
	"dspk/phy"
	"dspk/pipeline"
	"dspk/recording"
)

// npyChunks reads a little-endian .npy array of 4- or 8-byte elements
// row by row, a chunk at a time, so that a merge holds only a chunk of
// each shard's arrays in memory.
type npyChunks struct {
	path  string
	f     *os.File
	r     *bufio.Reader
	descr string
	rows  int // rows left
	width int // elements per row
	size  int // bytes per element
	raw   []byte
}

// openChunks opens path and checks its dtype and trailing shape.
func openChunks(path, descr string, tail ...int) (*npyChunks, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	d, fortran, shape, err := export.ReadNPYHeader(r)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("batch: %s: %w", path, err)
	}
	if d != descr || fortran || len(shape) != 1+len(tail) || !slices.Equal(shape[1:], tail) {
		f.Close()
		return nil, fmt.Errorf("batch: %s: %s %v, want %s (n, %v)", path, d, shape, descr, tail)
	}
	c := &npyChunks{path: path, f: f, r: r, descr: d, rows: shape[0], width: 1, size: 4}
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
		return nil, fmt.Errorf("batch: reading %s: %w", c.path, err)
	}
	c.rows -= m
	return c.raw, nil
}

func (c *npyChunks) Close() error { return c.f.Close() }

func i64s(dst []int64, b []byte) []int64 {
	dst = dst[:0]
	for i := 0; i < len(b); i += 8 {
		dst = append(dst, int64(binary.LittleEndian.Uint64(b[i:])))
	}
	return dst
}

func i32s(dst []int32, b []byte) []int32 {
	dst = dst[:0]
	for i := 0; i < len(b); i += 4 {
		dst = append(dst, int32(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}

func f32s(dst []float32, b []byte) []float32 {
	dst = dst[:0]
	for i := 0; i < len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}

// readWhole reads a small .npy array of dtype descr whole ([]int32 or
// []float32) with its shape.
func readWhole(path, descr string) (any, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("batch: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	d, fortran, shape, err := export.ReadNPYHeader(r)
	if err != nil {
		return nil, nil, fmt.Errorf("batch: %s: %w", path, err)
	}
	if d != descr || fortran {
		return nil, nil, fmt.Errorf("batch: %s: dtype %s, want %s", path, d, descr)
	}
	n := 1
	for _, s := range shape {
		n *= s
	}
	b := make([]byte, 4*n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, nil, fmt.Errorf("batch: reading %s: %w", path, err)
	}
	if descr == "<i4" {
		return i32s(nil, b), shape, nil
	}
	return f32s(nil, b), shape, nil
}

// mergeChunk is the number of spikes a merge replays at a time.
const mergeChunk = 1 << 15

// mergeShards writes row r's folder from its shards: the global results
// give the run's description (Begin), every shard's spikes are replayed
// in file order, a chunk at a time, through the same writer a single run
// uses (Window), and End writes the cluster files from them. The result
// files are thus those of one run over the whole recording; dspk.json's
// summary holds the summed spike and work counts, the merge's own wall
// time added to the shards' summed wall and pass times.
func mergeShards(ctx context.Context, p *pipeline.Pipeline, g *pipeline.Global, r *Row, opt phy.Options) error {
	start := time.Now()
	info, err := p.Info(g, fmt.Sprintf("merge of %d shards", len(r.Parts)))
	if err != nil {
		return err
	}
	w, err := phy.Create(r.Out, opt)
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Begin(info); err != nil {
		return err
	}
	sched := p.Schedule()
	sum := &pipeline.Summary{Windows: sched.Windows, Samples: sched.End - sched.Start, Clips: g.Clips,
		Centres: info.Grid.F(), PassSeconds: map[string]float64{}}
	nc, np := info.Grid.NC, g.Universal.P
	s := &detect.Spikes{NC: nc, P: np}
	var t32, chans []int32
	var shardWall float64
	var feat []float32
	for _, part := range r.Parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		ss, err := readShardSummary(part)
		if err != nil {
			return err
		}
		n := ss.Spikes
		sum.Work.Add(ss.Work)
		shardWall += ss.Wall
		for k, v := range ss.Passes {
			sum.PassSeconds[k] += v
		}
		open := func(name, descr string, tail ...int) *npyChunks {
			if err != nil {
				return nil
			}
			var c *npyChunks
			c, err = openChunks(filepath.Join(part, name), descr, tail...)
			return c
		}
		times := open("spike_times.npy", "<i8")
		tmpl := open("spike_detection_templates.npy", "<i4")
		amp := open("amplitudes.npy", "<f4")
		pos := open("spike_positions.npy", "<f4", 2)
		cent := open("spike_centres.npy", "<i4")
		pcf := open("pc_features.npy", "<f4", np, nc)
		chn := open("spike_channels.npy", "<i4", nc)
		all := []*npyChunks{times, tmpl, amp, pos, cent, pcf, chn}
		closeAll := func() {
			for _, c := range all {
				if c != nil {
					c.Close()
				}
			}
		}
		if err != nil {
			closeAll()
			return err
		}
		for _, c := range all {
			if c.rows != n {
				closeAll()
				return fmt.Errorf("batch: %s: %d rows, the shard's dspk.json says %d spikes", c.path, c.rows, n)
			}
		}
		for left := n; left > 0; {
			m := min(left, mergeChunk)
			read := func(c *npyChunks) []byte {
				if err != nil {
					return nil
				}
				var b []byte
				b, err = c.next(m)
				return b
			}
			s.Sample = i64s(s.Sample, read(times))
			t32 = i32s(t32, read(tmpl))
			s.Amplitude = f32s(s.Amplitude, read(amp))
			xy := f32s(nil, read(pos))
			s.Center = i32s(s.Center, read(cent))
			feat = f32s(feat, read(pcf))
			chans = i32s(chans, read(chn))
			if err != nil {
				closeAll()
				return err
			}
			s.Template = s.Template[:0]
			s.X, s.Y = s.X[:0], s.Y[:0]
			for i := range m {
				s.Template = append(s.Template, int16(t32[i]))
				s.X = append(s.X, xy[2*i])
				s.Y = append(s.Y, xy[2*i+1])
			}
			s.Channels = chans
			// pc_features is (spike, pc, channel); the detector's order
			// is (spike, channel, pc).
			s.Features = slices.Grow(s.Features[:0], m*nc*np)[:m*nc*np]
			for i := range m {
				for q := range np {
					for j := range nc {
						s.Features[(i*nc+j)*np+q] = feat[(i*np+q)*nc+j]
					}
				}
			}
			if err := w.Window(recording.Window{}, s); err != nil {
				closeAll()
				return err
			}
			sum.Spikes += m
			left -= m
		}
		closeAll()
	}
	// The wall time is the shards' summed and the merge's own (the
	// global step's is not known here).
	sum.Wall = time.Since(start) + time.Duration(shardWall*float64(time.Second))
	sum.PassSeconds["merge"] = time.Since(start).Seconds()
	sum.WallSeconds = sum.Wall.Seconds()
	sum.Seconds = float64(sum.Samples) / info.Recording.SampleRate()
	sum.TimesRealTime = sum.Seconds / sum.WallSeconds
	sum.Warnings = g.Warnings
	return w.End(sum)
}

// shardSummary reads a shard folder's work counts and spike count from
// its dspk.json.
func shardSummary(dir string) (detect.Stats, int, error) {
	s, err := readShardSummary(dir)
	return s.Work, s.Spikes, err
}

// shardSum is the part of a shard's dspk.json summary a merge uses.
type shardSum struct {
	Spikes int                `json:"spikes"`
	Work   detect.Stats       `json:"work"`
	Wall   float64            `json:"wall_seconds"`
	Passes map[string]float64 `json:"pass_seconds"`
}

// readShardSummary reads a shard folder's dspk.json summary.
func readShardSummary(dir string) (shardSum, error) {
	b, err := os.ReadFile(filepath.Join(dir, "dspk.json"))
	if err != nil {
		return shardSum{}, fmt.Errorf("batch: shard %w", err)
	}
	var d struct {
		Summary shardSum `json:"summary"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return shardSum{}, fmt.Errorf("batch: %s: %w", filepath.Join(dir, "dspk.json"), err)
	}
	return d.Summary, nil
}
