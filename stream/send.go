package stream

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"time"
)

// The binary spike record that [Sender] writes (docs/formats.md, "The
// stream's spike records"): little-endian, RecordSize bytes per spike.
//
//	offset  type     field
//	0       int64    sample: the trough's sample, 0 = the stream's first frame
//	8       int32    unit: the sort's unit (spike_clusters' numbering)
//	12      int32    channel: the template's best channel (an index of channel_map.npy)
//	16      float32  amplitude: the template's projection (Kilosort4's q)
//	20      uint32   latency: µs from the arrival of the trough's sample to the send
//
// Over TCP the connection starts with a HeaderSize-byte header: the
// magic "DSPK", the format's version (uint16, 1), RecordSize (uint16)
// and the sample rate (float64, Hz), then records back to back. Over UDP
// each datagram is one record, with no header.
const (
	RecordSize    = 24
	HeaderSize    = 16
	RecordVersion = 1
)

// AppendRecord appends sp's record to dst.
func AppendRecord(dst []byte, sp Spike) []byte {
	us := sp.Latency.Microseconds()
	dst = binary.LittleEndian.AppendUint64(dst, uint64(sp.Sample))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(sp.Unit))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(sp.Channel))
	dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(sp.Amplitude))
	return binary.LittleEndian.AppendUint32(dst, uint32(min(max(us, 0), math.MaxUint32)))
}

// ParseRecord reads one record (the first RecordSize bytes of b) back
// into a Spike (Template is not sent: -1).
func ParseRecord(b []byte) (Spike, error) {
	if len(b) < RecordSize {
		return Spike{}, fmt.Errorf("stream: a spike record is %d bytes, got %d", RecordSize, len(b))
	}
	le := binary.LittleEndian
	return Spike{Sample: int64(le.Uint64(b)), Unit: int32(le.Uint32(b[8:])), Template: -1, Channel: int32(le.Uint32(b[12:])),
		Amplitude: math.Float32frombits(le.Uint32(b[16:])), Latency: time.Duration(le.Uint32(b[20:])) * time.Microsecond}, nil
}

// AppendHeader appends the TCP header for a stream at rate Hz.
func AppendHeader(dst []byte, rate float64) []byte {
	dst = append(dst, "DSPK"...)
	dst = binary.LittleEndian.AppendUint16(dst, RecordVersion)
	dst = binary.LittleEndian.AppendUint16(dst, RecordSize)
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(rate))
}

// ParseHeader checks a TCP header and returns its sample rate.
func ParseHeader(b []byte) (float64, error) {
	le := binary.LittleEndian
	switch {
	case len(b) < HeaderSize || string(b[:4]) != "DSPK":
		return 0, errors.New("stream: not a dspk spike stream (no DSPK header)")
	case le.Uint16(b[4:]) != RecordVersion || le.Uint16(b[6:]) != RecordSize:
		return 0, fmt.Errorf("stream: spike records of version %d, %d bytes; this reader knows version %d, %d bytes",
			le.Uint16(b[4:]), le.Uint16(b[6:]), RecordVersion, RecordSize)
	}
	return math.Float64frombits(le.Uint64(b[8:])), nil
}

// Sender sends every spike as a binary record to a peer: tcp://HOST:PORT
// (a program listening there; TCP without Nagle's delay, Go's default)
// or udp://HOST:PORT (one datagram per spike). A write that fails stops
// the sending for good (the stream itself goes on, the folder keeps
// every spike): [Sender.Err] says why, [Sender.Sent] how many went out.
type Sender struct {
	addr string
	conn net.Conn
	buf  []byte
	sent int64
	err  error
}

// Dial connects to addr (tcp:// or udp://) and, over TCP, sends the
// header for a stream at rate Hz.
func Dial(ctx context.Context, addr string, rate float64) (*Sender, error) {
	network, host, ok := strings.Cut(addr, "://")
	if !ok || (network != "tcp" && network != "udp") || host == "" {
		return nil, fmt.Errorf("stream: send address %q: want tcp://HOST:PORT or udp://HOST:PORT", addr)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err != nil {
		return nil, fmt.Errorf("stream: send to %s: %w", addr, err)
	}
	s := &Sender{addr: addr, conn: c, buf: make([]byte, 0, RecordSize)}
	if network == "tcp" {
		if _, err := c.Write(AppendHeader(nil, rate)); err != nil {
			c.Close()
			return nil, fmt.Errorf("stream: send to %s: %w", addr, err)
		}
	}
	return s, nil
}

// DialIf is [Dial] where addr is set; for "" it returns a nil Sender,
// whose methods do nothing.
func DialIf(ctx context.Context, addr string, rate float64) (*Sender, error) {
	if addr == "" {
		return nil, nil
	}
	return Dial(ctx, addr, rate)
}

// Summary is a sentence for the stream's closing line: how many records
// went to the peer, and why sending stopped if it did ("" for a nil
// Sender).
func (s *Sender) Summary() string {
	switch {
	case s == nil:
		return ""
	case s.err != nil:
		return fmt.Sprintf(" Sending failed: %v.", s.err)
	}
	return fmt.Sprintf(" Sent %d spike records to %s.", s.sent, s.addr)
}

// Send writes sp's record; after a failed write it does nothing.
func (s *Sender) Send(sp Spike) {
	if s.err != nil {
		return
	}
	s.buf = AppendRecord(s.buf[:0], sp)
	if _, err := s.conn.Write(s.buf); err != nil {
		s.err = fmt.Errorf("stream: send to %s stopped after %d spikes: %w", s.addr, s.sent, err)
		return
	}
	s.sent++
}

// Sent returns the number of records written.
func (s *Sender) Sent() int64 { return s.sent }

// Err returns why sending stopped, or nil.
func (s *Sender) Err() error { return s.err }

// Close closes the connection (nothing for a nil Sender).
func (s *Sender) Close() error {
	if s == nil {
		return nil
	}
	return s.conn.Close()
}

// ReadRecords reads a TCP spike stream from r (header, then records)
// until it ends, calling f for each spike: for receivers in Go and for
// tests. It returns the header's sample rate.
func ReadRecords(r io.Reader, f func(Spike)) (float64, error) {
	h := make([]byte, HeaderSize)
	if _, err := io.ReadFull(r, h); err != nil {
		return 0, fmt.Errorf("stream: spike stream header: %w", err)
	}
	rate, err := ParseHeader(h)
	if err != nil {
		return 0, err
	}
	b := make([]byte, RecordSize)
	for {
		switch _, err := io.ReadFull(r, b); {
		case err == io.EOF:
			return rate, nil
		case err != nil:
			return rate, fmt.Errorf("stream: spike record: %w", err)
		}
		sp, _ := ParseRecord(b)
		f(sp)
	}
}
