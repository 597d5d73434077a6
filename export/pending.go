package export

import (
	"sync"
)

// pendingSet holds the OutputDirs not yet committed or aborted and the
// folders of CreateTempDir not yet removed, for [AbortPending].
type pendingSet struct {
	sync.Mutex
	dirs  map[*OutputDir]struct{}
	temps map[string]struct{}
}

var pending = pendingSet{dirs: map[*OutputDir]struct{}{}, temps: map[string]struct{}{}}

func (p *pendingSet) add(d *OutputDir) {
	p.Lock()
	p.dirs[d] = struct{}{}
	p.Unlock()
}

func (p *pendingSet) remove(d *OutputDir) {
	p.Lock()
	delete(p.dirs, d)
	p.Unlock()
}

func (p *pendingSet) addTemp(dir string) {
	p.Lock()
	p.temps[dir] = struct{}{}
	p.Unlock()
}

func (p *pendingSet) removeTemp(dir string) {
	p.Lock()
	delete(p.temps, dir)
	p.Unlock()
}

// AbortPending aborts every [OutputDir] of this process that is neither
// committed nor aborted and removes every folder of [CreateTempDir] not
// yet removed, for a process that must exit at once (a command
// interrupted in work that cannot stop sooner). A Commit under way is
// waited for; if its context was cancelled it has put an old folder back.
// Files a goroutine of the process creates after this call are not
// removed: the caller exits right after it.
func AbortPending() {
	pending.Lock()
	dirs := make([]*OutputDir, 0, len(pending.dirs))
	for d := range pending.dirs {
		dirs = append(dirs, d)
	}
	temps := make([]string, 0, len(pending.temps))
	for t := range pending.temps {
		temps = append(temps, t)
	}
	pending.Unlock()
	for _, d := range dirs {
		d.Abort()
	}
	for _, t := range temps {
		RemoveTempDir(t)
	}
}
