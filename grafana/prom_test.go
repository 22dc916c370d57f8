package grafana

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What the live tests read of a target's /metrics and of Prometheus' API.

// sampleNames returns the names of the samples in a Prometheus text
// exposition, as queries name them (histograms' _bucket, _sum, _count).
func sampleNames(r io.Reader) map[string]bool {
	names := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}

func scrapeNames(url string) (map[string]bool, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return sampleNames(resp.Body), nil
}

// promAPI calls Prometheus' HTTP API and decodes its data.
func promAPI(base, path string, params url.Values, data any) error {
	resp, err := http.Get(base + path + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s: %s", path, body.Error)
	}
	return json.Unmarshal(body.Data, data)
}

// series is one series of a query result, instant or range.
type series struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
	Values [][]any           `json:"values"`
}

// finite returns the series' values that are numbers.
func (s series) finite() []float64 {
	var out []float64
	for _, v := range append(s.Values, s.Value) {
		if len(v) != 2 {
			continue
		}
		str, _ := v[1].(string)
		if f, err := strconv.ParseFloat(str, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			out = append(out, f)
		}
	}
	return out
}

// rangeValues runs expr over [start, end] and returns each series'
// distinct finite values, by its labels' values joined with a space.
func rangeValues(t *testing.T, prom, expr string, start, end time.Time, labels ...string) map[string][]float64 {
	t.Helper()
	var res struct {
		Result []series `json:"result"`
	}
	if err := promAPI(prom, "/api/v1/query_range", url.Values{"query": {expr}, "start": {ts(start)}, "end": {ts(end)}, "step": {"1"}}, &res); err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	out := map[string][]float64{}
	for _, s := range res.Result {
		var key []string
		for _, l := range labels {
			key = append(key, s.Metric[l])
		}
		k := strings.Join(key, " ")
		for _, v := range s.finite() {
			if !slices.Contains(out[k], v) {
				out[k] = append(out[k], v)
			}
		}
	}
	return out
}

func ts(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64) }
