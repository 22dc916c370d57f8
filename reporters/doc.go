// Package reporters renders an experiment's Report: the terminal table, the
// results JSON file, Markdown for pull requests and CI step summaries, one
// self-contained HTML page for one or more reports, and JUnit XML with one
// testcase per gate. They only format: every figure comes from the Report
// as measured (docs/reports.md says which field each one is).
//
// Every renderer is a function of its input alone: no clock, no map order,
// fixed number formats, so the same results render to the same bytes
// (testdata/golden holds the output for testdata/results.json, and for the
// hand-built layers and writes reports of details_test.go; go test
// ./reporters -update rewrites it). Text from the results (arm names such
// as retry=exp:50ms:500ms:2, gate expressions such as db.queries <= 150) is
// escaped for each format.
//
//	rep := ... // an *experiment.Report, as run or decoded from results.json
//	if err := reporters.Markdown(os.Stdout, rep); err != nil { ... }
//	if err := reporters.HTML(f, []*experiment.Report{rep}); err != nil { ... }
//
// The harness' live Prometheus metrics are package livemetrics.
package reporters
