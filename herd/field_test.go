package herd

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A problem of two fields is told as the one the user set; given both or
// neither, as it was found.
func TestBlameTellsTheFieldTheUserSet(t *testing.T) {
	problem := &FieldError{Field: "stale_ttl", Msg: "10m0s is not longer than ttl, 1h0m0s",
		Other: &FieldError{Field: "ttl", Msg: "1h0m0s is not shorter than stale_ttl's default, 10m0s"}}
	alone := &FieldError{Field: "rate", Msg: "0 out of range"}
	for _, tt := range []struct {
		set  []string
		want string
	}{
		{[]string{"ttl"}, "ttl"},
		{[]string{"stale_ttl"}, "stale_ttl"},
		{[]string{"ttl", "stale_ttl"}, "stale_ttl"},
		{nil, "stale_ttl"},
	} {
		got := FieldErrors{alone, problem}.Blame(func(f string) bool { return slices.Contains(tt.set, f) })
		if len(got) != 2 || got[0] != alone || got[1].Field != tt.want {
			t.Errorf("Blame(set %v) = %v; want rate's problem as it is, then %s's", tt.set, got, tt.want)
		}
	}
}

// A file that cannot be read is the file's problem, naming why and what
// is accepted, without the path twice.
func TestReadFileNamesTheFileAndWhatIsAccepted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.yaml")
	_, err := ReadFile(path, "a scenario file")
	fe, ok := err.(*FieldError)
	if want := path + ": no such file or directory (accepted: a scenario file)"; !ok || fe.File != path || err.Error() != want {
		t.Errorf("ReadFile(missing) = %v; want a FieldError %q", err, want)
	}
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(path, "a scenario file"); err != nil || string(b) != "x" {
		t.Errorf("ReadFile = %q, %v; want its content", b, err)
	}
}

func TestFirstPerFieldDropsFollowOns(t *testing.T) {
	fe := FieldErrors{
		{File: "t.yaml", Line: 9, Field: "plan.rate", Msg: "100000 out of range"},
		{Msg: "no field: kept"},
		{File: "t.yaml", Line: 9, Field: "plan.rate", Msg: "over the target's cap"},
		{Field: "gates", Elem: "a < 1", Msg: "first gate"},
		{Field: "gates", Elem: "b < 1", Msg: "second gate, another element"},
		{Msg: "no field: kept"},
	}
	got := fe.FirstPerField().Error()
	want := "t.yaml:9: plan.rate: 100000 out of range\nno field: kept\ngates: \"a < 1\": first gate\ngates: \"b < 1\": second gate, another element\nno field: kept"
	if got != want {
		t.Errorf("FirstPerField() = %q; want %q", got, want)
	}
}

func TestParseCountReadsAsAFlagDoes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{{"500", 500, true}, {"1k", 1000, true}, {"1.5k", 1500, true}, {"2K", 2000, true}, {"-5", -5, true},
		{"1.5", 0, false}, {"1.2345k", 0, false}, {"+5", 0, false}, {"k", 0, false}, {"", 0, false}, {"1.", 0, false}} {
		got, err := ParseCount(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseCount(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
