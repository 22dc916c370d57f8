package admin

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Metrics are one scrape of /metrics in the Prometheus text format
// (version 0.0.4, what promhttp serves a client that asks for no other):
// every sample by its name, and every family's type from its TYPE line.
type Metrics struct {
	samples map[string][]Sample
	types   map[string]string // family name -> counter, gauge, histogram, summary or untyped
}

// Sample is one line of a scrape: its labels and its value.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// ParseMetrics reads a scrape in the text format.
func ParseMetrics(r io.Reader) (Metrics, error) {
	m := Metrics{samples: map[string][]Sample{}, types: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "#"); ok {
			if f := strings.Fields(rest); len(f) == 3 && f[0] == "TYPE" {
				m.types[f[1]] = f[2]
			}
			continue
		}
		name, s, err := parseSample(line)
		if err != nil {
			return Metrics{}, fmt.Errorf("line %d: %w", n, err)
		}
		m.samples[name] = append(m.samples[name], s)
	}
	return m, sc.Err()
}

// parseSample reads one sample line: name{label="value",...} value [timestamp].
func parseSample(line string) (string, Sample, error) {
	end := strings.IndexAny(line, "{ \t")
	if end <= 0 {
		return "", Sample{}, fmt.Errorf("%q: no value", line)
	}
	name, rest := line[:end], line[end:]
	s := Sample{Labels: map[string]string{}}
	if strings.HasPrefix(rest, "{") {
		var err error
		if rest, err = parseLabels(rest[1:], s.Labels); err != nil {
			return "", Sample{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	f := strings.Fields(rest)
	if len(f) < 1 || len(f) > 2 {
		return "", Sample{}, fmt.Errorf("%s: %q is not a value and an optional timestamp", name, strings.TrimSpace(rest))
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return "", Sample{}, fmt.Errorf("%s: value %q: %w", name, f[0], err)
	}
	s.Value = v
	return name, s, nil
}

// parseLabels reads label="value" pairs up to the closing brace into
// labels, and returns what follows it.
func parseLabels(s string, labels map[string]string) (string, error) {
	for {
		s = strings.TrimLeft(s, " \t")
		if rest, ok := strings.CutPrefix(s, "}"); ok {
			return rest, nil
		}
		name, rest, ok := strings.Cut(s, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || !strings.HasPrefix(strings.TrimLeft(rest, " \t"), `"`) {
			return "", errors.New("labels: want name=\"value\"")
		}
		value, rest, err := unquote(strings.TrimLeft(rest, " \t")[1:])
		if err != nil {
			return "", fmt.Errorf("label %s: %w", name, err)
		}
		if _, dup := labels[name]; !dup { // the first of a name decides, as a label lookup reads it
			labels[name] = value
		}
		s = strings.TrimLeft(rest, " \t")
		s = strings.TrimPrefix(s, ",")
	}
}

// unquote reads a label value after its opening quote, with the text
// format's escapes (\\, \" and \n), and returns what follows its closing
// quote.
func unquote(s string) (string, string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			if i+1 == len(s) {
				return "", "", errors.New("unterminated value")
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case '\\', '"':
				b.WriteByte(s[i])
			default:
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("unterminated value")
}

// Sum is a counter's or a gauge's value summed over its series, those
// whose labels include every pair of match ("outcome", "ok") when given.
// A family of another type, or none, sums to 0.
func (m Metrics) Sum(name string, match ...string) int64 {
	if t := m.types[name]; t != "counter" && t != "gauge" {
		return 0
	}
	var sum float64
next:
	for _, s := range m.samples[name] {
		for i := 0; i+1 < len(match); i += 2 {
			if v, ok := s.Labels[match[i]]; !ok || v != match[i+1] {
				continue next
			}
		}
		sum += s.Value
	}
	return int64(sum)
}

// Histogram is the histogram name summed over its series: how many
// observations it holds, and its cumulative count at each bucket's upper
// bound (+Inf included).
func (m Metrics) Histogram(name string) (count uint64, buckets map[float64]uint64) {
	buckets = map[float64]uint64{}
	if m.types[name] != "histogram" {
		return 0, buckets
	}
	for _, s := range m.samples[name+"_count"] {
		count += uint64(s.Value)
	}
	for _, s := range m.samples[name+"_bucket"] {
		le, err := strconv.ParseFloat(s.Labels["le"], 64)
		if err != nil {
			continue
		}
		buckets[le] += uint64(s.Value)
	}
	return count, buckets
}
