package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"unsafe"

	"dspk/internal/par"
	"dspk/probe"
)

// Recording is a synthetic recording generated on demand. It implements
// [dspk/recording.Recording] and [dspk/recording.Prober] with random
// access (ReadInt16), and [io.Reader], [io.Seeker] and [io.WriterTo] over
// the bytes of the equivalent .bin file (little-endian int16, interleaved
// by time point). Chunks are generated in parallel on up to GOMAXPROCS
// goroutines; a few recent chunks are cached. Methods are safe for
// concurrent use, but they are serialised.
type Recording struct {
	m     *model
	truth *Truth
	parts parts

	mu     sync.Mutex
	pos    int64 // byte offset of Read/Seek/WriteTo
	cache  map[int64][]int16
	order  []int64 // cached chunks, oldest first
	closed bool
	pool   sync.Pool // *workspace
}

// Generate draws the units and spike trains of cfg and returns the
// recording, whose samples are generated when read. It returns an error
// if cfg is invalid.
func Generate(cfg Config) (*Recording, error) {
	return generate(cfg, partAll)
}

func generate(cfg Config, p parts) (*Recording, error) {
	rc, err := cfg.resolved()
	if err != nil {
		return nil, err
	}
	m := newModel(rc)
	r := &Recording{m: m, truth: newTruth(m), parts: p, cache: map[int64][]int16{}}
	r.pool.New = func() any { return m.newWorkspace() }
	return r, nil
}

// Truth returns the ground truth. It is shared, not copied: do not modify
// it.
func (r *Recording) Truth() *Truth { return r.truth }

// Config returns the resolved configuration (with its probe filled in).
func (r *Recording) Config() Config {
	c := r.m.cfg
	c.Probe = cloneProbe(c.Probe)
	return c
}

// Name identifies the recording in messages: "sim(seed=S)".
func (r *Recording) Name() string { return fmt.Sprintf("sim(seed=%d)", r.m.cfg.Seed) }

// Format returns "sim".
func (r *Recording) Format() string { return "sim" }

// Channels returns the number of channels per time point (the probe's
// NChanFile, 385 for Neuropixels 1.0).
func (r *Recording) Channels() int { return r.m.nChan }

// SampleRate returns the sampling rate in Hz.
func (r *Recording) SampleRate() float64 { return r.m.cfg.SampleRate }

// Samples returns the number of time points.
func (r *Recording) Samples() int64 { return r.m.samples }

// Size returns the number of bytes of the .bin file.
func (r *Recording) Size() int64 { return r.m.samples * int64(r.m.nChan) * 2 }

// MicrovoltsPerCount returns Config.MicrovoltsPerCount for every row but
// the sync row, which gets 0. Rows that are not sites (they hold zeros)
// count as neural channels, as SpikeGLX's meta describes them.
func (r *Recording) MicrovoltsPerCount() []float64 {
	uv := make([]float64, r.m.nChan)
	for i := range uv {
		if i != r.m.syncRow {
			uv[i] = r.m.cfg.MicrovoltsPerCount
		}
	}
	return uv
}

// Probe returns a copy of the probe geometry.
func (r *Recording) Probe() *probe.Probe { return cloneProbe(r.m.probe) }

// Close drops the cached chunks; later reads fail.
func (r *Recording) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.cache, r.order = nil, nil
	return nil
}

var errClosed = errors.New("sim: recording is closed")

// workers is the number of chunks generated at once.
func workers() int { return max(1, runtime.GOMAXPROCS(0)) }

// renderChunk generates chunk k into dst, reallocating it if it is too
// small, and returns it.
func (r *Recording) renderChunk(k int64, dst []int16) []int16 {
	start, end := r.m.chunkBounds(k)
	n := int(end-start) * r.m.nChan
	if cap(dst) < n {
		dst = make([]int16, n)
	}
	dst = dst[:n]
	ws := r.pool.Get().(*workspace)
	r.m.render(k, dst, ws, r.parts)
	r.pool.Put(ws)
	return dst
}

// chunks returns chunks [k0, k1), generating the ones not cached in
// parallel and caching them. The caller holds r.mu; k1−k0 must not exceed
// the cache capacity.
func (r *Recording) chunks(k0, k1 int64) [][]int16 {
	out := make([][]int16, k1-k0)
	var missing []int64
	for k := k0; k < k1; k++ {
		if c, ok := r.cache[k]; ok {
			out[k-k0] = c
		} else {
			missing = append(missing, k)
		}
	}
	par.Each(len(missing), workers(), func(_, i int) {
		out[missing[i]-k0] = r.renderChunk(missing[i], nil)
	})
	for _, k := range missing {
		r.cache[k] = out[k-k0]
		r.order = append(r.order, k)
	}
	for len(r.order) > r.cacheCap() {
		delete(r.cache, r.order[0])
		r.order = r.order[1:]
	}
	return out
}

// cacheCap is the number of chunks kept: two rounds of generation.
func (r *Recording) cacheCap() int { return max(4, 2*workers()) }

