package stream

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"
)

// Source delivers a recording's int16 frames (FileChannels values each,
// little-endian, as SpikeGLX and Open Ephys store them) as they arrive.
type Source interface {
	// Read reads whole frames into dst (len(dst) a multiple of the frame),
	// blocking until at least one is there, and returns how many. At the
	// end of the stream it returns 0 and io.EOF.
	Read(dst []int16) (int, error)
	// Name says what the source is, for messages.
	Name() string
	// Close releases the file or connection.
	Close() error
}

// SourceOptions say how [OpenSource] reads.
type SourceOptions struct {
	// Follow keeps reading a file past its end while it grows (an
	// acquisition program still writing it), as tail -f does, until it
	// has not grown for Idle.
	Follow bool
	// Idle ends a followed file that has not grown for this long
	// (default 5 s).
	Idle time.Duration
	// Realtime delivers the frames no faster than the sample rate Rate,
	// in packets of Packet frames (default 1 ms), each when its last
	// sample would have been recorded: a finished recording replayed as
	// an acquisition system delivers it.
	Realtime bool
	Rate     float64
	Packet   int
}

// OpenSource opens spec as a stream of frames of nf channels: "-" is
// standard input, tcp://HOST:PORT a TCP connection carrying the frames,
// anything else a file (a SpikeGLX .bin, Open Ephys .dat or raw file,
// headerless).
func OpenSource(ctx context.Context, spec string, nf int, opt SourceOptions) (Source, error) {
	var src Source
	switch {
	case spec == "-":
		src = &readerSource{r: os.Stdin, name: "standard input", nf: nf}
	case strings.HasPrefix(spec, "tcp://"):
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", strings.TrimPrefix(spec, "tcp://"))
		if err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
		src = &readerSource{r: c, c: c, name: spec, nf: nf}
	default:
		f, err := os.Open(spec)
		if err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			f.Close()
			return nil, fmt.Errorf("stream: %s is a folder; give the recording's .bin file", spec)
		}
		idle := opt.Idle
		if idle <= 0 {
			idle = 5 * time.Second
		}
		src = &readerSource{r: &follower{ctx: ctx, f: f, follow: opt.Follow, idle: idle}, c: f, name: spec, nf: nf}
	}
	if opt.Realtime {
		if !(opt.Rate > 0) {
			src.Close()
			return nil, errors.New("stream: realtime replay needs the sample rate")
		}
		p := opt.Packet
		if p <= 0 {
			p = max(1, int(opt.Rate/1000))
		}
		src = &realtime{ctx: ctx, src: src, nf: nf, rate: opt.Rate, packet: p}
	}
	return src, nil
}

// readerSource reads frames from a byte stream, keeping a partial frame
// for the next read.
type readerSource struct {
	r    io.Reader
	c    io.Closer
	name string
	nf   int
	buf  []byte
	have int // bytes of buf holding data
}

func (s *readerSource) Name() string { return s.name }

func (s *readerSource) Close() error {
	if s.c != nil {
		return s.c.Close()
	}
	return nil
}

func (s *readerSource) Read(dst []int16) (int, error) {
	fb := 2 * s.nf
	want := len(dst) / s.nf * fb
	if want == 0 {
		return 0, errors.New("stream: read buffer smaller than a frame")
	}
	if len(s.buf) < want {
		nb := make([]byte, want)
		copy(nb, s.buf[:s.have])
		s.buf = nb
	}
	for s.have < fb {
		n, err := s.r.Read(s.buf[s.have:want])
		s.have += n
		if err != nil {
			if errors.Is(err, io.EOF) {
				if s.have > 0 && s.have < fb {
					return 0, fmt.Errorf("stream: %s ends inside a frame (%d of %d bytes)", s.name, s.have, fb)
				}
				return 0, io.EOF
			}
			return 0, fmt.Errorf("stream: %s: %w", s.name, err)
		}
	}
	frames := s.have / fb
	for i := range frames * s.nf {
		dst[i] = int16(binary.LittleEndian.Uint16(s.buf[2*i:]))
	}
	rest := s.have - frames*fb
	copy(s.buf, s.buf[frames*fb:s.have])
	s.have = rest
	return frames, nil
}

// follower reads a file; with follow it waits at the end for more, as
// tail -f does, until the file has not grown for idle or ctx is done.
type follower struct {
	ctx    context.Context
	f      *os.File
	follow bool
	idle   time.Duration
}

// followPoll is how often a followed file is checked for growth.
const followPoll = 200 * time.Microsecond

func (r *follower) Read(p []byte) (int, error) {
	var since time.Time
	for {
		n, err := r.f.Read(p)
		if n > 0 || !errors.Is(err, io.EOF) || !r.follow {
			return n, err
		}
		if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) > r.idle {
			return 0, io.EOF
		}
		select {
		case <-r.ctx.Done():
			return 0, io.EOF
		case <-time.After(followPoll):
		}
	}
}

// realtime paces a source: packet frames at a time, each no earlier than
// the moment its last sample would have been recorded at rate.
type realtime struct {
	ctx    context.Context
	src    Source
	nf     int
	rate   float64
	packet int
	start  time.Time
	sent   int64
	buf    []int16
	have   int // frames buffered
}

func (s *realtime) Name() string { return s.src.Name() + " (replayed in real time)" }

func (s *realtime) Close() error { return s.src.Close() }

func (s *realtime) Read(dst []int16) (int, error) {
	if s.start.IsZero() {
		s.start = time.Now()
		s.buf = make([]int16, s.packet*s.nf)
	}
	for s.have < s.packet {
		n, err := s.src.Read(s.buf[s.have*s.nf:])
		s.have += n
		if errors.Is(err, io.EOF) {
			if s.have == 0 {
				return 0, io.EOF
			}
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := min(s.have, len(dst)/s.nf)
	due := s.start.Add(time.Duration(float64(s.sent+int64(n)) / s.rate * float64(time.Second)))
	if d := time.Until(due); d > 0 {
		select {
		case <-s.ctx.Done():
			return 0, io.EOF
		case <-time.After(d):
		}
	}
	copy(dst, s.buf[:n*s.nf])
	copy(s.buf, s.buf[n*s.nf:s.have*s.nf])
	s.have -= n
	s.sent += int64(n)
	return n, nil
}
