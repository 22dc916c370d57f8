package targets

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// A class of requests may be a file in vegeta's HTTP targets format
// (requests[].vegeta): each target in it a request as vegeta would send
// it, read by vegeta's own targeter, the class's hits taking them in
// turn. It is background traffic: a bystander, never the herd's.

// MaxVegetaFile bounds a file of vegeta targets.
const MaxVegetaFile = 1 << 20

// readVegeta reads the vegeta targets file at path. A body file (@path)
// that is not absolute is read beside the targets file, as everything a
// target file names is; a problem is at its line of the targets file.
func readVegeta(path string) ([]vegeta.Target, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxVegetaFile {
		return nil, fmt.Errorf("%s: %d bytes (accepted: at most %d)", path, st.Size(), MaxVegetaFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "@") && !filepath.IsAbs(t[1:]) {
			lines[i] = "@" + filepath.Join(filepath.Dir(path), t[1:])
		}
	}
	tgts, err := vegeta.ReadAllTargets(vegeta.NewHTTPTargeter(bytes.NewReader([]byte(strings.Join(lines, "\n"))), nil, nil))
	switch {
	case errors.Is(err, vegeta.ErrNoTargets) && len(tgts) == 0:
		return nil, fmt.Errorf("%s: no targets in it (accepted: vegeta's HTTP format, such as GET http://127.0.0.1:8080/browse)", path)
	case err != nil:
		return nil, fmt.Errorf("%s:%d: %w (accepted: vegeta's HTTP format: METHOD URL, then Header: value lines, then @body-file)", path, lineOf(lines, err), err)
	}
	return tgts, nil
}

// lineOf is the line of lines that vegeta's error err is about (its
// message quotes it), counted from 1; 0 when none is found.
func lineOf(lines []string, err error) int {
	msg := err.Error()
	_, what, ok := strings.Cut(msg, ": ")
	if !ok {
		return 0
	}
	if before, _, ok := strings.Cut(what, ", "); ok && strings.HasPrefix(msg, "bad URL") {
		what = before
	}
	if strings.HasPrefix(msg, "bad body") { // open /dir/file: no such file or directory
		what = strings.TrimPrefix(strings.SplitN(what, ": ", 2)[0], "open ")
	}
	for i, l := range lines {
		if strings.Contains(l, what) {
			return i + 1
		}
	}
	return 0
}
