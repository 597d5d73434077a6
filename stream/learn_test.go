package stream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dspk/probe"
	"dspk/recording"
)

// pacedSource delivers frames (value 100·t + c) one at a time and counts
// them, so that a test knows how far a live source has gone; from frame
// paceFrom on, one every 100 µs, as a live source does.
type pacedSource struct {
	nf, n    int
	paceFrom int
	sent     atomic.Int64
}

func (s *pacedSource) Name() string { return "paced" }
func (s *pacedSource) Close() error { return nil }
func (s *pacedSource) Read(dst []int16) (int, error) {
	t := int(s.sent.Load())
	if t >= s.n {
		return 0, io.EOF
	}
	if s.paceFrom > 0 && t >= s.paceFrom {
		time.Sleep(100 * time.Microsecond)
	}
	for c := range s.nf {
		dst[c] = int16(100*t + c)
	}
	s.sent.Add(1)
	return 1, nil
}

// TestLearn learns from a source's first frames: the recording holds
// exactly them, the sort is given it, and a live source's frames that
// arrive while it sorts are dropped and counted, so that the next frame
// read is the one Resume names; a file read as fast as it goes goes on
// from the span's end. Existing folders, a short source and a failed sort
// are refused, and leave no recording behind.
func TestLearn(t *testing.T) {
	const nf, rate = 3, 1000.0
	dir := t.TempDir()
	for _, live := range []bool{false, true} {
		src := &pacedSource{nf: nf, n: 100000, paceFrom: 2000}
		sortDir := filepath.Join(dir, "learned")
		if live {
			sortDir += "-live"
		}
		var gotRaw []byte
		l := Learning{Span: 2e9, Channels: nf, Rate: rate, Live: live, pr: &probe.Probe{},
			Sort: func(ctx context.Context, rec recording.Recording, _ *probe.Probe, out string, _ []string) error {
				b, err := os.ReadFile(recording.DatPath(rec))
				if rec.Channels() != nf || rec.Samples() != 2000 {
					t.Errorf("the learned recording: %d channels, %d samples", rec.Channels(), rec.Samples())
				}
				gotRaw = b
				if live { // let the drain read some frames first
					for src.sent.Load() < 2000+50 {
						time.Sleep(time.Millisecond)
					}
				}
				return errors.Join(err, os.Mkdir(out, 0o777))
			}}
		ld, err := Learn(context.Background(), src, sortDir, l)
		if err != nil {
			t.Fatalf("live %v: %v", live, err)
		}
		if !bytes.Equal(gotRaw, frames(2000, nf)) || ld.Raw != LearnedRaw(sortDir) || ld.Samples != 2000 {
			t.Errorf("live %v: the sort got %d bytes (want the first 2000 frames, %d), raw %s, %d samples", live, len(gotRaw), 2000*nf*2, ld.Raw, ld.Samples)
		}
		first := ld.Resume()
		buf := make([]int16, nf)
		if n, err := src.Read(buf); n != 1 || err != nil || int(buf[0]) != int(int16(100*first)) {
			t.Errorf("live %v: after Resume (first %d, skipped %d) the source gave %v, %v: %v", live, first, ld.Skipped, n, err, buf)
		}
		if live && ld.Skipped < 50 || !live && ld.Skipped != 0 {
			t.Errorf("live %v: %d frames skipped", live, ld.Skipped)
		}
		if _, err := os.Stat(ld.Raw); err != nil {
			t.Error(err)
		}
	}
	// An existing sort folder is refused before anything is read.
	src := &pacedSource{nf: nf, n: 100000}
	ok := Learning{Span: 2e9, Channels: nf, Rate: rate, pr: &probe.Probe{},
		Sort: func(context.Context, recording.Recording, *probe.Probe, string, []string) error { return nil }}
	if _, err := Learn(context.Background(), src, filepath.Join(dir, "learned"), ok); err == nil || !strings.Contains(err.Error(), "exists") || src.sent.Load() != 0 {
		t.Errorf("existing folder: %v after %d frames", err, src.sent.Load())
	}
	// A source that ends inside the span.
	short := filepath.Join(dir, "short")
	if _, err := Learn(context.Background(), &pacedSource{nf: nf, n: 1500}, short, ok); err == nil || !strings.Contains(err.Error(), "ended at 1.5 s") {
		t.Errorf("short source: %v", err)
	}
	// A failed sort.
	bad := ok
	bad.Sort = func(context.Context, recording.Recording, *probe.Probe, string, []string) error {
		return errors.New("no spikes")
	}
	failed := filepath.Join(dir, "failed")
	if _, err := Learn(context.Background(), &pacedSource{nf: nf, n: 100000}, failed, bad); err == nil || !strings.Contains(err.Error(), "no spikes") {
		t.Errorf("failed sort: %v", err)
	}
	for _, p := range []string{short, failed} {
		if left, _ := filepath.Glob(p + "*"); len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
	}
}
