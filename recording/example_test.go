package recording_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"dspk/recording"
)

// Open picks the reader from the path; the locust tetrode data carries
// its channel count and rate in an info.json next to it.
func ExampleOpen() {
	rec, err := recording.Open("testdata/locust/locust_trial_01.raw", recording.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer rec.Close()
	fmt.Println(rec.Format(), rec.Channels(), "channels at", rec.SampleRate(), "Hz,", rec.Samples(), "samples")

	first := make([]int16, 2*rec.Channels())
	if err := rec.ReadInt16(first, 0, 2); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(first), "values of the first two time points")
	// Output:
	// raw 4 channels at 15000 Hz, 431548 samples
	// 8 values of the first two time points
}

// A Loader hands out Kilosort4's padded windows in order, reading ahead.
func ExampleLoader() {
	// 2 channels, 25 samples: channel 0 counts up, channel 1 down.
	data := make([]int16, 2*25)
	for t := range 25 {
		data[2*t], data[2*t+1] = int16(t), int16(-t)
	}
	rec := recording.NewMemory("ramp", data, 2, 1000, nil)
	sched, err := recording.NewSchedule(0, rec.Samples(), 10, 3)
	if err != nil {
		log.Fatal(err)
	}
	l := recording.NewLoader(rec, sched, recording.LoaderOptions{InFlight: 2})
	defer l.Close()
	for {
		b, err := l.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		ch0 := make([]int16, sched.Len())
		for t := range ch0 {
			ch0[t] = b.Data[2*t]
		}
		fmt.Println(b.Window.Index, b.Window.OwnStart, b.Window.OwnEnd, ch0)
		l.Release(b)
	}
	// Output:
	// 0 0 10 [0 0 0 0 1 2 3 4 5 6 7 8 9 10 11 12]
	// 1 10 20 [7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22]
	// 2 20 25 [17 18 19 20 21 22 23 24 24 24 24 24 24 24 24 24]
}
