package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMissingObservabilityNamesItsPackages(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // nothing on PATH
	err := CheckObservabilityBinaries()
	var missing *MissingBinaryError
	if !errors.As(err, &missing) {
		t.Fatalf("CheckObservabilityBinaries() without binaries = %v; want a MissingBinaryError", err)
	}
	for _, want := range []string{
		"prometheus not found", "apt-get install prometheus`", "brew install prometheus`",
		"prometheus-redis-exporter or redis_exporter not found", "apt-get install prometheus-redis-exporter", "brew install redis_exporter",
		"prometheus-postgres-exporter or postgres_exporter not found", "apt-get install prometheus-postgres-exporter", "brew install postgres_exporter",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckObservabilityBinaries() = %q; want it to say %q", err, want)
		}
	}
	// Start says so before it starts anything
	dir := t.TempDir()
	_, err = Start(context.Background(), Config{StateDir: dir, Observability: true})
	if err == nil || !strings.Contains(err.Error(), "apt-get install prometheus`") {
		t.Errorf("Start with observability and no prometheus = %v; want the missing package named", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "state.json")); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("Start that found binaries missing left a state file: %v", statErr)
	}
}

// An upstream install (Homebrew, release tarballs) names the exporters
// redis_exporter and postgres_exporter; those are found too.
func TestObservabilityFindsUpstreamNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"prometheus", "redis_exporter", "postgres_exporter"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	b, err := findObservability()
	if err != nil || b.redisExporter != filepath.Join(dir, "redis_exporter") || b.postgresExporter != filepath.Join(dir, "postgres_exporter") {
		t.Errorf("findObservability() = %+v, %v; want the upstream names in %s", b, err, dir)
	}
}
