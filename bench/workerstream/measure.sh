#!/bin/bash
# The controller's CPU for one arm sent by three workers on loopback at
# 1,000 req/s each (13 s of load), for each herdbench binary given, each
# with its own workers and local testbed, two rounds:
#
#   bash bench/workerstream/measure.sh /tmp/herdbench-before /tmp/herdbench-after
#
# docs/distributed.md ("What streaming costs") holds its last figures.
set -u
[ $# -ge 1 ] || { echo "usage: $0 HERDBENCH [HERDBENCH...]" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for round in 1 2; do
	for b in "$@"; do
		sd=$dir/state
		"$b" testbed up --state-dir "$sd" >/dev/null 2>&1 || { echo "$b: testbed up failed" >&2; exit 1; }
		pids=()
		for p in 17071 17072 17073; do
			"$b" worker --listen 127.0.0.1:$p 2>/dev/null &
			pids+=($!)
		done
		for p in 17071 17072 17073; do
			for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:$p/v1/clock && break; sleep 0.05; done
		done
		/usr/bin/time -f "$b round $round: controller user %U s sys %S s elapsed %e s" "$b" stampede \
			--workers http://127.0.0.1:17071,http://127.0.0.1:17072,http://127.0.0.1:17073 \
			--state-dir "$sd" --rate 3000 --arms none --warmup 1s --before 2s --after 10s --results-dir "$dir/results" \
			>/dev/null 2>"$dir/err"
		tail -1 "$dir/err"
		kill "${pids[@]}"
		wait "${pids[@]}" 2>/dev/null
		"$b" testbed down --state-dir "$sd" >/dev/null 2>&1
	done
done
