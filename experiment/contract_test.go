package experiment

import (
	"encoding"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/figure"
	"github.com/herdbench/herdbench/triggers"
)

func TestEveryFigureHasAContractRow(t *testing.T) {
	if missing := uncontracted(); len(missing) > 0 {
		t.Errorf("figures with no row in the results contract (contract.go: name each with its source and window):\n%s", strings.Join(missing, "\n"))
	}
}

// uncontracted are the declared figures no row of the contract names.
func uncontracted() []string {
	order := resultNodes()
	doc := contractOf(result.ContractRows())
	var missing []string
	for _, p := range result.SchemaPaths(true) {
		if !doc.covers(p, order) {
			missing = append(missing, p)
		}
	}
	return missing
}

// Every name a row gives is something an arm's results hold, and a range
// ends at figures: a field renamed or gone fails here, named.
func TestEveryContractRowNamesAField(t *testing.T) {
	order := resultNodes()
	for _, r := range result.ContractRows() {
		doc := contractOf([]result.ContractRow{r})
		for _, n := range doc.names {
			if _, ok := order[n]; !ok {
				t.Errorf("contract row %q names %s, which an arm's results do not hold", r.Fields, n)
			}
		}
		for _, rg := range doc.ranges {
			for _, end := range rg {
				if _, ok := order[end]; !ok {
					t.Errorf("contract row %q: the range %s … %s ends at %s, which an arm's results do not hold", r.Fields, rg[0], rg[1], end)
				}
			}
		}
	}
}

// The forms the table's first column uses, expanded as the tests above
// read them.
func TestContractFormsExpand(t *testing.T) {
	order := resultNodes()
	doc := contractOf([]result.ContractRow{{Fields: "`db.{queries,peak_qps}`, `workers.*`, `trigger`, `http.p50_ms` … `http.p99_ms`, `escape.steps[]` (a file's `requests:`)"}})
	for p, want := range map[string]bool{
		"db.queries": true, "db.peak_qps": true, "db.queries_total": false, // braces: each name, exactly
		"workers.count": true, "trigger.detail": true, // a wildcard, or a bare name: everything under it
		"http.p50_ms": true, "http.p90_ms": true, "http.p99_ms": true, // a range: in the results' order
		"http.p999_ms": false, "http.max_ms": false, "http.ok": false,
		"escape.steps": true, "requests:": false, // an array by its name; what is in brackets names nothing
	} {
		if got := doc.covers(p, order); got != want {
			t.Errorf("%s documented: %v; want %v", p, got, want)
		}
	}
}

// contractNames are the names the rows' first column gives, as code
// spans outside brackets, in the forms contractRow describes.
type contractNames struct {
	names  []string    // each covers itself and what is under it
	ranges [][2]string // each covers its ends and what lies between
}

var (
	rangeForm = regexp.MustCompile("`([^`]+)` … `([^`]+)`")
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	braces    = regexp.MustCompile(`^(.*)\{([^}]*)\}(.*)$`)
	bracketed = regexp.MustCompile(`\([^)]*\)`)
)

// contractOf reads the names of rows' first cells.
func contractOf(rows []result.ContractRow) contractNames {
	var c contractNames
	for _, r := range rows {
		cell := bracketed.ReplaceAllString(r.Fields, "")
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
				c.names = append(c.names, strings.TrimSuffix(strings.TrimSuffix(n, ".*"), "[]"))
			}
		}
	}
	return c
}

// covers says whether path is named, order being where each field comes
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

var (
	rawType  = reflect.TypeFor[json.RawMessage]()
	jsonType = reflect.TypeFor[json.Marshaler]()
	textType = reflect.TypeFor[encoding.TextMarshaler]()
)

// resultNodes numbers every field of an arm's results by its path, in
// the order the results print them, from the Go types: objects, arrays,
// words and numbers; a map's values under NAME; every trigger's detail
// under trigger.detail.
func resultNodes() map[string]int {
	order := map[string]int{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		if _, ok := order[path]; !ok && path != "" {
			order[path] = len(order)
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == reflect.TypeFor[result.Counters]() { // a subject's, as its kind declared them
			for _, n := range result.DeclaredCounters() {
				order[path+"."+n] = len(order)
			}
			return
		}
		spliced := t == reflect.TypeFor[result.Loop]() || t == reflect.TypeFor[result.Row]() // its subject's counters among its fields
		if t == rawType || !spliced && reflect.PointerTo(t).Implements(jsonType) || reflect.PointerTo(t).Implements(textType) {
			return // a word of its own, or the subject's config
		}
		switch t.Kind() {
		case reflect.Map:
			walk(t.Elem(), path+".NAME")
		case reflect.Interface:
			for _, tr := range triggers.Default().Triggers() {
				walk(reflect.TypeOf(tr.Detail()), path)
			}
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				tag, hasTag := f.Tag.Lookup("json")
				name, _, _ := strings.Cut(tag, ",")
				switch {
				case spliced && f.Name == "Counts": // as its kind declared them (DeclareRowCounters)
					for _, c := range result.DeclaredRowCounters() {
						if f.Type.Elem().Kind() == reflect.Pointer {
							walk(f.Type.Elem(), path+"."+c.Name+"_rps")
						} else {
							order[path+"."+c.Name] = len(order)
						}
					}
				case !f.IsExported() || name == "-":
				case f.Anonymous && name == "":
					walk(f.Type, path)
				default:
					if !hasTag || name == "" {
						name = f.Name
					}
					walk(f.Type, figure.Join(path, name))
				}
			}
		}
	}
	walk(reflect.TypeFor[result.ArmResult](), "")
	return order
}
