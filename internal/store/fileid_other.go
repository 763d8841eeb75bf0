//go:build !linux

package store

import (
	"fmt"
	"os"
)

// fileID is what identifies one version of a file without reading it:
// inode (where known), size and modification time.
func fileID(fi os.FileInfo) string {
	return fmt.Sprintf("%d:%d:%d", inode(fi), fi.Size(), fi.ModTime().UnixNano())
}
