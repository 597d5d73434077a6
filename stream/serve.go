package stream

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
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
	// Lookahead is how long after a block the block waits for before it
	// is matched (0: the least, half the template plus a sample; [Options]).
	Lookahead time.Duration
	// Send is "" or tcp://HOST:PORT or udp://HOST:PORT: where each spike's
	// binary record goes ([Sender]).
	Send string
	// Stdout gets a line per spike; Stderr the late blocks, progress and
	// the closing line.
	Stdout, Stderr io.Writer
	// HoldMotion holds the sort's last motion shifts beyond its estimate
	// instead of tracking the motion from the stream ([Options]).
	HoldMotion bool
	// Learn, if its Span is positive, makes the stream sort its own first
	// Span into the sort folder before matching ([Learn]); its Overwrite
	// and Log are taken from Overwrite and Stderr.
	Learn Learning
}

// Serve matches source (a file, "-" for Stdin, or tcp://HOST:PORT)
// against the units of the sort folder sortDir on dev as the frames
// arrive, until the source ends or ctx is done; the spikes go out as they
// are known and, at the end, into the folder o.Out. The folder is taken
// (refused if it exists without o.Overwrite) before the stream starts and
// left out where the stream fails. With o.Learn.Span set, the units are
// first sorted from the source's own start into sortDir ([Learn]) and
// matching goes on after them.
func Serve(ctx context.Context, dev *compute.Device, sortDir, source string, o ServeOptions) error {
	var src Source
	var learned *Learned
	var opt Options
	if o.Learn.Span > 0 {
		if _, err := os.Stat(o.Out); err == nil && !o.Overwrite {
			return fmt.Errorf("stream: %s exists (use -overwrite to replace it)", o.Out)
		}
		l := &o.Learn
		l.Overwrite, l.Log = o.Overwrite, o.Stderr
		if err := l.Resolve(source); err != nil {
			return err
		}
		l.Live = o.Realtime || o.Follow || source == "-" || strings.Contains(source, "://")
		var err error
		if src, err = OpenSource(ctx, source, l.Channels, SourceOptions{Follow: o.Follow, Idle: o.Idle, Realtime: o.Realtime, Rate: l.Rate}); err != nil {
			return err
		}
		defer src.Close()
		if learned, err = Learn(ctx, src, sortDir, *l); err != nil {
			return err
		}
		resumed := false
		defer func() {
			if !resumed {
				learned.Abandon()
			}
		}()
		opt.Start = func() int64 { resumed = true; return learned.Resume() }
	}
	m, err := Load(sortDir)
	if err != nil {
		return err
	}
	if learned != nil && (m.FileChannels != o.Learn.Channels || m.SampleRate != o.Learn.Rate) {
		return fmt.Errorf("%s: the learned sort has %d channels at %v Hz; the stream %d at %v Hz",
			sortDir, m.FileChannels, m.SampleRate, o.Learn.Channels, o.Learn.Rate)
	}
	folder, err := CreateFolder(o.Out, m, o.Overwrite)
	if err != nil {
		return err
	}
	defer folder.Abort()
	if src == nil {
		if src, err = OpenSource(ctx, source, m.FileChannels, SourceOptions{Follow: o.Follow, Idle: o.Idle, Realtime: o.Realtime, Rate: m.SampleRate}); err != nil {
			return err
		}
		defer src.Close()
	}
	snd, err := DialIf(ctx, o.Send, m.SampleRate)
	if err != nil {
		return err
	}
	defer snd.Close()
	opt.Device, opt.MinBlock, opt.Deadline, opt.Log = dev, max(1, int(o.Block.Seconds()*m.SampleRate)), o.Deadline, o.Stderr
	opt.Lookahead = int(math.Ceil(o.Lookahead.Seconds() * m.SampleRate))
	opt.HoldMotion = o.HoldMotion
	st, err := Run(ctx, m, src, opt, Lines(o.Stdout, m.SampleRate, folder, o.Quiet, snd))
	if err != nil {
		return err
	}
	st.Learned = learned
	if err := folder.Write(source, st); err != nil {
		return err
	}
	fmt.Fprintf(o.Stderr, "\n%s%s\n", st.Summary(src.Name(), o.Out), snd.Summary())
	return nil
}
