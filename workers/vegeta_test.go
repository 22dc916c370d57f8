package workers_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/workers"
)

// -o vegeta=FILE with workers is vegeta's recipe for a distributed
// attack: each worker writes its own requests as vegeta's results, in a
// file named after it under its own working directory, and `vegeta
// report` over every file (vegeta's own decoders and Metrics, as its CLI
// reads several files) gives herdbench's figures of each arm: as many
// requests as the arm intended, each worker's as many as it intended, and
// the success ratio of herdbench's timeline (ok over intended; the
// service answers 503 to one request in ten). Two arms append to one
// file a worker, one gob stream that vegeta reads whole.
func TestWorkersWriteVegetaResults(t *testing.T) {
	localtest.Require(t)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vegeta-Seq") != "" && n.Add(1)%10 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	ws := startWorkersIn(t, 3, nil, dir)
	rep, stdout := stampede(t, ws, "--target", srv.URL+"/items/{key}", "--trigger", "burst", "--burst", "3", "--arms", "baseline,retry=immediate:1",
		"--rate", "300", "--warmup", "500ms", "--before", "1s", "--after", "1s", "-o", "vegeta=vegeta/results.bin")
	if !strings.Contains(stdout, "vegeta/results.worker-0.bin and on (each worker's own") {
		t.Errorf("the results line does not name the workers' files:\n%s", stdout)
	}
	var files []string
	for i := range ws {
		files = append(files, filepath.Join(dir, workers.VegetaFile("vegeta/results.bin", i)))
	}
	all := report(t, files, "")
	var intended int64
	for _, a := range rep.Arms {
		intended += a.Load.Intended
		m := report(t, files, a.Name)
		var ok int64
		for _, row := range a.Timeline {
			ok += row.OK
		}
		t.Logf("%s: vegeta report: %d requests, success %.4f; herdbench: %d intended, %d ok", a.Name, m.Requests, m.Success, a.Load.Intended, ok)
		if int64(m.Requests) != a.Load.Intended || m.Success != float64(ok)/float64(a.Load.Intended) {
			t.Errorf("%s: vegeta report over the workers' files: %d requests, success %g; want %d, herdbench's load.intended, and %g, its timeline's ok (%d) over them",
				a.Name, m.Requests, m.Success, a.Load.Intended, float64(ok)/float64(a.Load.Intended), ok)
		}
		if a.Name == "baseline" && m.Success == 1 {
			t.Errorf("%s: success 1; want the 503s among the results (no retries in this arm)", a.Name)
		}
		for i, w := range a.Workers.Each {
			if got := report(t, files[i:i+1], a.Name).Requests; int64(got) != w.Load.Intended {
				t.Errorf("%s: worker %d's file holds %d results; want %d, the requests it intended", a.Name, i, got, w.Load.Intended)
			}
		}
	}
	if int64(all.Requests) != intended {
		t.Errorf("vegeta report over every arm: %d requests; want %d, the arms' intended", all.Requests, intended)
	}
}

// report is vegeta's report over files, of the results of attack ("":
// all): each file decoded as its CLI does (DecoderFor, and the files taken
// in turn by its round-robin decoder), into its Metrics.
func report(t *testing.T, files []string, attack string) vegeta.Metrics {
	t.Helper()
	var decs []vegeta.Decoder
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		dec := vegeta.DecoderFor(f)
		if dec == nil {
			t.Fatalf("%s: vegeta cannot tell its encoding", name)
		}
		decs = append(decs, dec)
	}
	dec := vegeta.NewRoundRobinDecoder(decs...)
	var m vegeta.Metrics
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode %v: %v", files, err)
		}
		if attack == "" || r.Attack == attack {
			m.Add(&r)
		}
	}
	m.Close()
	return m
}
