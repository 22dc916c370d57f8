package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/grafana"
)

// herdbench dashboards writes what the grafana package builds, under
// --dir, and names each file; a stray argument is refused with exit 2.
func TestDashboardsWritesTheGrafanaFiles(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"dashboards", "--dir", dir}, &stdout, &stderr); code != exitOK {
		t.Fatalf("dashboards --dir: exit %d\n%s", code, stderr.String())
	}
	files, err := grafana.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v, %d bytes; want the %d grafana.Files has", name, err, len(got), len(want))
		}
		if !strings.Contains(stdout.String(), filepath.Join(dir, name)+"\n") {
			t.Errorf("stdout %q does not name %s", stdout.String(), name)
		}
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"dashboards", "extra"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "extra") {
		t.Errorf("dashboards extra: exit %d, %q; want 2 naming the argument", code, stderr.String())
	}
}