// ReadInt16 reads samples [start, start+n) into dst, interleaved as stored:
// dst[t*Channels()+c]. It panics if len(dst) != n*Channels() or n < 0, and
// returns an error if the range is outside the recording.
func (r *Recording) ReadInt16(dst []int16, start int64, n int) error {
	C := r.m.nChan
	if n < 0 || len(dst) != n*C {
		panic(fmt.Sprintf("sim: ReadInt16 of %d samples × %d channels into %d values", n, C, len(dst)))
	}
	if start < 0 || start+int64(n) > r.m.samples {
		return fmt.Errorf("sim: %s: samples [%d, %d) outside the recording of %d", r.Name(), start, start+int64(n), r.m.samples)
	}
	if n == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errClosed
	}
	end := start + int64(n)
	k0, kEnd := start/ChunkSamples, (end-1)/ChunkSamples+1
	step := int64(workers())
	for k := k0; k < kEnd; k += step {
		cs := r.chunks(k, min(k+step, kEnd))
		for i, c := range cs {
			cs0, cs1 := r.m.chunkBounds(k + int64(i))
			a, b := max(cs0, start), min(cs1, end)
			copy(dst[(a-start)*int64(C):(b-start)*int64(C)], c[(a-cs0)*int64(C):(b-cs0)*int64(C)])
		}
	}
	return nil
}

// nativeLE reports whether int16 memory is little-endian on this host.
var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// leBytes returns the little-endian bytes of s: a view on little-endian
// hosts, a copy otherwise.
func leBytes(s []int16) []byte {
	if len(s) == 0 {
		return nil
	}
	if nativeLE {
		return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 2*len(s))
	}
	b := make([]byte, 2*len(s))
	for i, v := range s {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	return b
}

// chunkBytes is the number of bytes of a full chunk.
func (r *Recording) chunkBytes() int64 { return ChunkSamples * int64(r.m.nChan) * 2 }

// Read reads the next bytes of the .bin file into p. It fills p unless the
// end comes first, and returns io.EOF at the end.
func (r *Recording) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, errClosed
	}
	size := r.Size()
	n := 0
	for n < len(p) && r.pos < size {
		k := r.pos / r.chunkBytes()
		c, ok := r.cache[k]
		if !ok {
			c = r.chunks(k, min(k+int64(workers()), r.m.numChunks()))[0]
		}
		m := copy(p[n:], leBytes(c)[r.pos-k*r.chunkBytes():])
		n += m
		r.pos += int64(m)
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Seek sets the byte offset of the next Read or WriteTo, as [io.Seeker]
// describes. Offsets beyond the end are allowed (Read then returns io.EOF).
func (r *Recording) Seek(offset int64, whence int) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = r.pos
	case io.SeekEnd:
		base = r.Size()
	default:
		return r.pos, fmt.Errorf("sim: Seek: bad whence %d", whence)
	}
	if base+offset < 0 {
		return r.pos, fmt.Errorf("sim: Seek to negative offset %d", base+offset)
	}
	r.pos = base + offset
	return r.pos, nil
}

// WriteTo writes the bytes of the .bin file from the current offset to the
// end into w, generating chunks in parallel while earlier ones are
// written, and returns the number of bytes written.
func (r *Recording) WriteTo(w io.Writer) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, errClosed
	}
	size := r.Size()
	var written int64
	if r.pos >= size {
		return 0, nil
	}
	// Finish a partly read chunk through the cache.
	cb := r.chunkBytes()
	if off := r.pos % cb; off != 0 {
		k := r.pos / cb
		c := r.chunks(k, k+1)[0]
		m, err := w.Write(leBytes(c)[off:])
		written += int64(m)
		r.pos += int64(m)
		if err != nil {
			return written, err
		}
	}
	if r.pos >= size {
		return written, nil
	}
	k0, nk := r.pos/cb, r.m.numChunks()

	nw := workers()
	type job struct {
		k   int64
		out chan []int16
	}
	jobs := make(chan job)
	order := make(chan chan []int16, 2*nw)
	free := make(chan []int16, 3*nw+1) // buffers written out, for reuse
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // producer
		defer close(jobs)
		defer close(order)
		for k := k0; k < nk; k++ {
			ch := make(chan []int16, 1)
			select {
			case order <- ch:
			case <-done:
				return
			}
			select {
			case jobs <- job{k, ch}:
			case <-done:
				return
			}
		}
	})
	for range nw {
		wg.Go(func() {
			for j := range jobs {
				var buf []int16
				select {
				case buf = <-free:
				default:
				}
				j.out <- r.renderChunk(j.k, buf)
			}
		})
	}
	var err error
	for ch := range order {
		c := <-ch
		b := leBytes(c)
		m, werr := w.Write(b)
		written += int64(m)
		r.pos += int64(m)
		if werr == nil && m < len(b) {
			werr = io.ErrShortWrite
		}
		if werr != nil {
			err = werr
			break
		}
		select {
		case free <- c:
		default:
		}
	}
	close(done)
	wg.Wait()
	return written, err
}
