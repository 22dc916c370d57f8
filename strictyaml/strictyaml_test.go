package strictyaml

import (
	"strings"
	"testing"
)

type inner struct {
	N int `yaml:"n"`
}

type doc struct {
	Name    string            `yaml:"name"`
	Inner   inner             `yaml:"inner"`
	List    []inner           `yaml:"list"`
	Headers map[string]string `yaml:"headers"`
	ByName  map[string]inner  `yaml:"by_name"`
}

func TestDecode(t *testing.T) {
	in := `name: x
inner: {n: 1, m: 2}
list:
  - n: 3
  - n: three
headers: {A: b}
by_name:
  one: {n: 1, o: 2}
extra: 1
`
	var v doc
	d, err := Decode([]byte(in), "f.yaml", "doc", &v)
	if err == nil {
		t.Fatal("Decode = nil; want four problems")
	}
	want := []string{
		`f.yaml:2: inner.m: unknown key "m" (accepted: n)`,
		"f.yaml:5: list[1].n: the string `three` where a whole number is expected (accepted: a whole number)",
		`f.yaml:8: by_name.one.o: unknown key "o" (accepted: n)`,
		`f.yaml:9: extra: unknown key "extra" (accepted: by_name, headers, inner, list, name)`,
	}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Decode error:\n%s\nwant, in file order:\n%s", err, strings.Join(want, "\n"))
	}
	// what decoded is kept, and where each key is
	if v.Name != "x" || v.Headers["A"] != "b" || v.List[0].N != 3 {
		t.Errorf("decoded %+v; want the values that were right", v)
	}
	if d.Line("list[1].n") != 5 || d.Line("by_name.one") != 8 || !d.Bad("list[1].n") || d.Bad("name") {
		t.Errorf("lines: list[1].n %d, by_name.one %d, bad %v/%v; want 5, 8, true/false", d.Line("list[1].n"), d.Line("by_name.one"), d.Bad("list[1].n"), d.Bad("name"))
	}
	if d.At("inner.n") != "f.yaml:2: inner.n" {
		t.Errorf("At = %q", d.At("inner.n"))
	}
}

func TestDecodeRejectsBrokenYAML(t *testing.T) {
	var v doc
	if _, err := Decode([]byte("name: [x"), "b.yaml", "doc", &v); err == nil || err.Error() != "b.yaml:1: not YAML: did not find expected ',' or ']' (accepted: a doc file in YAML, docs/docs.md)" {
		t.Errorf("Decode of broken YAML = %v; want an error naming the file", err)
	}
}

// A whole number that is not finite is named so, not as a number of the
// wrong kind.
func TestDecodeNamesANonFiniteWholeNumber(t *testing.T) {
	for _, in := range []string{".inf", "+.Inf", ".nan"} {
		var v doc
		_, err := Decode([]byte("inner: {n: "+in+"}\n"), "f.yaml", "doc", &v)
		want := "f.yaml:1: inner.n: " + in + " is not a finite number (accepted: a whole number, such as 100)"
		if err == nil || err.Error() != want {
			t.Errorf("Decode of n: %s = %v; want %q", in, err, want)
		}
	}
}

// A whole-number field refuses what yaml.v3 would truncate without a word
// (-.inf or -1e300 to the least int64, 9.7 to 9), and names what it is.
func TestDecodeRefusesWhatAWholeNumberWouldTruncate(t *testing.T) {
	for in, want := range map[string]string{
		"-.inf":  "-.inf is not a finite number (accepted: a whole number, such as 100)",
		"-.Inf":  "-.Inf is not a finite number (accepted: a whole number, such as 100)",
		"9.7":    "9.7 is not a whole number (accepted: a whole number, such as 100)",
		"-1e300": "-1e300 out of range (accepted: a whole number, such as 100)",
		"1e300":  "1e300 out of range (accepted: a whole number, such as 100)",
	} {
		var v doc
		d, err := Decode([]byte("list:\n  - n: "+in+"\n"), "f.yaml", "doc", &v)
		if want = "f.yaml:2: list[0].n: " + want; err == nil || err.Error() != want || !d.Failed() || !d.Bad("list[0].n") {
			t.Errorf("Decode of n: %s = %v (failed %v); want %q, failed", in, err, d != nil && d.Failed(), want)
		}
	}
	var v doc
	if _, err := Decode([]byte("inner: {n: 3.0}\n"), "f.yaml", "doc", &v); err != nil || v.Inner.N != 3 {
		t.Errorf("Decode of n: 3.0 = %v, n %d; want 3, no error", err, v.Inner.N)
	}
}
