package reporters

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/experiment"
)

// format renders reports; many says whether it can show more than one.
type format struct {
	render func(io.Writer, []*experiment.Report) error
	many   bool
}

// one adapts a renderer of one report.
func one(f func(io.Writer, *experiment.Report) error) format {
	return format{render: func(w io.Writer, reps []*experiment.Report) error { return f(w, reps[0]) }}
}

// formats are the report formats by name.
var formats = map[string]format{
	"table":    one(Table),
	"json":     one(JSON),
	"markdown": one(Markdown),
	"junit":    one(JUnit),
	"html":     {render: HTML, many: true},
}

// FormatNames lists the report formats, sorted: the one list help text and
// errors use.
func FormatNames() []string {
	return slices.Sorted(maps.Keys(formats))
}

// Render writes reps to w in the named format. Only formats that compare
// runs (html) take more than one report.
func Render(w io.Writer, name string, reps []*experiment.Report) error {
	f, ok := formats[name]
	if !ok {
		return fmt.Errorf("unknown format %q (accepted: %s)", name, strings.Join(FormatNames(), ", "))
	}
	if len(reps) == 0 {
		return fmt.Errorf("%s: no report to render", name)
	}
	if len(reps) > 1 && !f.many {
		return fmt.Errorf("%s shows one run, got %d (accepted: one results file; html shows several)", name, len(reps))
	}
	return f.render(w, reps)
}
