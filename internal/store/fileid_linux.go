//go:build linux

package store

import (
	"fmt"
	"os"
	"syscall"
)

// identity is what identifies one version of a file without reading it:
// device, inode, size, modification and change time. Any write changes the
// change time, which no tool can set back.
func identity(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("%d:%d", fi.Size(), fi.ModTime().UnixNano())
	}
	return fmt.Sprintf("%d:%d:%d:%d:%d.%d", st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano(), st.Ctim.Sec, st.Ctim.Nsec)
}
