package result

import (
	"slices"
	"strings"
)

// The results contract's table of an arm's figures: docs/stampede.md,
// "The results contract", "Per arm", is rendered from contract
// (contractTable; go test ./experiment -run Contract -update rewrites
// it), and a test fails when a figure an arm's results hold has no row,
// or a row names nothing the results hold.

// ContractRow is one row of the table: the figures it names, where
// they come from and over which window. Fields names them as code spans
// in the forms contract_test.go expands: a path (db.queries), a path
// with braces (writes.lag.{count,p50_ms}), a wildcard or a bare name for
// everything under it (windows.*, trigger), a map's key as NAME
// (requests.NAME.*), and a range in the order the results print them
// (http.p50_ms … http.max_ms).
type ContractRow struct {
	Fields, Source, Window string
}

// ContractRows are the table's rows, in the doc's order: a subject's
// counters' rows, as its kind declared them (DeclareCounters), stand
// between the generator's and the layers'.
func ContractRows() []ContractRow {
	declared.Lock()
	defer declared.Unlock()
	return slices.Concat(contractHead, declared.rows, contractTail)
}

// contractHead are the rows before the subject's counters'.
var contractHead = []ContractRow{
	{"`config`",
		"the testbed replicas' own answer to the arm's `PUT /admin/config`: the config they ran in the arm, the knobs the arm did not set as the testbed was started (tested against pg_stat_statements' mean time of the item query)",
		"the arm"},
	{"`db.queries`",
		"pg_stat_statements `calls` of the item query by the app role, delta; on a target file's `mysql:`, `COUNT_STAR` of the selected digests in `performance_schema.events_statements_summary_by_digest` (every user's: the table has no user column), delta",
		"T to end"},
	{"`db.queries_total`",
		"same",
		"load start to end"},
	{"`db.drain_queries`, `db.drain_share`",
		"same, from a read at the load's end (its last request answered or timed out) to the last snapshot after the drain (`timing.drain_ms`): the statements a service completed for clients that had already gone, which `db.queries` holds too; and their share of `db.queries`. Absent when the drain added none (tested against MariaDB's own `COUNT_STAR` read at the load's end)",
		"the drain"},
	{"`db.peak_qps`",
		"same, sampled every 100 ms, highest rate over a 1 s sliding window",
		"load"},
	{"`db.baseline_qps`",
		"same, mean over the `before` window",
		"before T"},
	{"`db.above_baseline_ms`",
		"how long from T the database stayed above its baseline's work: the end of the last second from T (whole seconds of the timeline's rows from T; the arm's last may be shorter) whose mean `db_qps` was at least 1.25 times `db.baseline_qps` and at least 2 q/s more (a few queries a second move by one or two on their own; `result.AboveBaseline`); 0 when no second was, the whole after window when its last was. Work that stays within the verdict's band (up to 1.5 times) shows here. The table says it under the arms (tested against the rows of a real run)",
		"T to end"},
	{"`db.peak_connections`",
		"pg_stat_activity backends of the app role, highest sample; MySQL: `performance_schema.users` `CURRENT_CONNECTIONS` of `mysql.user`",
		"load"},
	{"`db.new_connections`",
		"pg_stat_activity backends of the app role with `backend_start` after T, highest sample (a backend that opened and closed between two samples is missed); MySQL: `performance_schema.users` `TOTAL_CONNECTIONS` of `mysql.user`, delta (every connection it opened, open or not)",
		"T to end"},
	{"`cache.hits`, `cache.misses`, `cache.expired`, `cache.connections_received`",
		"Redis INFO `keyspace_hits`, `keyspace_misses`, `expired_keys`, `total_connections_received`, delta; on a target file's `memcached:`, `stats` `get_hits`, `get_misses`, (none: Memcached counts no expirations, 0), `total_connections`",
		"T to end"},
	{"`cache.hit_ratio`",
		"hits / (hits + misses); null without reads",
		"T to end"},
	{"`clients`",
		"what every client of this arm ran with: `count`, `retry`, `retry_budget`, `throttle`, `hedge`, `client_breaker`, `critical` (the plan's, with the arm's own in their place; a plan's policy every arm replaces, an arm of the plan's own policies beside the arm it repeats, a hedge not below the timeout and a retry policy of 0 retries are refused before the run, exit 2)",
		"the arm"},
	{"`http.requests`, `http.ok`, `http.errors.{timeout,conn,5xx,shed,other,throttled,client_breaker,unsent,lb}`",
		"the client's results: every request the open model owed the service ends in exactly one outcome (2xx ok; no response within the timeout; connection refused, reset or closed; 5xx other than 503; 429 or 503 shed; any other status, a 3xx, or a 4xx a target file's `fail_statuses` names; refused by the client's own adaptive throttling, never sent; refused by the client's own open circuit breaker, never sent; never sent because the generator was still behind its schedule half a second (`load.LateGrace`) after the window ended); with `http.status_4xx` they add up to `requests`, which is every request intended from T, sent or not. `lb`: behind a target file's `haproxy:`, the 503s HAProxy answered itself (no server to try, or none it could connect to), taken out of `shed` (a load balancer with no server up is not the service shedding load): HAProxy's own 5xx (`lb.own_5xx`) less its servers' `eresp` (the 502 and 504 it made for a server's bad or late answer) and its backend's `eint` (its own 500s), at most the clients' shed answers; 0 without `haproxy:`. An estimate, as HAProxy does not count its answers by status: `eresp` also counts a server's abort after a 2xx, and under `retry-on` a server's 5xx that HAProxy retried into a 2xx hide as many of its own, so it may count fewer than HAProxy made, never more than the clients saw",
		"requests intended from T"},
	{"`http.critical`",
		"the requests sent with `X-Priority: critical` (`--critical`), counted apart: `requests`, `ok`, `shed`, `drop_rate`, `p99_ms`; they are also counted in the figures above; null when the plan marks none",
		"same"},
	{"`http.status_4xx`",
		"the 4xx answers but a shed status (429 unless `shed_statuses` says otherwise): the service answered that it has no such thing, or refused the request. Neither ok nor a failure: no drop, never retried, and the timeline's rows count them with `ok` as answers, so the goodput and the verdict read a service that answers 404 quickly as serving, not overloaded. A target file's `fail_statuses` names the 4xx it counts as failures: those are `errors.other` instead (docs/targets.md); a gate or stop condition on `http.status_4xx` reads the rest",
		"same"},
	{"`http.drop_rate`",
		"(requests − ok − status_4xx) / requests",
		"same"},
	{"`requests.NAME.*` (a target file's `requests:`)",
		"each request class's own figures, from the client's records of that class alone: `herd` (the class whose keys the trigger hits), `requests`, `ok`, `errors.*`, `drop_rate`, `goodput_rps` (ok a second), `p50_ms`, `p90_ms`, `p99_ms`, `max_ms` as `http.*`; `baseline_p99_ms` (the class's before window); `verdict`, `recovery_ms` and `relapse_from_t_ms` by the arm's rule (below) on the class's own rows against its own before window, on p99 and goodput (the database is the arm's); `timeline` (`t_ms`, `requests`, `ok`, `unsent`, `p99_ms` of each row). The classes add up to `http.*` (tested against the replicas' own write counter). Absent for a target of one request; `environment.requests` lists the classes in the file's order, each with its `share` of the rate and its request",
		"requests intended from T; the timeline from T − before"},
	{"`http.stale`, `http.local`",
		"ok answers that were a stale copy (`X-Cache: stale`: lock, swr) or came from a replica's in-process tier (`X-Cache: local`), counted apart so fewer DB queries never hide older answers",
		"same"},
	{"`http.p50_ms` … `http.max_ms`",
		"HDR histogram of latency from each request's **intended** send time (start + seq/rate) to the end of its response: a server stall, or a stall of the generator itself, is counted, not omitted",
		"same"},
	{"`retries.attempts`, `retries.hedges`, `retries.amplification`",
		"the client's results: every attempt sent for the requests intended from T, retries and hedged copies included (an attempt the client refused itself is not sent and not counted), the hedged copies among them, and attempts / requests sent (an unsent request met no retry policy); the servers receive exactly `attempts` requests (tested)",
		"requests intended from T"},
	{"`load.intended`, `load.sent`, `load.achieved_rate`",
		"the client's records: the requests the open model owed the service (rate × window), those that left, and `sent` per second of the window",
		"requests intended from T − before to the end"},
	{"`load.lag_p50_ms`, `load.lag_p90_ms`, `load.lag_p99_ms`",
		"HDR histogram of how late each sent request left against its intended send time (its first attempt's departure, or the client's own refusal)",
		"same"},
	{"`load.saturated`",
		"the generator, not the service, was the bottleneck: `lag_p90_ms` over 10 ms (one request in ten left more than 10 ms late), or fewer than 99% of the intended requests sent (`experiment.SaturatedLag`, `SaturatedSent`). The table then warns, naming the arm, and the figures after T count the unsent requests as dropped. A gate such as `load.lag_p99_ms < 10` fails a run whose generator was late even at its tail (on a shared machine, a moment without a core). A generator that keeps up on most requests and falls behind at T is not saturated, yet its lag is inside the p99 (latency counts from the intended send time): when `lag_p99_ms` is 10% of `http.p99_ms` or more (`experiment.MaterialLagShare`), the table marks that p99 `*` and a warning names the arm and the share",
		"same"},
}

