package result

// EscapeResult is what stepping a stuck arm's load down found: the
// results' escape, on every arm of a plan with --escape.
type EscapeResult struct {
	FromRPS float64 `json:"from_rps"` // the rate that tipped it: the arm's
	// StartMS is when the first step began, from T; null: the arm was
	// never judged metastable, and its load never stepped
	StartMS *int64 `json:"start_ms"`
	// RPS is the highest stepped rate at which the service came back (the
	// first step that read recovered); null when none did
	RPS *float64 `json:"rps"`
	// Share is RPS over FromRPS, a ratio: how far the load had to fall
	// below the rate that tipped it; null when none came back
	Share *float64     `json:"share"`
	Steps []EscapeStep `json:"steps"`
}

// EscapeStep is one step of the escape and what it read, from the
// timeline's rows of [StartMS, JudgedToMS).
type EscapeStep struct {
	Share   float64 `json:"share"`    // of from_rps
	RPS     float64 `json:"rps"`      // the rate the schedule stepped to
	StartMS int64   `json:"start_ms"` // from T: the instant the schedule stepped to it
	EndMS   int64   `json:"end_ms"`   // the next step's start, or the end of the arm's load
	// JudgedToMS is the end of the rows it was judged on: its start plus
	// the step limit, or less where it came back (or the load ended) first
	JudgedToMS  int64   `json:"judged_to_ms"`
	OfferedRPS  float64 `json:"offered_rps"`  // the requests intended in those rows, a second
	GoodputRPS  float64 `json:"goodput_rps"`  // their ok answers, a second
	AttemptsRPS float64 `json:"attempts_rps"` // attempts sent in those rows, a second, retries included
	DBQPS       float64 `json:"db_qps"`       // item queries a second
	// Read is recovered (a hold of its rows back in its band), stuck (its
	// limit passed without one) or unfinished (the arm's after window
	// ended first)
	Read string `json:"read"`
	// RecoveryMS is from the step's start to the first row of the hold
	// back in band; null unless recovered
	RecoveryMS *int64 `json:"recovery_ms"`
}

// What a step read.
const (
	StepRecovered  = "recovered"
	StepStuck      = "stuck"
	StepUnfinished = "unfinished"
)

// EscapeFound sets r's escape load: the first step that read recovered,
// the highest rate stepped to.
func (r *EscapeResult) EscapeFound() {
	r.RPS, r.Share = nil, nil
	for _, s := range r.Steps {
		if s.Read == StepRecovered {
			rps, share := s.RPS, Round4(s.RPS/r.FromRPS)
			r.RPS, r.Share = &rps, &share
			return
		}
	}
}
