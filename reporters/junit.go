package reporters

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/gates"
)

// JUnit writes the report as JUnit XML, which CI systems show as tests: one
// suite named after the trigger, with one testcase per gate result (named
// by the gate expression and the arm; a failure says what was measured and
// what was expected) and one failing testcase per arm a stop condition
// ended. A partial run adds an errored testcase saying why, since its
// gates were not checked on every arm. A report without gates or aborts is
// a valid suite with zero tests. The run's seed, trigger and environment
// are the suite's properties, with each arm's verdict (verdict:ARM); the
// times are 0, as checks take none.
func JUnit(w io.Writer, rep *experiment.Report) error {
	suite := junit.Testsuite{
		Name:    "herdbench " + rep.Plan.Trigger,
		Package: "herdbench",
		Time:    "0.000",
	}
	if !rep.StartedAt.IsZero() {
		suite.Timestamp = rep.StartedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	properties(&suite, rep)
	class := "herdbench." + rep.Plan.Trigger
	for _, g := range rep.Gates {
		tc := junit.Testcase{Name: g.Gate + " [" + g.Arm + "]", Classname: class, Time: "0.000"}
		if !g.Pass {
			tc.Failure = &junit.Result{
				Message: fmt.Sprintf("measured %s, expected %s", Measured(g), Expected(g)),
				Type:    "gate",
				Data:    xmlChars(fmt.Sprintf("gate %s on arm %s: %s measured %s, expected %s", g.Gate, g.Arm, g.Path, measuredLong(g), Expected(g))),
			}
		}
		suite.AddTestcase(tc)
	}
	for _, a := range aborted(rep) {
		ab := a.Aborted
		suite.AddTestcase(junit.Testcase{
			Name:      "stop condition " + ab.Gate + " [" + a.Name + "]",
			Classname: class,
			Time:      "0.000",
			Failure: &junit.Result{
				Message: "aborted at " + offset(ab.AtMS) + ": " + ab.Reason,
				Type:    "aborted",
				Data: xmlChars(fmt.Sprintf("arm %s was stopped at %s (relative to T) by the stop condition %s: %s; its figures cover the arm up to the stop",
					a.Name, offset(ab.AtMS), ab.Gate, ab.Reason)),
			},
		})
	}
	if rep.Partial {
		suite.AddTestcase(junit.Testcase{
			Name:      "every arm finished",
			Classname: class,
			Time:      "0.000",
			Error:     &junit.Result{Message: "partial results: " + rep.Error, Type: "partial"},
		})
	}
	return writeSuite(w, suite)
}

// writeSuite writes suite as the one suite of a herdbench document.
func writeSuite(w io.Writer, suite junit.Testsuite) error {
	var suites junit.Testsuites
	suites.Name = "herdbench"
	suites.AddSuite(suite)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	return suites.WriteXML(w)
}

// properties are the run's: its seed, trigger, schema and environment,
// and each arm's verdict, and each request class's under it.
func properties(suite *junit.Testsuite, rep *experiment.Report) {
	e := rep.Environment
	for _, p := range [][2]string{
		{"seed", strconv.FormatUint(rep.Seed, 10)},
		{"trigger", rep.Plan.Trigger},
		{"schema", rep.Schema},
		{"provider", e.Provider},
		{"replicas", strconv.Itoa(e.Replicas)},
		{"redis", e.Redis},
		{"postgres", e.Postgres},
		{"cpus", strconv.Itoa(e.CPUs)},
		{"go", e.Go},
		{"os", e.OS},
		{"herdbench", e.Herdbench},
	} {
		suite.AddProperty(p[0], p[1])
	}
	for _, p := range [][2]string{{"memcached", e.Memcached}, {"mariadb", e.MariaDB}} { // the testbed's, when it runs them
		if p[1] != "" {
			suite.AddProperty(p[0], p[1])
		}
	}
	for _, a := range rep.Arms {
		if a.Verdict != "" {
			suite.AddProperty("verdict:"+a.Name, a.Verdict)
		}
		for _, c := range e.Requests { // each request class's own, the herd's and the bystanders'
			if f := a.Requests[c.Name]; f != nil {
				suite.AddProperty("verdict:"+a.Name+":"+c.Name, f.Verdict)
			}
		}
		if a.Escape != nil { // the escape load, or why there is none
			suite.AddProperty("escape.rps:"+a.Name, escapeProperty(a, a.Escape.RPS))
			suite.AddProperty("escape.share:"+a.Name, escapeProperty(a, a.Escape.Share))
		}
		if lb := a.LB; lb != nil { // what the load balancer sent on, by its own counters
			suite.AddProperty("lb.amplification:"+a.Name, strconv.FormatFloat(lb.Amplification, 'f', -1, 64))
			suite.AddProperty("lb.own_5xx:"+a.Name, strconv.FormatInt(lb.Own5xx, 10))
		}
	}
}

// measuredLong is a gate result's measured value, saying why there is none.
func measuredLong(g gates.Result) string {
	if g.Seconds != nil {
		return secondsLong(g.Path, g.Seconds)
	}
	if g.Measured == nil {
		return "no value (null in the results, which fails every gate)"
	}
	return Measured(g)
}

// xmlChars replaces the characters XML cannot carry (control characters
// but tab and newlines) with U+FFFD. encoding/xml does so in attributes
// and text, but writes character data (CDATA) as it is.
func xmlChars(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}
