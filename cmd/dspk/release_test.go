package main

import (
	"errors"
	"testing"
	"time"

	"dspk/detect"
	"dspk/pipeline"
	"dspk/recording"
)

// endSink is a sink whose End waits until release has started (or a
// second has passed) and returns err.
type endSink struct {
	started chan struct{}
	err     error
	waited  bool
}

func (s *endSink) Begin(*pipeline.RunInfo) error                 { return nil }
func (s *endSink) Window(recording.Window, *detect.Spikes) error { return nil }
func (s *endSink) End(*pipeline.Summary) error {
	select {
	case <-s.started:
		s.waited = true
	case <-time.After(time.Second):
	}
	return s.err
}

// TestReleasingSink checks that the device is released while the
// folder's end is written (End sees release running), that End returns
// only once release has finished, and that End's error comes back.
func TestReleasingSink(t *testing.T) {
	for _, want := range []error{nil, errors.New("disk full")} {
		inner := &endSink{started: make(chan struct{}), err: want}
		var released bool
		s := &releasingSink{Sink: inner, release: func() {
			close(inner.started)
			time.Sleep(20 * time.Millisecond)
			released = true
		}}
		err := s.End(&pipeline.Summary{})
		if err != want {
			t.Errorf("End returned %v, want %v", err, want)
		}
		if !inner.waited {
			t.Error("the folder's end did not run beside the release")
		}
		if !released || s.took < 20*time.Millisecond {
			t.Errorf("End returned before the release finished (released %v, took %v)", released, s.took)
		}
	}
}
