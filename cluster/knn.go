package cluster

import "math"

// graph is a group's kNN graph (kilosort4-sort.md §5.3): every spike's k
// nearest landmarks, and the sparse matrix M of those links without the
// landmarks' self-links.
type graph struct {
	n, s, k int
	land    []int32 // landmark spike indices, ascending
	kn      []int32 // [n·k] landmark indices, nearest first
	selfOf  []int32 // spike → its landmark index, or −1
	ki      []int32 // row sums of M (links without self-links)
	ks      []int32 // column sums of M
	m       int     // ΣM
	// inStart, inList: for landmark s, the spikes i with kn[i,r] = s for
	// some r (self-links included), ascending: inList[inStart[s]:inStart[s+1]].
	inStart, inList []int32
}

// landmarks returns the landmark spikes of a group of n spikes: 0, ds,
// 2·ds, …; if there are more than limit (> 0), those at positions
// round(linspace(0, s1−1, s1−limit)) (half to even) are dropped.
func landmarks(n, ds, limit int) []int32 {
	s1 := (n + ds - 1) / ds
	drop := make([]bool, s1)
	if limit > 0 && s1 > limit {
		for _, v := range linspace(0, float64(s1-1), s1-limit) {
			drop[int(math.RoundToEven(v))] = true
		}
	}
	out := make([]int32, 0, s1)
	for j := 0; j < s1; j++ {
		if !drop[j] {
			out = append(out, int32(j*ds))
		}
	}
	return out
}

// sqDist is the squared Euclidean distance of two float64 rows, summed in
// order.
func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	s := 0.0
	for t, v := range a {
		d := v - b[t]
		s += d * d
	}
	return s
}

// buildGraph finds, for each of the n rows of x (d features, float64 copy
// of Xd), its k nearest landmarks by exact squared distance, nearest first,
// equal distances by lowest landmark index, and builds the graph's sparse
// links. k is clipped to the number of landmarks.
func buildGraph(x []float64, n, d int, land []int32, k int) *graph {
	s := len(land)
	k = min(k, s)
	g := &graph{n: n, s: s, k: k, land: land, kn: make([]int32, n*k), selfOf: make([]int32, n)}
	for i := range g.selfOf {
		g.selfOf[i] = -1
	}
	for j, i := range land {
		g.selfOf[i] = int32(j)
	}
	lx := make([]float64, s*d)
	for j, i := range land {
		copy(lx[j*d:(j+1)*d], x[int(i)*d:(int(i)+1)*d])
	}
	bd := make([]float64, k)
	bi := make([]int32, k)
	for i := 0; i < n; i++ {
		xi := x[i*d : (i+1)*d]
		cnt := 0
		for j := 0; j < s; j++ {
			dist := sqDist(xi, lx[j*d:(j+1)*d])
			if cnt == k && !(dist < bd[k-1]) {
				continue
			}
			// Insert after every entry ≤ dist: equal distances keep the
			// lower landmark index first.
			p := min(cnt, k-1)
			for p > 0 && bd[p-1] > dist {
				bd[p], bi[p] = bd[p-1], bi[p-1]
				p--
			}
			bd[p], bi[p] = dist, int32(j)
			if cnt < k {
				cnt++
			}
		}
		copy(g.kn[i*k:(i+1)*k], bi)
	}
	g.links()
	return g
}

// links computes the degrees, m and the incoming lists from kn.
func (g *graph) links() {
	g.ki = make([]int32, g.n)
	g.ks = make([]int32, g.s)
	g.inStart = make([]int32, g.s+1)
	for i := 0; i < g.n; i++ {
		for _, j := range g.kn[i*g.k : (i+1)*g.k] {
			g.inStart[j+1]++
			if j != g.selfOf[i] {
				g.ki[i]++
				g.ks[j]++
				g.m++
			}
		}
	}
	for j := 0; j < g.s; j++ {
		g.inStart[j+1] += g.inStart[j]
	}
	g.inList = make([]int32, g.inStart[g.s])
	pos := make([]int32, g.s)
	copy(pos, g.inStart[:g.s])
	for i := 0; i < g.n; i++ {
		for _, j := range g.kn[i*g.k : (i+1)*g.k] {
			g.inList[pos[j]] = int32(i)
			pos[j]++
		}
	}
}
