package replica

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
)

func TestParseStrategy(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "none", want: []string{None}},
		{in: "singleflight", want: []string{Singleflight}},
		{in: "lock", want: []string{Lock}},
		{in: "xfetch", want: []string{XFetch}},
		{in: "ttl_jitter", want: []string{TTLJitter}},
		{in: "lock+ttl_jitter", want: []string{Lock, TTLJitter}},
		{in: "ttl_jitter+xfetch", want: []string{XFetch, TTLJitter}},
		{in: "", wantErr: "strategy: empty"},
		{in: "bogus", wantErr: `unknown "bogus" (accepted: none, singleflight, lock, xfetch, swr, lease, early, ttl_jitter, local`},
		{in: "local+lock", want: []string{Lock, Local}},
		{in: "swr+lease", wantErr: "combines swr and lease; at most one of singleflight, lock, xfetch, swr, lease, early may be used"},
		{in: "lock+xfetch", wantErr: "combines lock and xfetch"},
		{in: "none+ttl_jitter", wantErr: "none cannot be combined"},
		{in: "lock+", wantErr: `unknown ""`},
		{in: "shed", want: []string{Shed}},
		{in: "lock+shed_priority", want: []string{Lock, ShedPriority}},
		{in: "shed+shed_priority", wantErr: "combines shed and shed_priority; use one of them"},
	}
	reg := DefaultMitigations()
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := reg.Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v; want it to contain %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("Parse(%q) = %v, %v; want %v, nil", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig.Validate(); err != nil {
		t.Fatalf("DefaultConfig.Validate() = %v; want nil", err)
	}
	bad := DefaultConfig
	bad.Strategy = "lock+nope"
	for knob, v := range map[string]string{"ttl_jitter": "1.5", "xfetch_beta": "0", "lock_poll": "0s", "shed_max_limit": "0", "shed_initial_limit": "20"} {
		k, _ := KnobNamed(knob)
		if err := k.Value(&bad).Set(v); err != nil {
			t.Fatal(err)
		}
	}
	bad.StaleTTL = bad.TTL
	bad.QueryCost = herd.Duration(2 * time.Minute)
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate() of a config with seven problems = nil")
	}
	// every problem is reported at once, each naming its field
	for _, field := range []string{"strategy:", "ttl_jitter:", "xfetch_beta:", "stale_ttl:", "lock_poll:", "query_cost:",
		"shed_max_limit:"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("Validate() = %q; want a problem naming %s", err, field)
		}
	}
	// but not the initial limit within a range that is none: the range's problem
	if strings.Contains(err.Error(), "shed_initial_limit:") {
		t.Errorf("Validate() = %q; want no shed_initial_limit problem beside shed_max_limit's", err)
	}
}

func TestDurationJSON(t *testing.T) {
	var c Config
	if err := json.Unmarshal([]byte(`{"ttl":"1m30s"}`), &c); err != nil || c.TTL != herd.Duration(90*time.Second) {
		t.Fatalf(`Unmarshal({"ttl":"1m30s"}) = %v, %v; want 1m30s`, c.TTL, err)
	}
	for _, in := range []string{`{"ttl":"soon"}`, `{"ttl":60}`} {
		if err := json.Unmarshal([]byte(in), &c); err == nil || !strings.Contains(err.Error(), "500ms") {
			t.Errorf("Unmarshal(%s) error = %v; want one showing an example duration", in, err)
		}
	}
	b, _ := json.Marshal(Config{TTL: herd.Duration(50 * time.Millisecond)})
	if !strings.Contains(string(b), `"ttl":"50ms"`) {
		t.Errorf("Marshal = %s; want ttl as \"50ms\"", b)
	}
}

// db_retry travels as the clients' short form, and a bad one is refused
// naming the field and the accepted forms.
func TestDBRetryJSON(t *testing.T) {
	var c Config
	if err := json.Unmarshal([]byte(`{"db_retry":"exp:50ms:500ms:3"}`), &c); err != nil || c.DBRetry.String() != "exp:50ms:500ms:3" {
		t.Fatalf(`Unmarshal({"db_retry":"exp:50ms:500ms:3"}) = %v, %v; want the policy`, c.DBRetry, err)
	}
	err := json.Unmarshal([]byte(`{"db_retry":"exp:1"}`), &c)
	if err == nil || !strings.Contains(err.Error(), "db_retry: ") || !strings.Contains(err.Error(), "accepted: none, immediate:N") {
		t.Errorf(`Unmarshal({"db_retry":"exp:1"}) error = %v; want one naming db_retry and the accepted forms`, err)
	}
	if b, _ := json.Marshal(DefaultConfig); !strings.Contains(string(b), `"db_retry":"none"`) {
		t.Errorf("Marshal(DefaultConfig) = %s; want db_retry none", b)
	}
}

// Every float knob refuses NaN and the infinities, which strconv reads and
// encoding/json cannot write: Problems names the knob, so no patch of one
// is ever marshalled.
func TestFloatKnobsAreFinite(t *testing.T) {
	for _, k := range Knobs() {
		if k.Type() != "float64" {
			continue
		}
		for _, v := range []string{"NaN", "+Inf", "-Inf"} {
			c := DefaultConfig
			if err := k.Value(&c).Set(v); err != nil {
				t.Fatalf("%s: Set(%q) = %v", k.Name, v, err)
			}
			if !slices.ContainsFunc(c.Problems(), func(e *herd.FieldError) bool { return e.Field == k.Name }) {
				t.Errorf("%s = %s: Problems() = %v; want a problem with %s", k.Name, v, c.Problems(), k.Name)
			}
		}
	}
}
