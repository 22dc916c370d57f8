package reporters

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/herdbench/herdbench/experiment"
)

// parseJUnit renders rep and reads the XML back, failing on invalid XML.
func parseJUnit(t *testing.T, rep *experiment.Report) (junit.Testsuites, string) {
	t.Helper()
	var b bytes.Buffer
	if err := JUnit(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), xml.Header) {
		t.Errorf("JUnit output does not start with the XML declaration:\n%s", b.String())
	}
	var got junit.Testsuites
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	dec.Strict = true
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("JUnit output is not valid XML: %v\n%s", err, b.String())
	}
	return got, b.String()
}

func TestJUnit(t *testing.T) {
	tests := []struct {
		name                  string
		edit                  func(*experiment.Report)
		tests, failures, errs int
		wantCase, wantFailure string // a testcase name and its failure message
	}{
		{"fixture", func(*experiment.Report) {}, 10, 7, 0,
			"db.queries <= 150 [hedge=50ms]", "measured 366, expected <= 150"},
		{"aborted arm", func(*experiment.Report) {}, 10, 7, 0,
			"stop condition http.p99_ms > 990 [hedge=50ms]", "aborted at T+1.5s: http.p99_ms > 990 held: http.p99_ms was 1004 over the last 1s"},
		{"ratio gate", func(r *experiment.Report) { r.Gates[4].Pass = false }, 10, 8, 0,
			"lock:http.drop_rate < 1% [lock]", "measured 0.00%, expected < 1%"},
		{"null measured", func(*experiment.Report) {}, 10, 7, 0,
			"recovery_ms < 2500 [lock]", "measured no value, expected < 2500"},
		{"no gates, no aborts", func(r *experiment.Report) { r.Gates, r.Arms[3].Aborted = nil, nil }, 0, 0, 0, "", ""},
		{"partial", func(r *experiment.Report) { r.Gates, r.Partial, r.Error = nil, true, "interrupted" }, 2, 1, 1,
			"every arm finished", "partial results: interrupted"},
		{"hostile names", func(r *experiment.Report) {
			r.Gates = r.Gates[:1]
			r.Gates[0].Arm = "a<b>&\"c\"]]>\x1b"
		}, 2, 2, 0, "db.queries <= 150 [a<b>&\"c\"]]>\uFFFD]", "measured 177, expected <= 150"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := loadReport(t, fixture)
			tt.edit(rep)
			got, out := parseJUnit(t, rep)
			if len(got.Suites) != 1 {
				t.Fatalf("JUnit has %d suites; want 1:\n%s", len(got.Suites), out)
			}
			s := got.Suites[0]
			if s.Name != "herdbench expire" || s.Tests != tt.tests || s.Failures != tt.failures || s.Errors != tt.errs || len(s.Testcases) != tt.tests {
				t.Errorf("suite %q: tests=%d (%d testcases) failures=%d errors=%d; want \"herdbench expire\" %d, %d, %d",
					s.Name, s.Tests, len(s.Testcases), s.Failures, s.Errors, tt.tests, tt.failures, tt.errs)
			}
			if tt.wantCase == "" {
				return
			}
			for _, tc := range s.Testcases {
				if tc.Name != tt.wantCase {
					continue
				}
				r := tc.Failure
				if r == nil {
					r = tc.Error
				}
				if r == nil || r.Message != tt.wantFailure {
					t.Errorf("testcase %q: failure %+v; want message %q", tc.Name, r, tt.wantFailure)
				}
				return
			}
			t.Errorf("no testcase named %q:\n%s", tt.wantCase, out)
		})
	}
}

// Every gate result is a testcase, passing exactly when the gate passed.
func TestJUnitOneTestcasePerGate(t *testing.T) {
	rep := loadReport(t, fixture)
	got, _ := parseJUnit(t, rep)
	cases := got.Suites[0].Testcases
	for i, g := range rep.Gates {
		tc := cases[i]
		if want := g.Gate + " [" + g.Arm + "]"; tc.Name != want || (tc.Failure == nil) != g.Pass {
			t.Errorf("testcase %d = %q, failed %v; want %q, failed %v", i, tc.Name, tc.Failure != nil, want, !g.Pass)
		}
	}
}
