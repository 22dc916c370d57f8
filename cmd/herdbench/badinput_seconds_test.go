package main

import "strings"

// secondsBadInputs are the bad gates over seconds (docs/ci.md, "Gates over
// seconds"), of kinds the other tables hold.
var secondsBadInputs = map[string][]badInput{
	"a gate the run cannot decide": {
		{args: []string{"stampede", "--dry-run", "--after", "2s", "--gate", "http.p99_ms < 250 for 95% of seconds"},
			want: "a gate over seconds counts the whole seconds after the arm's settle, and on none the after window (2s) ends before one: the settle ends 2s after T at the soonest (the trigger's end, 0s after T, plus the arm's settle, 2s: the longest of 2s and its clients' whole deadline), and the seconds begin at the first row from it, up to a row later, so the gate could only fail (accepted: --after 3.1s or more with the gate)"},
		{args: []string{"stampede", "--dry-run", "--after", "4s", "--arms", "none,retry=immediate:2", "--timeout", "1s", "--gate", "retry=immediate:2:http.p99_ms < 250 for 95% of seconds"},
			want: "on retry=immediate:2 the after window (4s) ends before one: the settle ends 3s after T at the soonest (the trigger's end, 0s after T, plus the arm's settle, 3s"},
		{args: []string{"stampede", "--dry-run", "--trigger", "outage", "--outage", "3s", "--after", "5s", "--gate", "lock:http.drop_rate < 1% for 95% of seconds"},
			want: "the settle ends 5s after T at the soonest (the trigger's end, 3s after T, plus the arm's settle, 2s"},
		{args: []string{"report", "{dir}/r.json", "--gate", "hedge=50ms:http.p99_ms < 900 for 50% of seconds"}, files: map[string]string{"r.json": resultsFile},
			want: "no arm of these results has a whole second of its timeline after its settle (settle_ms from the trigger's end), so the gate could only fail"},
	},
	"a gate that does not read": {
		{args: []string{"stampede", "--dry-run", "--gate", "http.p99_ms < 250 in 95% of 1s"},
			want: `VALUE "250 in 95% of 1s" is not a number, or a percentage such as 1%, and a gate over seconds ends with for SHARE of seconds`},
		{args: []string{"stampede", "--dry-run", "--gate", "http.p99_ms < 250 for 95 of seconds"},
			want: `SHARE "95" is not a percentage above 0% and at most 100% (accepted: [ARM:]PATH OP VALUE for SHARE of seconds`},
		{args: []string{"stampede", "--dry-run", "--gate", "http.p50_ms < 250 for 95% of seconds"},
			want: "http.p50_ms cannot be judged over seconds: the timeline's rows do not carry it second by second (accepted over seconds: cache.hit_ratio, db.peak_qps, http.drop_rate, http.errors.unsent, http.p99_ms, http.requests)"},
		{args: []string{"report", "{dir}/r.json", "--gate", "http.ok >= 10 for 95% of seconds"}, files: map[string]string{"r.json": resultsFile},
			want: "http.ok cannot be judged over seconds: the timeline's rows do not carry it second by second (accepted over seconds: cache.hit_ratio,"},
		{args: []string{"run", "--dry-run", "{dir}/s.yaml"}, files: map[string]string{"s.yaml": "gates:\n  - \"lock:http.p50_ms < 1 for 95% of seconds\"\n"},
			want: `s.yaml:2: gates[0]: "lock:http.p50_ms < 1 for 95% of seconds": http.p50_ms cannot be judged over seconds`},
		{args: []string{"stampede", "--dry-run", "--target", "{dir}/t.yaml", "--trigger", "burst", "--gate", "requests.a.drop_rate < 1% for 95% of seconds"},
			files: map[string]string{"t.yaml": strings.Replace(targetFile, "request:\n  path: /items/{key}\n", "requests:\n  - {name: a, weight: 1, path: \"/a/{key}\", herd: true}\n  - {name: b, weight: 2, path: /b}\n", 1)},
			want:  "requests.a.drop_rate cannot be judged over seconds: the timeline's rows do not carry it second by second (accepted over seconds: requests.a.errors.unsent, requests.a.goodput_rps, requests.a.ok, requests.a.p99_ms, requests.a.requests, requests.b.errors.unsent,"},
		{args: []string{"stampede", "--dry-run", "--abort-on", "http.p99_ms > 900 for 50% of seconds"},
			want: `--abort-on: "http.p99_ms > 900 for 50% of seconds": http.p99_ms cannot be judged over seconds here (accepted: [ARM:]PATH OP VALUE, without for SHARE of seconds)`},
		{args: []string{"sweep", "--dry-run", "--trigger", "burst", "--vary", "burst=10..100", "--gate", "lock:http.p99_ms < 250 for 95% of seconds"},
			want: "a gate over seconds judges one run's timeline, and a sweep's gates judge each arm's tipping point over its runs (accepted: [ARM:]tipping OP VALUE"},
	},
}

// appendKinds adds more's inputs to the kinds of ms, each of which must
// be one already: every kind is a row of docs/bad-input.md.
func appendKinds(ms map[string][]badInput, more map[string][]badInput) map[string][]badInput {
	for k, v := range more {
		if _, ok := ms[k]; !ok {
			panic("kind " + k + " in no table")
		}
		ms[k] = append(ms[k], v...)
	}
	return ms
}
