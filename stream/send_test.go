package stream

import (
	"context"
	"math"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"
)

func randomSpikes(rng *rand.Rand, n int) []Spike {
	sp := make([]Spike, n)
	for i := range sp {
		sp[i] = Spike{Sample: rng.Int64N(1 << 40), Unit: rng.Int32N(2000), Template: -1, Channel: rng.Int32N(1536),
			Amplitude: float32(rng.NormFloat64() * 50), Latency: time.Duration(rng.Int64N(20_000)) * time.Microsecond}
	}
	return sp
}

// TestRecordRoundTrip checks the record's layout field by field against
// the documented offsets, and that latencies out of range are clipped.
func TestRecordRoundTrip(t *testing.T) {
	sp := Spike{Sample: 0x0102030405060708, Unit: 7, Channel: 383, Amplitude: -12.5, Latency: 2500 * time.Microsecond, Template: -1}
	b := AppendRecord(nil, sp)
	want := []byte{8, 7, 6, 5, 4, 3, 2, 1, 7, 0, 0, 0, 0x7f, 1, 0, 0, 0, 0, 0x48, 0xc1, 0xc4, 9, 0, 0}
	if string(b) != string(want) {
		t.Fatalf("record % x, want % x", b, want)
	}
	if got, err := ParseRecord(b); err != nil || got != sp {
		t.Fatalf("parsed %+v (%v), want %+v", got, err, sp)
	}
	for _, c := range []struct{ in, out time.Duration }{{-time.Second, 0}, {100 * time.Hour, math.MaxUint32 * time.Microsecond}} {
		got, _ := ParseRecord(AppendRecord(nil, Spike{Latency: c.in}))
		if got.Latency != c.out {
			t.Errorf("latency %v sent as %v, want %v", c.in, got.Latency, c.out)
		}
	}
	if _, err := ParseRecord(b[:23]); err == nil {
		t.Error("a short record parsed")
	}
	if r, err := ParseHeader(AppendHeader(nil, 30000)); err != nil || r != 30000 {
		t.Errorf("header: %g, %v", r, err)
	}
	bad := AppendHeader(nil, 30000)
	bad[4] = 9
	if _, err := ParseHeader(bad); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Errorf("a header of another version: %v", err)
	}
	if _, err := ParseHeader([]byte("HTTP/1.1 200 OK\r\n")); err == nil {
		t.Error("a header without the magic parsed")
	}
}

// TestSenderTCP sends spikes to a local listener and reads them back in
// order with the header's rate.
func TestSenderTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no local TCP: %v", err)
	}
	defer ln.Close()
	type result struct {
		rate float64
		got  []Spike
		err  error
	}
	done := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer c.Close()
		var r result
		r.rate, r.err = ReadRecords(c, func(sp Spike) { r.got = append(r.got, sp) })
		done <- r
	}()
	s, err := Dial(context.Background(), "tcp://"+ln.Addr().String(), 30000)
	if err != nil {
		t.Fatal(err)
	}
	want := randomSpikes(rand.New(rand.NewPCG(1, 2)), 1001)
	for _, sp := range want {
		s.Send(sp)
	}
	if s.Err() != nil || s.Sent() != int64(len(want)) {
		t.Fatalf("sent %d, %v", s.Sent(), s.Err())
	}
	s.Close()
	r := <-done
	if r.err != nil || r.rate != 30000 || len(r.got) != len(want) {
		t.Fatalf("read %d spikes at %g Hz: %v", len(r.got), r.rate, r.err)
	}
	for i := range want {
		if r.got[i] != want[i] {
			t.Fatalf("spike %d: %+v, want %+v", i, r.got[i], want[i])
		}
	}
}

// TestSenderUDP sends spikes as datagrams of one record each.
func TestSenderUDP(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no local UDP: %v", err)
	}
	defer pc.Close()
	s, err := Dial(context.Background(), "udp://"+pc.LocalAddr().String(), 30000)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := randomSpikes(rand.New(rand.NewPCG(3, 4)), 20)
	buf := make([]byte, 1500)
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i, sp := range want {
		s.Send(sp)
		n, _, err := pc.ReadFrom(buf)
		if err != nil || n != RecordSize {
			t.Fatalf("datagram %d: %d bytes, %v", i, n, err)
		}
		if got, _ := ParseRecord(buf[:n]); got != sp {
			t.Fatalf("datagram %d: %+v, want %+v", i, got, sp)
		}
	}
}

// TestSenderPeerGone: when the peer goes away, sending stops with an
// error that names the address and the count, and Send goes on doing
// nothing; bad addresses are refused.
func TestSenderPeerGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no local TCP: %v", err)
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
		ln.Close()
	}()
	addr := "tcp://" + ln.Addr().String()
	s, err := Dial(context.Background(), addr, 30000)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(5 * time.Second)
	for s.Err() == nil && time.Now().Before(deadline) {
		s.Send(Spike{Sample: 1})
		time.Sleep(time.Millisecond)
	}
	if s.Err() == nil || !strings.Contains(s.Err().Error(), addr) {
		t.Fatalf("no error after the peer left: %v", s.Err())
	}
	n := s.Sent()
	s.Send(Spike{})
	if s.Sent() != n {
		t.Error("Send went on after an error")
	}
	for _, bad := range []string{"127.0.0.1:9", "http://x", "tcp://", "udp:/x"} {
		if _, err := Dial(context.Background(), bad, 30000); err == nil || !strings.Contains(err.Error(), "want tcp://") {
			t.Errorf("address %q: %v", bad, err)
		}
	}
}