// contractTail are the rows after the subject's counters'.
var contractTail = []ContractRow{
	{"`layers.requests`, `layers.client_attempts`",
		"a two-tier testbed only (as every `layers.*` and `edge.*`; a gate on them where there are none, a one-tier testbed or a service, is refused before the run, exit 2): the client's records, every request intended, sent or not, and every attempt sent, retries and hedges included",
		"load start to end"},
	{"`layers.edge`, `layers.edge_attempts`",
		"the edges' `herdbench_edge_requests_total` and `herdbench_edge_upstream_attempts_total`, summed (`edge.counters`)",
		"load start to end"},
	{"`layers.api`, `layers.db_attempts`",
		"the replicas' `herdbench_api_requests_total` (`api.requests`), and `herdbench_api_loads_total` + `herdbench_api_load_errors_total` (`api.loads` + `api.load_errors`), summed",
		"load start to end"},
	{"`layers.db_queries`",
		"pg_stat_statements: `db.queries_total`",
		"load start to end"},
	{"`layers.client_amplification`, `layers.edge_amplification`, `layers.api_amplification`, `layers.end_to_end`",
		"each layer's sent per received: `client_attempts` / `requests`, `edge_attempts` / `edge`, `db_attempts` / `api`, and the chain's `db_attempts` / `requests`; 0 when nothing was received (docs/reports.md, \"The layers table\")",
		"load start to end"},
	{"`lb.requests`, `lb.server_attempts`, `lb.retries`, `lb.redispatches`, `lb.own_5xx`, `lb.amplification`, `lb.queue_peak`, `lb.servers.NAME.{attempts,responses_5xx,conn_errors,downs,peak_rps,weight,queue_peak}` (a target file's `haproxy:`)",
		"HAProxy's own stats page (CSV), of the arm's backend (`lb.backend`: its target file's `arms[].backend`, or `haproxy.backend`), read at T and at the arm's end, and every 100 ms between (each read beside the stores', bounded to 250 ms; the figures are the counters' growth along the reads, a reload, `req_tot` going down, counting from zero) (the timeline's `lb_requests`, `lb_sent` and `lb_servers`): the backend's `req_tot` (requests from its frontends, once each), its servers' `stot` summed (what reached a server, retries and redispatches included), the retries HAProxy made, however they ended (its log's `%rc` summed: the servers' attempts beyond the requests that reached one, which each retry adds to, held between the backend's `wretr` + `wredis` and half of it, as an HTTP retry counts in both; tested against the log with refused connections and 500s redispatched), the backend's `wredis` (the retries sent to another server), the backend's `hrsp_5xx` less its servers' (the 5xx HAProxy made itself: 503 with no server to try, 502 or 504 for a server's bad or late answer), server attempts per request; `queue_peak`, the most requests HAProxy held queued in one reading from T (`qcur`, a gauge: the backend's plus its servers'; a queue shorter than a reading's interval may be missed; tested within HAProxy's own `qmax`); each server's `stot`, `hrsp_5xx`, `econ`, `chkdown`, its own `queue_peak`, its most attempts in any second of the timeline from T (`peak_rps`: a returning server's herd, slowstart's ramp), its `weight` and `status` at the end. The requests match the clients' own records (tested against a real HAProxy that retries). Absent without `haproxy:`; a gate on `lb.*` without it is refused before the run",
		"T to end"},
	{"`lb.servers.NAME.return.{back_ms,first_second_rps,share,full_share_ms}` (a target file's `haproxy:`; absent for a server that did not return)",
		"a server's first return from T, from the timeline's rows (`lb_weights`, `lb_servers`, `lb_sent`: HAProxy's `status`, `weight` and `stot`): `back_ms`, the start of the row of the first reading that lists it `UP` after one that did not (HAProxy's own change to UP lies in the 100 ms before that reading); `first_second_rps`, its `stot` growth in the ten rows from there (over fewer when the arm ends sooner), a second; `share`, its `uweight` (the weight it was given, which `slowstart` ramps `weight` towards; `weight` on a HAProxy without `uweight`) over the `uweight`s of the servers `UP` at the arm's end; `full_share_ms`, from `back_ms` to the start of its first whole second (ten rows, a row at a time) in which its `stot` grew by 90% or more of its share of the backend's servers' (`lb_sent`), the share over the servers `UP` at that second's last reading, null when none did before the arm's end (a gate on it then fails). A step takes its share from its first second (`full_share_ms` 0); `slowstart` takes a fraction of it then, and its share seconds later. Tested against HAProxy's stats page read apart, with and without `slowstart`. Every return from T, in order, is in the list `lb.servers.NAME.returns` (the first is `return`), each by the same rule, its full share sought to the arm's end: a server that flaps comes back more than once; a list, which no gate reads (of a repeated arm, its representative run's)",
		"T to end"},
	{"`lb.end_to_end`",
		"every layer's amplification multiplied: the clients' attempts per request (`retries.amplification`), HAProxy's server attempts per request it received (`lb.amplification`), and the database's queries per server attempt (`db.queries` over `lb.server_attempts`, left out when no database is observed)",
		"T to end"},
	{"`edge.config`",
		"the first edge's answer to `GET /admin/config` at the arm's end: the policy every edge ran (its start-up one with the arm's edge settings put on it); `bulkhead` is its one number",
		"the arm"},
	{"`edge.counters.requests`, `edge.counters.attempts`, `edge.counters.outcomes.*`",
		"the edges' `/metrics`, summed: `herdbench_edge_requests_total` (every answer), `herdbench_edge_upstream_attempts_total` (calls to the replicas, retries included), and the answers by `outcome`; reset with the replicas after the fill",
		"load start to end"},
	{"`warm.keys`, `warm.queries`, `warm.took_ms`",
		"the fill: keys loaded, pg_stat_statements delta",
		"before the load"},
	{"`timing.fill_ms`",
		"herdbench's clock around bringing the service to the arm's start: undoing the faults a killed run left, the fill (`warm.took_ms`, which it holds: tested) and the snapshots around it",
		"before the load"},
	{"`timing.drain_ms`",
		"herdbench's clock from the load's end until the drain (step 4 above) ended and the last snapshot was read",
		"after the load"},
	{"`timing.drain_timed_out`",
		"on a target, the drain gave up at its limit (`limits.max_drain`, or the longer of 15 s and the clients' whole deadline) with the arm's work still in a source it waits on (docs/targets.md, \"The drain\"): the arm is measured all the same, a warning says what still ran, and it may land in the next arm; absent when the drain ended",
		"after the load"},
	{"`timing.drain.db_ms`, `timing.drain.cache_ms`, `timing.drain.lb_ms`, `timing.drain.prometheus_ms`, `timing.drain.held_by`, `timing.drain.lb_sessions`, `timing.drain.cache_commands`",
		"on a target, each source it declares as the drain read it every 100 ms, from the drain's start to the reading from which it stayed idle (the whole drain when it gave up with that source busy): the database's statements running and completing (`pg_stat_activity`, pg_stat_statements; PROCESSLIST, the digests), the cache's commands (Redis INFO commandstats, Memcached `stats` `cmd_*`), HAProxy's `qcur` and its backend's `scur` against its level before the arm's fill, the series of `prometheus.drain` against their values then (Prometheus' instant query); `held_by` the source that waited longest; `lb_sessions` HAProxy's queued requests and its backend's sessions above that level at the drain's first reading, `cache_commands` the cache's commands from that reading to the last (both tested against HAProxy's stats page and Memcached's `stats`, read apart). Absent on the testbed and where a source is not declared",
		"after the load"},
	{"`timing.after_ms`",
		"how long the load ran after T when the arm ended on its verdict (`--after auto`, a stop condition `verdict == ...`): the instant its schedule was cut, on a row's edge, from T; absent when it ran its after window whole. The arm's after window (timeline, `windows.after`, `http.*`) ends there (tested)",
		"at the cut"},
	{"`trigger`",
		"what the trigger did (`keys`, `keys_removed`, `keys_flushed`, `restarted`, ...: its `detail`, typed per trigger, docs/triggers.md) and when it fired (`fired_at`) and when its cause was over (`ended_ms`, from T: the fault removed, the parts serving again, the burst answered; docs/triggers.md); a gate may name any number of a detail, such as `trigger.detail.lost == 0`",
		"at T"},
	{"`trigger.detail.http_cache.method`, `trigger.detail.http_cache.sent`, `trigger.detail.http_cache.statuses`, `trigger.detail.http_cache.errors`, `trigger.detail.http_cache.took_ms`, `trigger.detail.http_cache.command`",
		"with `expire` or `flush` on a target file's `http_cache`: the invalidation's method (`command` for a flush command), the requests sent (hot keys × cache nodes, or one flush per node), how many each status answered (2xx: invalidated; 404: not cached), those never answered, and from the first request to the last answer; a flush command's outcome as the command trigger's",
		"at T"},
	{"`trigger.detail.memcached.command`, `trigger.detail.memcached.sent`, `trigger.detail.memcached.found`, `trigger.detail.memcached.expires_at`, `trigger.detail.memcached.took_ms`, `trigger.detail.memcached.items_before`, `trigger.detail.memcached.items_after`",
		"with `expire`, `ttl` or `flush` on a target file's `memcached:`: the command (`delete`, `touch`, `flush_all`), how many were sent (one per hot key, or one `flush_all`), for `delete` and `touch` how many items it held (the rest answered `NOT_FOUND`), for `touch` the Unix second the items expire at, and from the first command to the last answer; for `flush_all`, the server's own count of its items (`stats` `curr_items`) just before it and the lowest read every 10 ms over the second after it, or until one reads 0 (Memcached reclaims flushed items in the background; the service's gets unlink a few and its sets add new ones), `keys_flushed` the fall (tested against `curr_items` read apart)",
		"at T (`ttl`: before the load)"},
	{"`trigger.detail.started_ms`, `trigger.detail.exited_ms`, `trigger.detail.exit_code`, `trigger.detail.took_ms`, `trigger.detail.output`, `trigger.detail.truncated`, `trigger.detail.timed_out`",
		"with the `command` trigger: herdbench's clock when `sh -c` started the user's command and when it exited, from T (`ended_ms` is the exit, T + `command_for`, or `ended_when_ms`: when `ended_when`'s URL first answered 2xx after the exit, null if it never did within 1 m); its exit status (−1: killed at `command_timeout`, `timed_out`, or by an interrupted run); how long it ran; its last 4 KiB of stdout and stderr together (`truncated`: its start was cut)",
		"at T until it exits"},
	{"`trigger.detail.undo.exit_code`, `trigger.detail.undo.took_ms`, `trigger.detail.undo.output`, `trigger.detail.undo.truncated`, `trigger.detail.undo.timed_out`",
		"with the `command` trigger and `undo`: the same of the undo, which ran once after the arm (also when the command or the arm failed, or the run was interrupted); absent without an undo. An undo that fails fails the arm, whose results are kept",
		"after the arm"},
	{"`burst.clients`, `burst.spread_p50_us`, `burst.spread_p99_us`, `burst.ok`",
		"with the `burst` trigger (and the `writes` trigger's burst): the clients released, how long after the release each client's request left (its serialized bytes handed to the kernel by the writer loops), and how many got a 2xx; with `--workers`, every worker's clients, merged",
		"at T"},
	{"`writes.statements`, `writes.rows`",
		"with the `writes` trigger (as every `writes.*`; docs/reports.md, \"The writes table\"): pg_stat_statements `calls` and `rows` of the testbed's write statements (direct's UPDATE, the queue's batch apply, coalesce's flush) by the app role, delta",
		"the fill's end until settled"},
	{"`writes.lock_waits_peak`, `writes.locks_waiting_peak`, `writes.queue_depth_peak`",
		"the highest 100 ms sample: the app role's backends waiting on a lock (pg_stat_activity `wait_event_type = 'Lock'`), lock requests not granted (pg_locks), the write queue's unacknowledged entries (XINFO GROUPS: lag plus pending)",
		"the load and its drain"},
	{"`writes.lag.{count,p50_ms,p99_ms}`",
		"the replicas' `herdbench_api_write_lag_seconds` (a queued write's acknowledgement to its application), summed, quantiles interpolated within buckets as `histogram_quantile` does; 0 without the queue, null when not read",
		"load start until settled"},
	{"`writes.steady.rate`, `writes.steady.acked`",
		"the trigger's steady writes (`write_rate`, `triggers.Workload`), from their own records: their rate, and those answered 2xx, which must be applied; `writes.steady` is absent without steady writes",
		"the whole load, warmup included"},
	{"`writes.steady.http.*`, `writes.steady.load.*`",
		"as `http.*` and `load.*`, from the steady writes' own recorder: their requests intended from T, their schedule kept or not",
		"as `http.*`, `load.*`"},
	{"`windows.*`",
		"the load cut at T and at the trigger's end (`trigger.ended_ms`): `before` (−before to T: the baseline), `during` (T to the end, whole rows; null when the cause was over within T's row, or it never said) and `after` (to the arm's end or stop), each with its rows' span (`from_ms`, `to_ms`) and, per second, `offered_rps` (requests intended), `attempts_rps` (attempts sent, retries included) and `goodput_rps` (answers: 2xx, and 4xx (`http.status_4xx`), within the client's timeout), summed from the timeline's rows, so from the client's records; the goodput from T times its windows' length is `http.ok` plus `http.status_4xx` (tested)",
		"the arm"},
	{"`verdict`",
		"`recovered`, `relapsed`, `metastable`, `overloaded` or `recovering`, by the rule below, from the timeline, the windows and the trigger's end; a gate compares it as a word (`verdict == recovered`, `none:verdict != metastable`: `gates[].word` and `measured_word`); `degraded` in a v1 file",
		"the arm"},
	{"`depth`",
		"the goodput of the arm's last hold (1 s of rows, `ok` of the timeline) over the before window's (`windows.before.goodput_rps`); absent without a baseline goodput",
		"the last hold"},
	{"`trend`",
		"the rise over the last 3 s of a least-squares line through each row's goodput (the timeline's `ok`, ten times it a second), as a share of the before window's goodput; absent without a baseline goodput or 3 s of rows after the trigger's end",
		"the last 3 s"},
	{"`loop.attempts_per_request`, `loop.db_qps`, `loop.loads_rps`, `loop.load_errors_rps`, `loop.new_conns_rps`, `loop.canceled_acquires_rps`, `loop.misses_rps`",
		"the figures of a loop, each with `before` (the before window), `after` (from the trigger's end, as `windows.after`) and `ratio` (after / before), summed from the timeline's rows: the clients' attempts per request intended (`attempts` / `requests`), Postgres' item queries a second (`db_qps`), and the testbed replicas' own counters a second, read every 100 ms (`loads`, `load_errors`, `new_conns`, `canceled_acquires` below: `herdbench_api_loads_total`, each load that finished filled the cache, `herdbench_api_load_errors_total`, and the pools' `herdbench_api_db_new_conns_total` and `herdbench_api_db_canceled_acquires_total`), and the cache's misses a second (`misses`). A rate of 0 counts as one event over the before window on either side, so a ratio from 0 is a lower bound and one that stayed 0 is 1. Null where the source is not observed: the replicas' on a service, the database's or cache's on a target without them. The rows' replica counts add up to `api.*` when nothing loads outside the timeline, and to at most them otherwise (tested on the testbed)",
		"before T; from the trigger's end"},
	{"`loop.held_by`",
		"on a `metastable` arm, the figure of `loop` furthest from its baseline (the largest size of the logarithm of its ratio: x4 and x0.25 are as far; the first in the order above on a tie), as `attempts x4.9`, `db q/s x0.05`, `load errors x870`, `new conns x112`, `canceled waits x300`, `misses x13`; absent on any other arm",
		"from the trigger's end"},
	{"`escape.from_rps`, `escape.start_ms`, `escape.rps`, `escape.share`, `escape.steps[]`",
		"with `--escape` (below, \"The escape load\"): the arm's rate, which tipped it; when the load first stepped down, from T (null: never judged metastable, or judged so too late in the after window for a step to begin); the highest stepped rate at which the service came back (the first step that read `recovered`; null when none did); that rate over `from_rps`, a ratio (a gate reads it as a percentage: `none:escape.share >= 50%`); and each step begun: `share`, `rps`, `start_ms` and `end_ms` (from T: the schedule's instants, `load.Steps`), `judged_to_ms`, and over its judged rows the timeline's `offered_rps`, `goodput_rps`, `attempts_rps` and `db_qps`, what it `read` (`recovered`, `stuck`: its limit passed without coming back, `unfinished`: the arm's after window ended first) and `recovery_ms` (from its start to the first row of the hold back in band). All from the timeline's rows, so from the clients' records and pg_stat_statements; `TestEscapeSteps` pins the reading on synthetic rows",
		"from the first step"},
	{"`settle_ms`",
		"the arm's settle time: the longest of 2 s, the clients' whole deadline (`plan.timeout` times the attempts of `clients.retry`, and its waits) and, on the testbed, the replicas' `--db-timeout` (each answers its own on `/healthz`; the longest) times the attempts of `config.db_retry`, and its waits (tested against a testbed started with `--db-timeout 3s`)",
		"the arm"},
	{"`recovery_ms`, `recovery_from_t_ms`",
		"the first row whose hold was within band with no relapse after it to the arm's end (no 1.5 s of holds in a row out of band), which made the arm `recovered` (below), counted from the trigger's end (`trigger.ended_ms`; from T when it never said) and from T; null when the arm did not recover, or was stopped early",
		"from the trigger's end"},
	{"`relapse_from_t_ms`",
		"when the arm, back within band for a hold after the trigger's end, first fell out of it again for 1.5 s of holds in a row, from T: the last row of the first of those holds (the row that took it out); on a `relapsed` arm, and on a `recovered` one that relapsed before its return that held; absent when it never did, or was stopped early (`TestVerdictRelapse`)",
		"from the trigger's end"},
	{"`model.expect`, `model.recovery_ms`, `model.shortest_tip_ms`, `model.why`, `model.inputs[]`",
		"on a `slowdb` or `expire` run only (absent otherwise): what the model (docs/metastability.md, \"The model\"; on `expire`, \"The look-aside cache's herd\") expects of the fault the arm ran, from its own results after the run (`predict.Expect`), the same as `herdbench model` prints from the file: `tips` or `recovers`; the recovery it predicts, from the fault's end as `recovery_ms`; the shortest fault of the kind that tips it (null on `expire`: `herdbench model` prints the fewest hot keys that tip it); each input with its source (`name`, `value`, `unit`, `source`: a figure of the arm's runs, a setting of the plan, the testbed's `/healthz`). Null, with `why`, for an arm the model does not cover or whose runs lack a figure it needs (an arm that recovered measured no stuck capacity; on `expire`, no reconnect in any arm of the run); the run stands. A prediction set after the gates are judged, so no gate or stop condition may name them (refused, exit 2). The table prints a `model` line for an arm whose verdict contradicts it: `recovers` and any verdict but `recovered`, or `tips` and `recovered`; never for an `overloaded` or aborted arm (`result.ModelExpectation.Disagrees`, pinned by `TestModelDisagreesRule`)",
		"the run's fault, from its end"},
	{"`prometheus`",
		"with a target file's `prometheus:`, the service's own series over the timeline, summed over their labels, a point a second, `t_ms` from T (Prometheus' query_range); gates name them as `prometheus.NAME.AGG`, AGG `max`, `min`, `mean`, `sum` or `last` of the points from T on (docs/targets.md; tested against a real Prometheus)",
		"before T to the end"},
	{"`workers.count`, `workers.start_skew_max_ms`, `workers.start_skew_p99_ms`",
		"with `--workers`: the controller's merge of the workers' results (docs/distributed.md): how many sent the load, and the spread of their first requests against the schedule, each worker's first-request lateness less its clock offset (measured as NTP does before the arm), max − min and its 99th percentile over workers; `workers.each[]` is each worker's own (`past_cut`: requests it sent after a cut that reached it late, not in the arm's figures)",
		"the load's start"},
	{"`missed_samples`",
		"the 100 ms samples of Postgres and Redis that failed (a dependency down on purpose): see \"Deltas across restarts\" below",
		"the load and its drain"},
	{"`warnings`",
		"what could not be read once the arm was measured (the target's Prometheus, the testbed replicas' counters, then `api` is null); the other figures stand",
		""},
	{"`aborted`",
		"null, or when (`at_ms`, relative to T) and why (`gate`, `reason` with the value it measured) a stop condition (`--abort-on`) ended the arm early; its figures then cover the arm up to the stop, and its timeline ends there",
		""},
	{"`runs[]`, `spread[]`, `representative`",
		"with `--repeat N` (`plan.repeat`, left out when 1): every run's whole results in run order, each number's `min` and `max` over them (`path` its gate path), and, in `runs`, the run the arm's words come from; the arm's numbers are then the runs' medians (\"Repeats\" above)",
		"the arm's runs"},
	{"`timeline[]`",
		"one row per 100 ms from −before to +after, `t_ms` relative to T: `db_qps` and `hits`/`misses` (deltas of the samples in the row), `connections` (last sample), `requests`, `ok` (its goodput: the ok answers of the requests intended in the row, ten times it a second), `p99_ms` (requests intended in the row, sent or not), `unsent` (of them, never sent), `attempts` (attempts sent in the row, retries included); `lock_waits` (the most of the app role's backends waiting on a lock in one sample) and `queue_depth` (the write queue's unacknowledged entries, last sample) when not 0; on the testbed, `loads`, `load_errors`, `new_conns`, `canceled_acquires` (the replicas' `herdbench_api_loads_total`, `_load_errors_total`, `_db_new_conns_total`, `_db_canceled_acquires_total`, summed over the replicas, their growth over the row's samples; a sum that went down had a replica restart; a sample whose scrape failed leaves the growth to the next that read them) when not 0; on the testbed, `replicas`: each API replica's requests answered in the row by its name (`api-1`, ...; its `herdbench_api_requests_total`), a replica that could not be read (restarting) answering none in the row, its growth going to its next reading, and the HTML report charts them per arm when the trigger is `restart`; behind a target's `haproxy:`, `lb_requests`, `lb_sent` and `lb_servers` (the backend's `req_tot`, its servers' `stot` summed and by server name, their growth over the row's samples) `lb_queue` (the most requests HAProxy held queued in the row's readings, when not 0), and `lb_weights` (each server's `weight` at the row's last reading while HAProxy lists it `UP`, 0 while it lists it otherwise: the weight it balances the server with, `slowstart`'s ramp)",
		""},
}

// ContractTable is the table as docs/stampede.md holds it: its header,
// its rule and a line for each row.
func ContractTable() string {
	var b strings.Builder
	b.WriteString("| field | source | window |\n|---|---|---|\n")
	for _, r := range ContractRows() {
		for _, c := range []string{r.Fields, r.Source, r.Window} {
			b.WriteString("|")
			if c != "" {
				b.WriteString(" " + c)
			}
			b.WriteString(" ")
		}
		b.WriteString("|\n")
	}
	return b.String()
}
