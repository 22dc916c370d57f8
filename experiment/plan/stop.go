package plan

import (
	"github.com/herdbench/herdbench/experiment/result"
)

// LivePaths are the figures a stop condition (--abort-on) may name. They
// mean what the results' fields of the same name mean, over LiveWindow
// instead of the arm; db.qps is the item queries per second over it.
var LivePaths = []string{
	"db.qps",
	"http.requests", "http.ok", "http.drop_rate", "http.p50_ms", "http.p90_ms", "http.p99_ms", "http.max_ms",
	"http.errors.timeout", "http.errors.conn", "http.errors.5xx", "http.errors.shed", "http.errors.other",
	"http.errors.throttled", "http.errors.client_breaker",
	"retries.attempts", "retries.amplification",
}

// An arm may end on its verdict: with --after auto once it has recovered
// and held (or its baseline was overloaded, which no recovery changes),
// and on a stop condition such as verdict == metastable. While the load
// runs, the arm is judged every judgeEvery by the rule the results use
// (judge), on the rows whose requests have all been answered: it is the
// verdict the arm would have if it had ended at the last of them. When the
// arm is over its load is cut (load.Cut): no request is sent after that
// instant, those in flight are answered, and the arm's after window ends
// there. Its verdict is then judged again on the whole arm.

// LiveWords are the words a stop condition may name: verdict == one of
// them ends the arm once its rows say so. Recovering is every arm's
// verdict until it is decided, so it stops none.
var LiveWords = map[string][]string{"verdict": {result.Recovered, result.Metastable, result.Overloaded}}
