package curate

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"dspk/internal/par"
)

// PCFeatures returns Phy's PC features of the spikes (pc_features.npy,
// [n, P, NC] float32) and each cluster's feature channels
// (pc_feature_ind.npy, [N, NC] uint32), as Kilosort4's make_pc_features
// builds them (kilosort4-sort.md §8). For each cluster k in ascending
// order: take the learned templates among its spikes and every spike
// detected by one of them (in any cluster), place their features on the
// sorted union of those templates' channels, average, and keep the NC
// channels of largest mean-feature norm (descending; ties by lower
// channel) as row k of the index. Those spikes' features are then
// rewritten on the chosen channels (zero where a spike's template has no
// feature on a channel).
//
// With kilosortOverwrite, every spike of the templates is rewritten, so a
// template shared by several clusters carries the channels of the last
// such cluster, which can disagree with its own cluster's row (Kilosort4's
// behaviour). Without it only cluster k's own spikes are rewritten with
// row k, so every spike's features sit on its cluster's channels. A
// cluster without spikes gets channels 0…NC−1. Clusters are
// 0…nClusters−1; PCFeatures panics on a label outside that range. The
// clusters are shared among GOMAXPROCS goroutines; the result does not
// depend on their number.
func PCFeatures(s *Spikes, ch *Channels, nClusters int, kilosortOverwrite bool) (feat []float32, ind []uint32) {
	feat, ind, _ = pcFeatures(context.Background(), s, ch, nClusters, kilosortOverwrite)
	return feat, ind
}

