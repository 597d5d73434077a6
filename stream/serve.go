package stream

import (
	"context"
	"fmt"
	"io"
	"time"

	"dspk/compute"
)

// ServeOptions are the settings of [Serve], the command dspk stream.
type ServeOptions struct {
	// Out is the folder written at the end (required).
	Out string
	// Overwrite replaces a folder an earlier stream wrote.
	Overwrite bool
	// Quiet prints no line per spike on Stdout.
	Quiet bool
	// Source's options: Follow a growing file until it has not grown for
	// Idle; Realtime paces the frames at the recording's rate.
	Follow, Realtime bool
	Idle             time.Duration
	// Block is the least new recording matched at once; Deadline the
	// latency past which a block is reported late.
	Block, Deadline time.Duration
	// Send is "" or tcp://HOST:PORT or udp://HOST:PORT: where each spike's
	// binary record goes ([Sender]).
	Send string
	// Stdout gets a line per spike; Stderr the late blocks, progress and
	// the closing line.
	Stdout, Stderr io.Writer
}

// Serve matches source (a file, "-" for Stdin, or tcp://HOST:PORT)
// against the units of the sort folder sortDir on dev as the frames
// arrive, until the source ends or ctx is done; the spikes go out as they
// are known and, at the end, into the folder o.Out. The folder is taken
// (refused if it exists without o.Overwrite) before the stream starts and
// left out where the stream fails.
func Serve(ctx context.Context, dev *compute.Device, sortDir, source string, o ServeOptions) error {
	m, err := Load(sortDir)
	if err != nil {
		return err
	}
	folder, err := CreateFolder(o.Out, m, o.Overwrite)
	if err != nil {
		return err
	}
	defer folder.Abort()
	src, err := OpenSource(ctx, source, m.FileChannels, SourceOptions{Follow: o.Follow, Idle: o.Idle, Realtime: o.Realtime, Rate: m.SampleRate})
	if err != nil {
		return err
	}
	defer src.Close()
	snd, err := DialIf(ctx, o.Send, m.SampleRate)
	if err != nil {
		return err
	}
	defer snd.Close()
	opt := Options{Device: dev, MinBlock: max(1, int(o.Block.Seconds()*m.SampleRate)), Deadline: o.Deadline, Log: o.Stderr}
	st, err := Run(ctx, m, src, opt, Lines(o.Stdout, m.SampleRate, folder, o.Quiet, snd))
	if err != nil {
		return err
	}
	if err := folder.Write(source, st); err != nil {
		return err
	}
	fmt.Fprintf(o.Stderr, "\n%s%s\n", st.Summary(src.Name(), o.Out), snd.Summary())
	return nil
}
