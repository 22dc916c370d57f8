package edge

import (
	"strings"
	"testing"

	"github.com/herdbench/herdbench/herd"
)

// A patch reads every key in the flags' forms, and an error says the value
// is the edge's (not the clients') and what is accepted.
func TestPatchSet(t *testing.T) {
	tests := []struct {
		key, v  string
		want    string // the patched config's String
		wantErr string
	}{
		{key: "retry", v: "immediate:2", want: "timeout 1s, retry immediate:2"},
		{key: "retry_budget", v: "10%", want: "timeout 1s, retry none, budget 10%"},
		{key: "breaker", v: "5:2s", want: "timeout 1s, retry none, breaker 5:2s"},
		{key: "deadline", v: "400ms", want: "timeout 1s, retry none, deadline 400ms"},
		{key: "breaker", v: "5", wantErr: `edge breaker "5": want two parts separated by ':' (accepted: none, or FAILURES:OPEN`},
		{key: "retry", v: "linear:1s", wantErr: `edge retry policy "linear:1s": unknown kind "linear" (accepted: none, immediate:N`},
		{key: "retry_budget", v: "lots", wantErr: `edge retry budget "lots": unknown form (accepted: none, a ratio such as 10%`},
		{key: "bulkhead", v: "x", wantErr: `edge bulkhead "x": not a whole number (accepted: 0, unbounded`},
		{key: "timeout", v: "soon", wantErr: `edge timeout "soon": not a duration (accepted:`},
		{key: "hedge", v: "50ms", wantErr: `edge policy key "hedge": unknown (accepted: timeout, retry, retry_budget, breaker, bulkhead, deadline)`},
	}
	for _, tt := range tests {
		var p Patch
		err := p.Set(tt.key, tt.v)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "client") {
				t.Errorf("Set(%q, %q) = %v; want an error containing %q", tt.key, tt.v, err, tt.wantErr)
			}
			if p != (Patch{}) {
				t.Errorf("Set(%q, %q) failed and left %+v; want the patch as it was", tt.key, tt.v, p)
			}
		case err != nil:
			t.Errorf("Set(%q, %q) = %v; want no error", tt.key, tt.v, err)
		default:
			if got := p.On(Config{Timeout: herd.Duration(DefaultTimeout)}).String(); got != tt.want {
				t.Errorf("Set(%q, %q) then On = %q; want %q", tt.key, tt.v, got, tt.want)
			}
		}
	}
}
