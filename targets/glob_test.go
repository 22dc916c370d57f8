package targets

import "testing"

func TestGlobRegexp(t *testing.T) {
	for _, tt := range []struct {
		glob, key string
		want      bool
	}{
		{"product:*", "product:1", true},
		{"product:*", "item:1", false},
		{"item:?", "item:1", true},
		{"item:?", "item:12", false},
		{"item:[0-9]*", "item:42", true},
		{"item:[^0-9]*", "item:42", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{"cache.v1:*", "cachexv1:1", false},
	} {
		re, err := globRegexp(tt.glob)
		if err != nil {
			t.Fatalf("globRegexp(%q) = %v", tt.glob, err)
		}
		if got := re.MatchString(tt.key); got != tt.want {
			t.Errorf("glob %q matches %q = %v; want %v", tt.glob, tt.key, got, tt.want)
		}
	}
}
