package batch

import "syscall"

// workerAttr makes the kernel send a worker process SIGTERM when the
// process that started it ends (killed at once included), so that no
// worker runs on without its batch run; SIGTERM lets it remove the
// folder it was writing.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
