package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// initdbArgs are initdb's options for a testbed's cluster, after its -D.
var initdbArgs = []string{"-U", Superuser, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"}

// newCluster fills dir, empty and cred's, with a new cluster: a copy of
// the template initdb made once for this initdb program, its options and
// the cluster's owner. initdb costs about 1.4 s of CPU (5 s of a busy
// machine's wall), a copy 0.2 s: every testbed start ran initdb before.
// Where no template can be had (the temporary directory not writable, a
// template there of another owner), initdb runs in dir, as it did.
func newCluster(ctx context.Context, h Host, initdb, dir string, cred *syscall.Credential) error {
	if tmpl, err := pgTemplate(ctx, h, initdb, cred); err == nil {
		return h.Run(ctx, dir, cred, "cp", "-a", tmpl+"/.", dir)
	}
	return h.Run(ctx, dir, cred, append([]string{initdb, "-D", dir}, initdbArgs...)...)
}

// pgTemplate is the template cluster in the temporary directory, made
// under a lock by its first user: initdb in a directory of its own,
// renamed into place once whole. A directory of that name is used only
// when it is a directory of the owner's alone (mode 0700), as initdb
// leaves it.
func pgTemplate(ctx context.Context, h Host, initdb string, cred *syscall.Credential) (string, error) {
	fi, err := os.Stat(initdb)
	if err != nil {
		return "", err
	}
	uid, gid := os.Geteuid(), os.Getegid()
	if cred != nil {
		uid, gid = int(cred.Uid), int(cred.Gid)
	}
	key := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%d\x00%s", initdb, fi.Size(), fi.ModTime().UnixNano(), uid, strings.Join(initdbArgs, " ")))
	path := filepath.Join(os.TempDir(), fmt.Sprintf("herdbench-pg-template-%x", key[:8]))
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close() // closing it releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	if ownersAlone(path, uid) && ownersAlone(filepath.Join(path, "global"), uid) && isFile(filepath.Join(path, "PG_VERSION")) {
		return path, nil
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s is not a template of uid %d's", path, uid)
	}
	tmp := path + ".new"
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", err
	}
	if err := os.Chown(tmp, uid, gid); err != nil {
		return "", err
	}
	if err := h.Run(ctx, tmp, cred, append([]string{initdb, "-D", tmp}, initdbArgs...)...); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// ownersAlone says whether path is a directory, not a link, that uid owns
// and no one else may read.
func ownersAlone(path string, uid int) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}

// isFile says whether path is a regular file, not a link.
func isFile(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}
