package experiment

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// contractDoc holds the results contract: a table whose rows each name
// figures (first column), their source and their window.
const contractDoc = "../docs/stampede.md"

// Every figure a gate may name (GatePaths: every number of an arm's
// results) has a row in the results contract table of docs/stampede.md,
// which says where it comes from and over which window; a figure added to
// ArmResult or a type under it without one fails here, named.
func TestEveryGatePathIsDocumented(t *testing.T) {
	cells := contractCells(t, contractDoc)
	if len(cells) < 10 {
		t.Fatalf("%s: %d rows in the results contract table; want the table under %q", contractDoc, len(cells), contractHeading)
	}
	order := leafOrder(t)
	var doc contractNames
	for _, c := range cells {
		doc.add(c)
	}
	for _, r := range doc.ranges {
		for _, end := range r {
			if _, ok := order[end]; !ok {
				t.Errorf("%s: the range %s … %s ends at %s, which is no figure of an arm", contractDoc, r[0], r[1], end)
			}
		}
	}
	var missing []string
	for _, p := range GatePaths() {
		if !doc.covers(p, order) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s: gate paths with no row in the results contract table (name each with its source and window):\n%s",
			contractDoc, strings.Join(missing, "\n"))
	}
}

// The forms the table's first column uses, expanded as the test above
// reads them.
func TestContractFormsExpand(t *testing.T) {
	order := leafOrder(t)
	var doc contractNames
	doc.add("`db.{queries,peak_qps}`, `workers.*`, `trigger`, `http.p50_ms` … `http.p99_ms`")
	for p, want := range map[string]bool{
		"db.queries": true, "db.peak_qps": true, "db.queries_total": false, // braces: each name, exactly
		"workers.count": true, "trigger.detail": true, // a wildcard, or a bare name: everything under it
		"http.p50_ms": true, "http.p90_ms": true, "http.p99_ms": true, // a range: in the results' order
		"http.p999_ms": false, "http.max_ms": false, "http.ok": false,
	} {
		if got := doc.covers(p, order); got != want {
			t.Errorf("%s documented: %v; want %v", p, got, want)
		}
	}
}

const contractHeading = "## The results contract"

// contractCells returns the first cell of every row of the table that
// follows the heading of the results contract in the file at path.
func contractCells(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, text, ok := strings.Cut(string(b), contractHeading)
	if !ok {
		t.Fatalf("%s: no %q section", path, contractHeading)
	}
	var cells []string
	started := false
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, "|") {
			if started {
				break // the table ended
			}
			continue
		}
		started = true
		cell := strings.TrimSpace(strings.Split(line, "|")[1])
		if cell != "field" && !strings.HasPrefix(cell, "---") { // the header and its rule
			cells = append(cells, cell)
		}
	}
	return cells
}

// contractNames are the figures the table names. The first column names
// figures as code spans, in three forms besides a plain path:
//
//   - `a.{b,c}` is `a.b` and `a.c`;
//   - `a.*` is everything under a, and so is a plain `a` (a row naming an
//     object, such as `clients`, describes its fields in its source);
//   - `a.b` … `a.e` is a.b, a.e and every figure between them in the
//     order the results print them (the order of ArmResult's fields).
type contractNames struct {
	names  []string    // each covers itself and what is under it
	ranges [][2]string // each covers its ends and what lies between
}

var (
	rangeForm = regexp.MustCompile("`([^`]+)` … `([^`]+)`")
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	braces    = regexp.MustCompile(`^(.*)\{([^}]*)\}(.*)$`)
)

// add reads the names of one row's first cell.
func (c *contractNames) add(cell string) {
	for _, m := range rangeForm.FindAllStringSubmatch(cell, -1) {
		c.ranges = append(c.ranges, [2]string{m[1], m[2]})
	}
	for _, m := range codeSpan.FindAllStringSubmatch(rangeForm.ReplaceAllString(cell, ""), -1) {
		names := []string{m[1]}
		if b := braces.FindStringSubmatch(m[1]); b != nil {
			names = names[:0]
			for _, alt := range strings.Split(b[2], ",") {
				names = append(names, b[1]+strings.TrimSpace(alt)+b[3])
			}
		}
		for _, n := range names {
			c.names = append(c.names, strings.TrimSuffix(n, ".*"))
		}
	}
}

// covers says whether path is named, order being where each figure comes
// in the results.
func (c *contractNames) covers(path string, order map[string]int) bool {
	for _, n := range c.names {
		if path == n || strings.HasPrefix(path, n+".") {
			return true
		}
	}
	i, ok := order[path]
	if !ok {
		return false
	}
	return slices.ContainsFunc(c.ranges, func(r [2]string) bool {
		lo, okLo := order[r[0]]
		hi, okHi := order[r[1]]
		return okLo && okHi && lo <= i && i <= hi
	})
}

// leafOrder numbers the leaves of an arm's results, every field shown, in
// the order its JSON prints them.
func leafOrder(t *testing.T) map[string]int {
	t.Helper()
	var a ArmResult
	showAll(reflect.ValueOf(&a).Elem())
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	order := map[string]int{}
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if tok != json.Delim('{') && tok != json.Delim('[') {
			order[path] = len(order)
			return nil
		}
		for dec.More() {
			elem := path + "[]"
			if tok == json.Delim('{') {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				elem = strings.TrimPrefix(path+"."+k.(string), ".")
			}
			if err := walk(elem); err != nil {
				return err
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	if err := walk(""); err != nil {
		t.Fatal(err)
	}
	return order
}