// pcFeatures is [PCFeatures], stopping with the context's cause once ctx
// is done (between clusters).
func pcFeatures(ctx context.Context, s *Spikes, ch *Channels, nClusters int, kilosortOverwrite bool) (feat []float32, ind []uint32, err error) {
	s.check()
	NC, P := s.NC, s.P
	m := NC * P
	byTemplate := map[int32][]int{}
	byCluster := make([][]int, nClusters)
	for i, u := range s.Template {
		if int(u) < 0 || int(u) >= len(ch.Chans) || len(ch.Chans[u]) != NC {
			panic(fmt.Sprintf("curate: spike %d of template %d: no %d channels for it", i, u, NC))
		}
		c := s.Cluster[i]
		if c < 0 || int(c) >= nClusters {
			panic(fmt.Sprintf("curate: spike %d in cluster %d of %d", i, c, nClusters))
		}
		byTemplate[u] = append(byTemplate[u], i)
		byCluster[c] = append(byCluster[c], i)
	}
	nch := 0
	for _, row := range ch.Chans {
		for _, c := range row {
			nch = max(nch, int(c)+1)
		}
	}
	feat = make([]float32, s.Len()*m)
	ind = make([]uint32, nClusters*NC)
	// The rows are independent: clusters go to workers, each with its own
	// channel map. The rewrites are too, but with kilosortOverwrite a
	// template's spikes take the last cluster's row, so they follow in
	// cluster order there.
	var spikesOf [][]int // with kilosortOverwrite: the spikes of each cluster's templates
	if kilosortOverwrite {
		spikesOf = make([][]int, nClusters)
	}
	newSlot := func() []int { // channel → position; −1 elsewhere
		slot := make([]int, nch)
		for c := range slot {
			slot[c] = -1
		}
		return slot
	}
	err = parallelEach(ctx, nClusters, func() func(k int) {
		slot := newSlot()
		return func(k int) {
			sp := pcRow(s, ch, byTemplate, byCluster[k], ind[k*NC:(k+1)*NC], slot)
			if spikesOf != nil {
				spikesOf[k] = sp
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	write := func(k int, slot []int) {
		row := ind[k*NC : (k+1)*NC]
		if len(byCluster[k]) == 0 {
			return
		}
		for j, c := range row {
			slot[c] = j
		}
		targets := byCluster[k]
		if kilosortOverwrite {
			targets = spikesOf[k]
		}
		for _, i := range targets {
			dst := feat[i*m : (i+1)*m]
			clear(dst)
			for r, c := range ch.Chans[s.Template[i]] {
				if j := slot[c]; j >= 0 {
					for p := range P {
						dst[p*NC+j] = s.Features[i*m+r*P+p]
					}
				}
			}
		}
		for _, c := range row {
			slot[c] = -1
		}
	}
	if kilosortOverwrite {
		slot := newSlot()
		for k := range nClusters {
			if ctx.Err() != nil {
				return nil, nil, context.Cause(ctx)
			}
			write(k, slot)
		}
	} else if err := parallelEach(ctx, nClusters, func() func(k int) {
		slot := newSlot()
		return func(k int) { write(k, slot) }
	}); err != nil {
		return nil, nil, err
	}
	return feat, ind, nil
}

// pcRow writes into row the NC feature channels of a cluster whose spikes
// are own (see [PCFeatures]): the union of its templates' channels ranked
// by the norm of the mean feature of every spike of those templates, and
// returns those spikes. slot is a channel map of −1s, left as it was. A
// cluster without spikes gets channels 0…NC−1.
func pcRow(s *Spikes, ch *Channels, byTemplate map[int32][]int, own []int, row []uint32, slot []int) []int {
	NC, P := s.NC, s.P
	m := NC * P
	if len(own) == 0 {
		for j := range row {
			row[j] = uint32(j)
		}
		return nil
	}
	var tmpl []int32
	for _, i := range own {
		tmpl = append(tmpl, s.Template[i])
	}
	slices.Sort(tmpl)
	tmpl = slices.Compact(tmpl)
	var union []int32
	var spikes []int
	for _, u := range tmpl {
		union = append(union, ch.Chans[u]...)
		spikes = append(spikes, byTemplate[u]...)
	}
	slices.Sort(union)
	union = slices.Compact(union)
	for j, c := range union {
		slot[c] = j
	}
	mean := make([]float64, len(union)*P)
	for _, i := range spikes {
		for r, c := range ch.Chans[s.Template[i]] {
			j := slot[c]
			for p := range P {
				mean[j*P+p] += float64(s.Features[i*m+r*P+p])
			}
		}
	}
	for _, c := range union {
		slot[c] = -1
	}
	norm := make([]float64, len(union))
	for j := range union {
		var ss float64
		for _, v := range mean[j*P : (j+1)*P] {
			v /= float64(len(spikes))
			ss += v * v
		}
		norm[j] = ss
	}
	order := make([]int, len(union))
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case norm[a] > norm[b]:
			return -1
		case norm[a] < norm[b]:
			return 1
		}
		return 0
	})
	for j := range row {
		row[j] = uint32(union[order[min(j, len(order)-1)]])
	}
	return spikes
}

// parallelEach is [par.Each] of the items 0…n−1 on GOMAXPROCS workers
// (at most n) with a context and per-worker scratch: worker is called
// once per worker and returns the function that does one item with that worker's
// scratch. It returns when every item is done, or, once ctx is done, when
// the items begun are, with the context's cause.
func parallelEach(ctx context.Context, n int, worker func() func(k int)) error {
	nw := par.Workers(n)
	dos := make([]func(k int), nw)
	par.Each(n, nw, func(w, k int) {
		if ctx.Err() != nil {
			return
		}
		if dos[w] == nil {
			dos[w] = worker()
		}
		dos[w](k)
	})
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// Tables returns the text of Kilosort4's cluster tables for clusters
// 0…N−1 (one decimal, tab-separated, a header line):
// cluster_KSLabel.tsv ("good" where good[k], else "mua"; cluster_group.tsv
// is the same text), cluster_ContamPct.tsv (contamPct[k] = 100·R12) and
// cluster_Amplitude.tsv (amp[k], [ClusterAmplitude]). It panics if the
// lengths differ.
func Tables(good []bool, contamPct, amp []float64) map[string][]byte {
	if len(contamPct) != len(good) || len(amp) != len(good) {
		panic("curate: Tables lengths differ")
	}
	var lab, con, am strings.Builder
	lab.WriteString("cluster_id\tKSLabel\n")
	con.WriteString("cluster_id\tContamPct\n")
	am.WriteString("cluster_id\tAmplitude\n")
	for k, g := range good {
		l := "mua"
		if g {
			l = "good"
		}
		fmt.Fprintf(&lab, "%d\t%s\n", k, l)
		fmt.Fprintf(&con, "%d\t%s\n", k, strconv.FormatFloat(contamPct[k], 'f', 1, 64))
		fmt.Fprintf(&am, "%d\t%s\n", k, strconv.FormatFloat(amp[k], 'f', 1, 64))
	}
	return map[string][]byte{
		"cluster_KSLabel.tsv":   []byte(lab.String()),
		"cluster_group.tsv":     []byte(lab.String()),
		"cluster_ContamPct.tsv": []byte(con.String()),
		"cluster_Amplitude.tsv": []byte(am.String()),
	}
}
