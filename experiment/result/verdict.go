package result

// An arm's verdict: did the service come back once its trigger was over,
// is it still on its way, or is it stuck? The rule is docs/stampede.md's
// "The verdict"; TestVerdictRule pins it on synthetic timelines.
const (
	// Recovered: from a row at or after the trigger's end to the arm's
	// end, the requests of every RecoveryHold of rows together were back
	// within the band of the before window's: their DB q/s, p99 and
	// goodput. A return that did not hold to the end is a relapse
	Recovered = "recovered"
	// Relapsed: back within the band for a hold after the trigger's end,
	// then out of it again, and out of it at the arm's end, stuck there or
	// not: the return did not hold (relapse_from_t_ms says when it ended;
	// depth and trend how the arm stood at its end)
	Relapsed = "relapsed"
	// Metastable: not relapsed, the trigger had been over for the arm's
	// settle time, and the last RecoveryHold was out of band while the
	// service was offered at least the baseline's work, with no trend
	// back over the last TrendSpan (the fitted goodput rose by less than
	// TrendTolerance of the baseline's)
	Metastable = "metastable"
	// Recovering: out of band at the end of the arm (or its stop), not
	// relapsed and not stuck: trending back, still within its settle
	// time, or offered less than the baseline's work
	Recovering = "recovering"
	// Overloaded: the before window was out of band itself (its goodput
	// under GoodputBand of what was offered): the run measured an
	// overload, not a herd
	Overloaded = "overloaded"
	// Degraded is herdbench.results/v1's word for an arm none of the
	// others described; v2 calls such an arm recovering or metastable. A
	// v1 results file reads back with it (SchemaV1), no run gives it
	Degraded = "degraded"
)

// Verdicts lists the words a run gives, for gates and docs.
var Verdicts = []string{Recovered, Relapsed, Metastable, Overloaded, Recovering}
