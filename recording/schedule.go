package recording

import "fmt"

// Kilosort4's window defaults (kilosort4.md §3, §13).
const (
	// DefaultNT is the number of samples each window owns (batch_size).
	DefaultNT = 60000
	// DefaultPad is the context added on each side of a window (nt).
	DefaultPad = 61
)

// Schedule splits samples [Start, End) of a recording into Kilosort4's
// windows: window i owns samples Start+i·NT … Start+(i+1)·NT (the last
// one fewer) and sees Pad more samples of context on each side. Context
// beyond [Start, End) repeats the edge sample. A last window that would
// own fewer than Pad samples is dropped, so End may be less than the
// range asked for.
type Schedule struct {
	NT, Pad    int
	Start, End int64
	Windows    int
}

// NewSchedule returns the schedule of samples [start, end) with windows
// owning nt samples and pad samples of context. It returns an error if
// the range holds no full window's worth of context (fewer than pad
// samples) or the sizes are not positive.
func NewSchedule(start, end int64, nt, pad int) (Schedule, error) {
	if nt <= 0 || pad <= 0 {
		return Schedule{}, fmt.Errorf("recording: window of %d samples with %d of context: both must be positive", nt, pad)
	}
	if pad > nt {
		return Schedule{}, fmt.Errorf("recording: context %d longer than the window %d", pad, nt)
	}
	if start < 0 || end < start {
		return Schedule{}, fmt.Errorf("recording: bad sample range [%d, %d)", start, end)
	}
	n := end - start
	w := (n + int64(nt) - 1) / int64(nt)
	if w > 0 {
		last := n - (w-1)*int64(nt)
		if last < int64(pad) {
			w--
			end = start + w*int64(nt)
		}
	}
	if w == 0 {
		return Schedule{}, fmt.Errorf("recording: %d samples is shorter than the %d-sample minimum of one window", n, pad)
	}
	return Schedule{NT: nt, Pad: pad, Start: start, End: end, Windows: int(w)}, nil
}

// Len is the number of columns of a padded window, NT + 2·Pad.
func (s Schedule) Len() int { return s.NT + 2*s.Pad }

// Window describes window i of a schedule.
type Window struct {
	// Index is the window's number in the schedule.
	Index int
	// OwnStart and OwnEnd are the file samples the window owns; column
	// Pad+j of the padded window is file sample OwnStart+j.
	OwnStart, OwnEnd int64
	// ReadStart and ReadEnd are the file samples actually read.
	ReadStart, ReadEnd int64
	// Offset is the column of the padded window that ReadStart lands in;
	// columns before it repeat ReadStart and columns from
	// Offset+(ReadEnd-ReadStart) on repeat ReadEnd-1.
	Offset int
}

// Owned is the number of samples the window owns.
func (w Window) Owned() int { return int(w.OwnEnd - w.OwnStart) }

// Window returns window i. It panics if i is out of range.
func (s Schedule) Window(i int) Window {
	if i < 0 || i >= s.Windows {
		panic(fmt.Sprintf("recording: window %d of %d", i, s.Windows))
	}
	own0 := s.Start + int64(i)*int64(s.NT)
	own1 := min(own0+int64(s.NT), s.End)
	r0 := max(own0-int64(s.Pad), s.Start)
	r1 := min(own1+int64(s.Pad), s.End)
	return Window{Index: i, OwnStart: own0, OwnEnd: own1, ReadStart: r0, ReadEnd: r1,
		Offset: int(r0 - (own0 - int64(s.Pad)))}
}

// Batch is one padded window of int16 samples, interleaved as stored:
// Data[t*channels+c] for t in [0, Schedule.Len()), with context beyond
// the schedule's range filled by repeating the edge sample.
type Batch struct {
	Window Window
	Data   []int16
}
