package cli

import (
	"fmt"
	"os"
	"path/filepath"
)

// NotADir says why path cannot be a directory: it is a file, or one of
// its parents is; "" when it is one or can be made.
func NotADir(path string) string { return notA(path, true) }

// NotAFile says why path cannot be written as a file: it is a directory,
// or one of its parents is a file; "" otherwise.
func NotAFile(path string) string { return notA(path, false) }

// notA says why path cannot be a directory (dir) or a file: it exists as
// the other, or a parent of it is a file.
func notA(path string, dir bool) string {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fileAbove(path)
	case dir && !fi.IsDir():
		return path + " is a file"
	case !dir && fi.IsDir():
		return path + " is a directory"
	}
	return ""
}

// fileAbove names the nearest existing parent of path when it is a file,
// which no directory can be made under; "" otherwise.
func fileAbove(path string) string {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil {
			if !fi.IsDir() {
				return fmt.Sprintf("%s is under %s, a file", path, dir)
			}
			return ""
		}
		if next := filepath.Dir(dir); next == dir {
			return ""
		}
	}
}
