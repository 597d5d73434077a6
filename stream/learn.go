package stream

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"dspk/probe"
	"dspk/recording"
)

// Learner sorts the recording rec (the learned span) with probe pr into
// the folder sortDir, as dspk sort would; the command supplies it, with
// the settings of the sort. warnings are what opening the source found.
type Learner func(ctx context.Context, rec recording.Recording, pr *probe.Probe, sortDir string, warnings []string) error

// Learning says how a stream learns its units from its own first minutes
// ([Learn]).
type Learning struct {
	// Span is the stream time sorted before matching starts.
	Span time.Duration
	// Input says how to read the source and find its probe: a file is
	// opened as dspk sort opens it (its .meta or settings.xml); a pipe or
	// socket takes Input's Channels and Rate, and its probe (or np1 for
	// 384/385 channels).
	Input recording.Input
	// Channels and Rate are the source's int16 channels per frame and
	// sample rate (Hz), as [Learning.Resolve] finds them.
	Channels int
	Rate     float64
	// Sort sorts the learned span.
	Sort Learner
	// Live says the frames arrive as they are recorded (a followed or
	// replayed file, a pipe or a socket): those that arrive while the
	// span is sorted are dropped. A file read as fast as it goes is not
	// live: matching goes on from the span's end.
	Live bool
	// Overwrite replaces the sort folder and its recording if they
	// exist.
	Overwrite bool
	// Log, if not nil, takes a progress line while the span is read and
	// a line when the sort starts and ends.
	Log io.Writer

	pr       *probe.Probe
	warnings []string
}

// Resolve finds the channels, rate and probe of source (a file, "-" or
// tcp://HOST:PORT) for [Learn].
func (l *Learning) Resolve(source string) error {
	if source != "-" && !strings.Contains(source, "://") {
		rec, pr, w, err := l.Input.Open(source)
		if err != nil {
			return err
		}
		l.Channels, l.Rate, l.pr, l.warnings = rec.Channels(), rec.SampleRate(), pr, w
		return rec.Close()
	}
	l.Channels, l.Rate = l.Input.Channels, l.Input.Rate
	if l.Channels < 1 || !(l.Rate > 0) {
		return fmt.Errorf("stream: -learn on %s needs the source's channels and rate (-channels, -rate)", source)
	}
	return nil
}

// sortRaw opens the learned recording raw as the source's and sorts it
// into sortDir.
func (l *Learning) sortRaw(ctx context.Context, raw, sortDir string) error {
	rec, err := recording.OpenFiles([]string{raw}, recording.OpenOptions{Channels: l.Channels, Rate: l.Rate})
	if err != nil {
		return err
	}
	defer rec.Close()
	pr := l.pr
	if pr == nil {
		var w []string
		if pr, w, err = l.Input.ResolveProbe(rec); err != nil {
			return err
		}
		l.warnings = append(l.warnings, w...)
	}
	return l.Sort(ctx, rec, pr, sortDir, l.warnings)
}

// Learned is what [Learn] did: the recording it kept and the samples the
// stream is past when matching starts.
type Learned struct {
	// Raw is the learned span's recording, kept beside the sort folder
	// (SORTDIR.bin): the sort's params.py names it, so that Phy opens the
	// learned units with their data.
	Raw string `json:"recording"`
	// Samples is the learned span; Skipped the samples that arrived
	// while the span was sorted, which no one matches (the stream goes
	// on live from the first sample after them).
	Samples int64 `json:"samples"`
	Skipped int64 `json:"skipped_samples"`
	// SortSeconds is how long the sort took.
	SortSeconds float64 `json:"sort_seconds"`

	rate    float64
	log     io.Writer
	stop    chan struct{} // closed: the drain stops after its read in progress
	skipped chan int64    // the drain's count, once it stopped
}

// LearnedRaw is the path of the recording [Learn] keeps for sortDir.
func LearnedRaw(sortDir string) string { return sortDir + ".bin" }

