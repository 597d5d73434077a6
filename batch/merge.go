package batch

import (
	"context"
	"fmt"
	"time"

	"dspk/detect"
	"dspk/phy"
	"dspk/pipeline"
	"dspk/recording"
)

// mergeChunk is the number of spikes a merge replays at a time.
const mergeChunk = 1 << 15

// mergeShards writes row r's folder from its shards: the global results
// give the run's description (Begin), every shard's spikes are replayed
// in file order, a chunk at a time, through the same writer a single run
// uses (Window), and End writes the cluster files from them. The result
// files are thus those of one run over the whole recording; dspk.json's
// summary holds the summed spike and work counts, the merge's own wall
// time added to the shards' summed wall and pass times.
func mergeShards(ctx context.Context, p *pipeline.Pipeline, g *pipeline.Global, r *Row, opt phy.Options) error {
	start := time.Now()
	info, err := p.Info(g, fmt.Sprintf("merge of %d shards", len(r.Parts)))
	if err != nil {
		return err
	}
	w, err := phy.Create(r.Out, opt)
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Begin(info); err != nil {
		return err
	}
	sched := p.Schedule()
	sum := &pipeline.Summary{Windows: sched.Windows, Samples: sched.End - sched.Start, Clips: g.Clips,
		Centres: info.Grid.F(), PassSeconds: map[string]float64{}}
	s := &detect.Spikes{NC: info.Grid.NC, P: g.Universal.P}
	var shardWall float64
	for _, part := range r.Parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		wall, err := replayShard(w, part, s, sum)
		if err != nil {
			return err
		}
		shardWall += wall
	}
	// The wall time is the shards' summed and the merge's own (the
	// global step's is not known here).
	sum.Wall = time.Since(start) + time.Duration(shardWall*float64(time.Second))
	sum.PassSeconds["merge"] = time.Since(start).Seconds()
	sum.WallSeconds = sum.Wall.Seconds()
	sum.Seconds = float64(sum.Samples) / info.Recording.SampleRate()
	sum.TimesRealTime = sum.Seconds / sum.WallSeconds
	sum.Warnings = g.Warnings
	return w.End(sum)
}

// replayShard replays the spikes of the shard folder dir through w, a
// chunk at a time in s (of the shard's channels and features per spike),
// and adds its counts and pass times to sum; it returns the shard's wall
// time in seconds.
func replayShard(w *phy.Writer, dir string, s *detect.Spikes, sum *pipeline.Summary) (float64, error) {
	ss, err := phy.ReadShardSummary(dir)
	if err != nil {
		return 0, err
	}
	sum.Work.Add(ss.Work)
	for k, v := range ss.Passes {
		sum.PassSeconds[k] += v
	}
	rd, err := phy.OpenShard(dir, s.NC, s.P, ss.Spikes)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	for left := ss.Spikes; left > 0; {
		m := min(left, mergeChunk)
		if err := rd.Next(s, m); err != nil {
			return 0, err
		}
		if err := w.Window(recording.Window{}, s); err != nil {
			return 0, err
		}
		sum.Spikes += m
		left -= m
	}
	return ss.Wall, nil
}
