package workers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/reporters"
)

// With -o vegeta=FILE and --workers, each worker writes its own requests
// as vegeta's results into a file of its own (VegetaFile: FILE with the
// worker's index in its name), under its working directory, on its own
// machine: vegeta's recipe for a distributed attack, whose machines each
// write results that `vegeta report` then reads together. The controller
// merges bins as ever; it never sees a record, so the file costs it
// nothing. The arms of one run append to the same file, one gob stream,
// as one process writes them.

// VegetaOut asks a worker for vegeta's results of its share.
type VegetaOut struct {
	File   string `json:"file"`   // -o vegeta=FILE as given: a local path (CheckVegetaFile)
	Series string `json:"series"` // the controller's run: its arms append to one file
	Arm    string `json:"arm"`    // each result's Attack
	First  bool   `json:"first"`  // the run's first arm: the file is made anew
}

// VegetaFile is the file worker i writes for -o vegeta=file: file with
// ".worker-I" before its extension (results.bin: results.worker-0.bin).
func VegetaFile(file string, i int) string {
	ext := filepath.Ext(file)
	return fmt.Sprintf("%s.worker-%d%s", strings.TrimSuffix(file, ext), i, ext)
}

// CheckVegetaFile refuses a file a worker may not write: one that is not
// a local path (absolute, or reaching above the working directory). The
// controller's path means nothing on another machine, and a worker writes
// nothing outside its own working directory.
func CheckVegetaFile(file string) error {
	if !filepath.IsLocal(file) {
		return fmt.Errorf("vegeta=%s: each worker writes its own file under its working directory, so FILE must be a relative path below it (accepted: such as vegeta/results.bin, which worker 0 writes as %s)",
			file, VegetaFile("vegeta/results.bin", 0))
	}
	return nil
}

// vegetaOut is the file a worker writes its results into, open across
// the arms of one series.
type vegetaOut struct {
	series, path string
	f            *os.File
	res          *reporters.VegetaResults
}

// vegetaFor is the file for share s of worker w (nil without -o vegeta):
// made anew for a series' first arm, the one open for its others.
func (w *Worker) vegetaFor(s Share) (*vegetaOut, error) {
	v := s.Vegeta
	if v == nil {
		return nil, nil
	}
	if err := CheckVegetaFile(v.File); err != nil {
		return nil, err
	}
	path := VegetaFile(v.File, s.Index)
	w.mu.Lock()
	defer w.mu.Unlock()
	if old := w.vegeta; old != nil && old.series == v.Series && old.path == path && !v.First {
		return old, nil
	}
	if !v.First {
		return nil, fmt.Errorf("vegeta=%s: the run's earlier arms were written by a file this worker no longer holds (did it restart?)", path)
	}
	if err := w.closeVegeta(); err != nil {
		w.Log.Warn("vegeta results", "error", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("vegeta=%s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("vegeta=%s: %w", path, err)
	}
	w.vegeta = &vegetaOut{series: v.Series, path: path, f: f, res: reporters.NewVegetaResults(f)}
	return w.vegeta, nil
}

// closeVegeta flushes and closes the open file, if any; w.mu is held.
func (w *Worker) closeVegeta() error {
	v := w.vegeta
	if v == nil {
		return nil
	}
	w.vegeta = nil
	return errors.Join(v.res.Flush(), v.f.Close())
}

// vegetaRecords writes the records of an arm (T at t, measured from t -
// before to t + after) to v, as one process writes its own: not the
// warmup's, none due after the cut, each result's Attack the arm.
type vegetaRecords struct {
	v       *vegetaOut
	arm     string
	from, t time.Time
	end     time.Time
	cut     *load.Cut
}

func (r *vegetaRecords) add(rec load.Record) {
	if r == nil || rec.Intended.Before(r.from) || !rec.Intended.Before(r.end) {
		return
	}
	if at, cut := r.cut.When(); cut && rec.Intended.After(at) {
		return // the arm ended before it: not in the arm's figures either
	}
	phase := experiment.PhaseAfter
	if rec.Intended.Before(r.t) {
		phase = experiment.PhaseBefore
	}
	r.v.res.Request(r.arm, phase, rec)
}

// flush writes what is buffered once the arm is over: the file then holds
// every arm so far.
func (r *vegetaRecords) flush() error {
	if r == nil {
		return nil
	}
	if err := r.v.res.Flush(); err != nil {
		return fmt.Errorf("vegeta=%s: %w", r.v.path, err)
	}
	return nil
}