// Learn reads the first l.Span of src into the recording
// [LearnedRaw](sortDir), sorts it into sortDir with l.Sort and returns
// once the sort is done. From a live source (l.Live) the frames that
// arrive from then on until [Learned.Resume] are read and dropped
// (counted in Learned.Skipped), so that the source neither backs up nor
// delivers a stale backlog, and the stream goes on live from the next
// frame; Resume must be called once. It refuses an existing sortDir or recording unless
// l.Overwrite, before reading anything; a source that ends inside the
// span, a failed sort or ctx done leaves neither behind.
func Learn(ctx context.Context, src Source, sortDir string, l Learning) (*Learned, error) {
	if l.Channels < 1 || !(l.Rate > 0) {
		return nil, fmt.Errorf("stream: -learn needs the source's channels and rate (%d channels, %v Hz)", l.Channels, l.Rate)
	}
	want := int64(l.Span.Seconds() * l.Rate)
	if want < 1 {
		return nil, fmt.Errorf("stream: -learn %v is shorter than one sample", l.Span)
	}
	raw := LearnedRaw(sortDir)
	if !l.Overwrite {
		for _, p := range []string{sortDir, raw} {
			if _, err := os.Stat(p); err == nil {
				return nil, fmt.Errorf("stream: -learn: %s exists (use -overwrite to replace it)", p)
			}
		}
	}
	tmp := raw + ".part"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("stream: -learn: %w", err)
	}
	defer os.Remove(tmp)
	got, err := copyFrames(ctx, f, src, l, want)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("stream: -learn: %w", cerr)
	}
	if err == nil {
		err = ctx.Err() // a replayed or followed source ends at once when ctx is done
	}
	if err != nil {
		return nil, err
	}
	if got < want {
		return nil, fmt.Errorf("stream: -learn: %s ended at %.1f s, inside the %.1f s to learn from", src.Name(),
			float64(got)/l.Rate, float64(want)/l.Rate)
	}
	if err := os.Rename(tmp, raw); err != nil {
		return nil, fmt.Errorf("stream: -learn: %w", err)
	}
	if l.Log != nil {
		fmt.Fprintf(l.Log, "\rlearning: %.1f s read into %s; sorting it into %s (the stream's frames are dropped meanwhile)\n",
			float64(got)/l.Rate, raw, sortDir)
	}
	stop, skipped := make(chan struct{}), make(chan int64, 1)
	if l.Live {
		go func() { skipped <- drain(src, l.Channels, stop) }()
	} else {
		skipped <- 0
	}
	t0 := time.Now()
	err = l.sortRaw(ctx, raw, sortDir)
	if err == nil {
		err = ctx.Err()
	}
	out := &Learned{Raw: raw, Samples: got, SortSeconds: time.Since(t0).Seconds(), rate: l.Rate, log: l.Log, stop: stop, skipped: skipped}
	if err != nil {
		out.Abandon()
		os.Remove(raw)
		return nil, fmt.Errorf("stream: -learn: %w", err)
	}
	return out, nil
}

// Resume stops dropping the source's frames and returns the stream sample
// of the next frame the source delivers: [Run]'s Options.Start, so that a
// live stream drops frames until its matcher is ready, not only while the
// span is sorted.
func (l *Learned) Resume() int64 {
	close(l.stop)
	l.Skipped = <-l.skipped
	first := l.Samples + l.Skipped
	if l.log != nil {
		fmt.Fprintf(l.log, "learning: sorted in %.1f s; %.1f s of the stream went by unmatched; matching from %.3f s on\n",
			l.SortSeconds, float64(l.Skipped)/l.rate, float64(first)/l.rate)
	}
	return first
}

// Abandon stops dropping frames without waiting for the read in progress,
// for a stream that ends before [Learned.Resume]; the source must then be
// closed.
func (l *Learned) Abandon() { close(l.stop) } // the drain ends when the source is closed

// copyFrames writes the first want frames of src to w as little-endian
// int16 and returns how many it wrote (fewer if src ended).
func copyFrames(ctx context.Context, w io.Writer, src Source, l Learning, want int64) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	nf := l.Channels
	buf := make([]int16, max(1, int(l.Rate/1000))*nf)
	b := make([]byte, 2*len(buf))
	var got int64
	next := time.Now()
	for got < want {
		if err := ctx.Err(); err != nil {
			return got, err
		}
		room := int(min(int64(len(buf)/nf), want-got))
		n, err := src.Read(buf[:room*nf])
		for i, v := range buf[:n*nf] {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		}
		if _, werr := bw.Write(b[:2*n*nf]); werr != nil {
			return got, fmt.Errorf("stream: -learn: %w", werr)
		}
		got += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return got, err
		}
		if l.Log != nil && time.Now().After(next) {
			fmt.Fprintf(l.Log, "\rlearning: %.0f of %.0f s read ", float64(got)/l.Rate, float64(want)/l.Rate)
			next = next.Add(time.Second)
		}
	}
	if err := bw.Flush(); err != nil {
		return got, fmt.Errorf("stream: -learn: %w", err)
	}
	return got, nil
}

// drain reads and drops src's frames until stop is closed (it returns
// after the read in progress then) or src ends, and returns how many it
// read.
func drain(src Source, nf int, stop <-chan struct{}) int64 {
	buf := make([]int16, 4096*nf)
	var n int64
	for {
		select {
		case <-stop:
			return n
		default:
		}
		k, err := src.Read(buf)
		n += int64(k)
		if err != nil {
			<-stop
			return n
		}
	}
}
