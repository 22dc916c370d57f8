package result

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// RowWidth is the timeline's resolution.
const RowWidth = 100 * time.Millisecond

// Latencies are recorded in microseconds, up to a minute.
const MaxLatencyUS = int64(time.Minute / time.Microsecond)

// NewHist is a latency histogram in microseconds, up to MaxLatencyUS,
// at sigfigs significant digits.
func NewHist(sigfigs int) *hdrhistogram.Histogram {
	return hdrhistogram.New(1, MaxLatencyUS, sigfigs)
}

// RowIndex is the timeline row of an instant: floor((at - T) / RowWidth).
func RowIndex(at, t time.Time) int64 {
	return int64(math.Floor(float64(at.Sub(t)) / float64(RowWidth)))
}

// LagShare is the generator's lag p99 (load.lag_p99_ms, from T - before)
// over the arm's p99 (http.p99_ms, from T); 0 without a p99.
func (a ArmResult) LagShare() float64 {
	if a.HTTP.P99MS <= 0 {
		return 0
	}
	return a.Load.LagP99MS / a.HTTP.P99MS
}

// Millis is us microseconds in milliseconds, to two decimals.
func Millis(us int64) float64 { return math.Round(float64(us)/10) / 100 }

// Round2 is v to two decimals, as the results print it.
func Round2(v float64) float64 { return math.Round(v*100) / 100 }

// Round4 is v to four decimals, as the results give ratios.
func Round4(v float64) float64 { return math.Round(v*10000) / 10000 }

// DrainedOrNot notes a drain that gave up: the arm is measured all the
// same, and what still ran may land in the next arm.
func (res *ArmResult) DrainedOrNot(err error) {
	if err != nil {
		res.Timing.DrainTimedOut = true
		res.Warnings = append(res.Warnings, err.Error())
	}
}
