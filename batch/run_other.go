//go:build !linux

package batch

import "syscall"

// workerAttr is nil where there is no parent-death signal: a worker
// notices that its batch run is gone by its parent ([watchParent]).
func workerAttr() *syscall.SysProcAttr { return nil }
