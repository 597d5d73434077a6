package export

import (
	"path/filepath"
	"sync"
	"sync/atomic"
)

// pendingSet holds the OutputDirs not yet committed or aborted and the
// folders of CreateTempDir not yet removed, for [AbortPending].
type pendingSet struct {
	sync.Mutex
	dirs      map[*OutputDir]struct{}
	temps     map[string]struct{}
	committed map[string]struct{} // final paths committed by this process
}

var pending = pendingSet{dirs: map[*OutputDir]struct{}{}, temps: map[string]struct{}{}, committed: map[string]struct{}{}}

// Committed reports whether this process committed an [OutputDir] whose
// final path is final (as given to CreateOutputDir, cleaned).
func Committed(final string) bool {
	pending.Lock()
	defer pending.Unlock()
	_, ok := pending.committed[filepath.Clean(final)]
	return ok
}

func (p *pendingSet) add(d *OutputDir) {
	p.Lock()
	p.dirs[d] = struct{}{}
	p.Unlock()
}

func (p *pendingSet) remove(d *OutputDir, committed bool) {
	p.Lock()
	delete(p.dirs, d)
	if committed {
		p.committed[d.final] = struct{}{}
	}
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

// exiting is set by AbortPending: the process is about to exit.
var exiting atomic.Bool

// AbortPending aborts every [OutputDir] of this process that is neither
// committed nor aborted and removes every folder of [CreateTempDir] not
// yet removed, for a process that must exit at once (a command
// interrupted in work that cannot stop sooner). A Commit under way is
// waited for; if its context was cancelled it has put an old folder back.
// Files a goroutine of the process creates after this call are not
// removed: the caller exits right after it. From this call on
// [MkdirParents] creates no folder, so that a goroutine still running does
// not make again a temporary folder just removed.
func AbortPending() {
	exiting.Store(true)
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
