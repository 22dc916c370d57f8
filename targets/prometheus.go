package targets

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/herdbench/herdbench/load"
)

// Point is one value of a series, t_ms relative to T.
type Point struct {
	TMS   int64   `json:"t_ms"`
	Value float64 `json:"value"`
}

// SeriesStep is the resolution herdbench reads a service's own metrics at.
const SeriesStep = time.Second

// Series reads the target's own Prometheus series over [from, to] through
// Prometheus' HTTP API (query_range), each summed over its labels, at
// SeriesStep, with times relative to T. A target without prometheus: has
// none. Prometheus may not have scraped the last seconds yet: series end
// where its data ends.
func (t *Target) Series(ctx context.Context, from, to, T time.Time) (map[string][]Point, error) {
	p := t.Prometheus
	if p == nil {
		return nil, nil
	}
	// Prometheus keeps milliseconds: on T's millisecond, the points fall
	// on whole seconds from it
	T = T.Round(time.Millisecond)
	from, to = T.Add(from.Sub(T).Round(SeriesStep)), T.Add(to.Sub(T).Round(SeriesStep))
	out := map[string][]Point{}
	for _, name := range slices.Sorted(maps.Keys(p.Series)) {
		points, err := t.queryRange(ctx, p.Series[name], from, to, T)
		if err != nil {
			return nil, fmt.Errorf("prometheus series %s (%s): %w", name, p.Series[name], err)
		}
		out[name] = points
	}
	return out, nil
}

// queryRange runs one range query and sums its series point by point.
func (t *Target) queryRange(ctx context.Context, query string, from, to, T time.Time) ([]Point, error) {
	q := url.Values{"query": {query}, "start": {unix(from)}, "end": {unix(to)}, "step": {strconv.FormatFloat(SeriesStep.Seconds(), 'f', -1, 64)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(t.Prometheus.URL, "/")+"/api/v1/query_range?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := load.NewClient(10*time.Second, nil).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Values [][2]any `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s: %w", resp.Status, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("%s: %s", resp.Status, body.Error)
	}
	sums := map[int64]float64{}
	for _, s := range body.Data.Result {
		for _, pair := range s.Values {
			ts, ok1 := pair[0].(float64)
			vs, ok2 := pair[1].(string)
			v, err := strconv.ParseFloat(vs, 64)
			if !ok1 || !ok2 || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			sums[int64(math.Round(ts*1000))-T.UnixMilli()] += v
		}
	}
	points := make([]Point, 0, len(sums))
	for tms, v := range sums {
		points = append(points, Point{TMS: tms, Value: v})
	}
	slices.SortFunc(points, func(a, b Point) int { return int(a.TMS - b.TMS) })
	return points, nil
}

func (c *checker) prometheus() {
	p := c.f.Prometheus
	if p == nil {
		return
	}
	if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.bad("prometheus.url", "%q is not an http URL (accepted: Prometheus' base URL, such as http://127.0.0.1:9090)", p.URL)
	}
	if len(p.Series) == 0 {
		c.bad("prometheus.series", "none (accepted: name: PromQL pairs)")
	}
	c.drainSeries(p)
	const accepted = "an expression Prometheus' query_range takes, such as sum(rate(http_requests_total[10s]))"
	for _, name := range slices.Sorted(maps.Keys(p.Series)) {
		// found now, not after the run, when the series are read
		expr, err := parser.NewParser(parser.Options{}).ParseExpr(p.Series[name])
		if err != nil {
			c.bad("prometheus.series."+name, "%q is not PromQL: %v (accepted: %s)", p.Series[name], err, accepted)
			continue
		}
		// query_range takes an instant vector or a scalar, nothing else
		if typ := expr.Type(); typ != parser.ValueTypeVector && typ != parser.ValueTypeScalar {
			c.bad("prometheus.series."+name, "%q is a %s, which query_range refuses (accepted: %s: an instant vector or a scalar)", p.Series[name], typeWord[typ], accepted)
		}
	}
}

// drainSeries refuses a prometheus.drain entry that names no declared
// series, or one named twice.
func (c *checker) drainSeries(p *PrometheusSpec) {
	if p.Drain != nil && len(p.Drain) == 0 {
		c.bad("prometheus.drain", "empty (accepted: names of prometheus.series, %s; or leave the key out, for no series waited on)", strings.Join(slices.Sorted(maps.Keys(p.Series)), ", "))
	}
	for i, name := range p.Drain {
		switch {
		case p.Series[name] == "":
			c.bad(fmt.Sprintf("prometheus.drain[%d]", i), "%q is not a series of prometheus.series (accepted: %s)", name, strings.Join(slices.Sorted(maps.Keys(p.Series)), ", "))
		case slices.Index(p.Drain, name) < i:
			c.bad(fmt.Sprintf("prometheus.drain[%d]", i), "%q is named twice (accepted: each series once)", name)
		}
	}
}

// Instant is the value of each of the series the drain waits on
// (prometheus.drain) now, each summed over its labels, by name; nil
// without any. A series Prometheus has no point of now reads 0.
func (t *Target) Instant(ctx context.Context) (map[string]float64, error) {
	p := t.Prometheus
	if p == nil || len(p.Drain) == 0 {
		return nil, nil
	}
	out := map[string]float64{}
	for _, name := range p.Drain {
		q := url.Values{"query": {p.Series[name]}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(p.URL, "/")+"/api/v1/query?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		v, err := instant(req)
		if err != nil {
			return nil, fmt.Errorf("prometheus series %s (%s): %w", name, p.Series[name], err)
		}
		out[name] = v
	}
	return out, nil
}

// instant runs one instant query and sums its vector (or reads its scalar).
func instant(req *http.Request) (float64, error) {
	resp, err := load.NewClient(2*time.Second, nil).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, fmt.Errorf("%s: %w", resp.Status, err)
	}
	if body.Status != "success" {
		return 0, fmt.Errorf("%s: %s", resp.Status, body.Error)
	}
	var pairs [][2]any
	if body.Data.ResultType == "scalar" {
		var one [2]any
		if err := json.Unmarshal(body.Data.Result, &one); err != nil {
			return 0, err
		}
		pairs = append(pairs, one)
	} else {
		var vec []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(body.Data.Result, &vec); err != nil {
			return 0, err
		}
		for _, s := range vec {
			pairs = append(pairs, s.Value)
		}
	}
	var sum float64
	for _, pair := range pairs {
		vs, _ := pair[1].(string)
		if v, err := strconv.ParseFloat(vs, 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			sum += v
		}
	}
	return sum, nil
}

// typeWord names a PromQL type query_range refuses.
var typeWord = map[parser.ValueType]string{parser.ValueTypeMatrix: "range vector", parser.ValueTypeString: "string", parser.ValueTypeNone: "expression of no type"}

func unix(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64) }
