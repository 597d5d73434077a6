//go:build unix

package export

import (
	"errors"
	"syscall"
)

// processExists reports whether a process of id pid exists (signal 0
// delivers nothing; EPERM means it exists but belongs to another user).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
