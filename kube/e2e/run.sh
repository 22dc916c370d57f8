#!/usr/bin/env bash
# herdbench kube's manifests, applied unchanged with the node's own kubectl,
# on the node kube/e2e/node.sh brings up:
#
#   bash kube/e2e/run.sh          # up, the runs below, down; exit 0 when all held
#   KEEP=1 bash kube/e2e/run.sh   # leave the node and the service up afterwards
#
# The service the pods load: kube/e2e/items, a plain HTTP service on the
# node's bridge address, 10.244.0.1:1828{1,2,3}, which the pods reach (they
# cannot reach the host's loopback); the target file lists those three.
#
# Runs, each worker pods (three but in wide) and the controller Job from
# `herdbench kube`:
#   ok    a burst stampede: exit 0, the Job Complete, the report in the
#         controller's log, the plan's request total the workers' sum, the
#         start skew across pods;
#   wide  the same across as many worker pods as the node holds (10), and
#         the controller's CPU per worker-second, from its pod's cgroup;
#   gate  the same with a gate that fails: exit 99, the Job Failed;
#   lost  a worker pod deleted mid-arm: exit 1, the arm ended naming it;
# and after each run's `kubectl delete`, nothing of it on the node.
# Prints one line per check and a summary; the figures go to $OUT.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
node() { bash "$here/node.sh" "$@"; }
eval "$(node env)"
CACHE=${HERDBENCH_KUBE_CACHE:-/var/cache/herdbench-kube}
OUT=${OUT:-/var/tmp/herdbench-kube-run}
HB=$CACHE/bin/herdbench
# IMAGE, BRIDGE_IP, RATE, the runs, run_args NAME and manifests NAME
source "$here/manifests.sh"
# functions of the wide run: the node's CPU, the controller's cost
source "$here/cost.sh"
ARM_S=3 # each run's arm: before 1 s + after 2 s (the warmup is not the arm's)

mkdir -p "$OUT"
pass=0 fail=0
check() { # WHAT CONDITION...
  local what=$1
  shift
  if "$@"; then echo "ok    $what"; pass=$((pass + 1)); else echo "FAIL  $what"; fail=$((fail + 1)); fi
}
log() { echo "run: $*" >&2; }

cleanup() {
  [[ -e $OUT/items.pid ]] && kill "$(cat "$OUT/items.pid")" 2>/dev/null
  rm -f "$OUT/items.pid"
  node down
}
[[ -n ${KEEP:-} ]] || trap cleanup EXIT

# what the node may write outside its own dirs, there before it or not
outside=(/var/lib/kubelet /var/lib/cni /var/log/containers)
before=$(ls -d "${outside[@]}" 2>/dev/null)

t0=$SECONDS
node up || exit 1
log "node up in $((SECONDS - t0)) s"
(cd "$repo" && GOMAXPROCS=2 nice -n 19 go build -trimpath -o "$HB" ./cmd/herdbench) || exit 1

# --- the service ---------------------------------------------------------
# kube/e2e/items on three ports of the bridge's address: the testbed's own
# processes (herdbench, redis-server, postgres) would be killed by name by
# a .ci/run ending on this machine meanwhile, and fail its check
items=$CACHE/bin/hbk-items
(cd "$repo" && GOMAXPROCS=2 nice -n 19 go build -trimpath -o "$items" ./kube/e2e/items) || exit 1
f=$OUT/items.pid
if ! { [[ -e $f ]] && kill -0 "$(cat "$f")" 2>/dev/null; }; then
  setsid nohup "$items" --listen "$BRIDGE_IP:18281,$BRIDGE_IP:18282,$BRIDGE_IP:18283" >"$OUT/items.log" 2>&1 </dev/null &
  echo $! >"$f"
fi
for i in 1 2 3; do
  for _ in $(seq 60); do curl -sf "http://$BRIDGE_IP:1828$i/items/1" >/dev/null && break; sleep 0.5; done
done
cat >"$OUT/target.yaml" <<EOF
name: kube/e2e/items on the node's bridge
endpoints:
  - http://$BRIDGE_IP:18281
  - http://$BRIDGE_IP:18282
  - http://$BRIDGE_IP:18283
allow:
  - $BRIDGE_IP
request:
  path: /items/{key}
keys:
  zipf: {from: 1, to: 50, s: 1.1}
  hot: 50
EOF

# --- one run -------------------------------------------------------------
apply() { # NAME: manifests.sh's run NAME
  local name=$1
  kubectl create configmap "$name-config" --from-file=target.yaml="$OUT/target.yaml" >/dev/null
  kubectl create secret generic "$name-worker-token" --from-literal=token="$(openssl rand -hex 32)" >/dev/null
  manifests "$name" >"$OUT/$name.yaml" || return
  kubectl apply -f "$OUT/$name.yaml"
}

# the controller's end: its exit code, its log; the Job's condition
finish() { # NAME
  local name=$1 job=$1-controller
  for _ in $(seq 240); do
    [[ -n $(kubectl get job "$job" -o jsonpath='{.status.conditions[?(@.status=="True")].type}' 2>/dev/null | grep -E 'Complete|Failed') ]] && break
    sleep 1
  done
  kubectl logs "job/$job" >"$OUT/$name.log" 2>&1
  code=$(kubectl get pods -l job-name="$job" -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}')
  condition=$(kubectl get job "$job" -o jsonpath='{.status.conditions[?(@.status=="True")].type}' | grep -oE 'Complete|Failed' | head -1)
  stdout_of "$job" >"$OUT/$name.json"
  log "$name: controller exit $code, job $condition"
}

# stdout_of JOB: what the Job's container wrote to stdout, from its log
# file on the node, where each line says its stream: kubectl logs mixes
# stderr in, and a line of stderr once landed inside the results JSON
stdout_of() {
  local f
  f=$(ls /var/lib/herdbench-kube/pod-logs/*_"$1"-*/*/*.log 2>/dev/null | head -1)
  [[ -n $f ]] || { log "$1: no log file of its pod under /var/lib/herdbench-kube/pod-logs"; return 1; }
  # TIME STREAM TAG CONTENT; tag P: the line goes on in the next one
  awk '$2 == "stdout" { tag = $3; sub(/^[^ ]+ [^ ]+ [^ ]+ ?/, ""); printf "%s%s", $0, (tag == "F" ? "\n" : "") }' "$f"
}

# after kubectl delete: no pod, no container, no sandbox's address, netns or volume of the run
gone() { # NAME
  local name=$1
  kubectl delete -f "$OUT/$name.yaml" --wait=true --timeout=120s >/dev/null
  kubectl delete configmap "$name-config" >/dev/null
  kubectl delete secret "$name-worker-token" >/dev/null
  for _ in $(seq 120); do
    [[ -z $(kubectl get pods -l "app.kubernetes.io/instance=$name" -o name 2>/dev/null) ]] && break
    sleep 1
  done
  # the kubelet removes exited sandboxes on its own clock: wait for them too
  local left
  for _ in $(seq 90); do
    left=$(node_leftovers)
    [[ -z $left ]] && break
    sleep 1
  done
  [[ -z $left ]] || log "$name: left on the node: $left"
  [[ -z $left && -z $(kubectl get all,configmap,secret -l "app.kubernetes.io/instance=$name" -o name 2>/dev/null) ]]
}

node_leftovers() {
  local sock=/run/herdbench-kube/containerd.sock base=/var/lib/herdbench-kube
  {
    ctr -a "$sock" -n k8s.io containers ls -q
    ctr -a "$sock" -n k8s.io tasks ls -q
    find "$base/cni/networks/herdbench-kube" -type f ! -name 'last_reserved_ip*' ! -name lock 2>/dev/null
    ip -o link show master hbk0 2>/dev/null | cut -d: -f2
    findmnt -rn -o TARGET | grep -E "^(/run/herdbench-kube|$base/kubelet)/"
    ls "$base/kubelet/pods" 2>/dev/null
  } | tr '\n' ' ' | sed 's/ *$//'
}

# --- ok and wide: exit 0, the report, the totals, the skew ---------------
# held NAME LABEL: the run NAME's stampede held: exit 0 and Complete, the
# report from its workers, the plan's total the workers' sum, every request
# an outcome; its start skew across pods to $OUT/figures
held() {
  local name=$1 label=$2 json=$OUT/$1.json workers cpu args
  run_args "$name"
  check "$label: the controller exits 0 and the Job is Complete (exit $code, $condition)" test "$code" = 0 -a "$condition" = Complete
  check "$label: the report (the results JSON) is in the controller's log, from $workers workers" \
    test "$(jq '.arms[0].workers.each | length' "$json" 2>/dev/null)" = "$workers"
  local intended sum want=$((RATE * ARM_S))
  intended=$(jq '.arms[0].load.intended' "$json" 2>/dev/null)
  sum=$(jq '[.arms[0].workers.each[].load.intended] | add' "$json" 2>/dev/null)
  check "$label: the plan's request total ($want) is load.intended ($intended) and the workers' sum ($sum)" \
    test "$intended" = "$want" -a "$sum" = "$want"
  local requests outcomes
  requests=$(jq '.arms[0].http.requests' "$json" 2>/dev/null)
  outcomes=$(jq '.arms[0].http | .ok + ([.errors | (.timeout, .conn, ."5xx", .shed, .other, .throttled, .client_breaker, .unsent)] | add)' "$json" 2>/dev/null)
  check "$label: http.requests ($requests) is the 2 s after T at $RATE req/s, every one an outcome ($outcomes)" \
    test "$requests" = $((RATE * 2)) -a "$outcomes" = "$requests"
  local skew p99
  skew=$(jq -r '.arms[0].workers.start_skew_max_ms' "$json" 2>/dev/null)
  p99=$(jq -r '.arms[0].workers.start_skew_p99_ms' "$json" 2>/dev/null)
  log "$label: $workers pods, start skew max $skew ms, p99 $p99 ms"
  echo "$name pods $workers skew_max_ms $skew skew_p99_ms $p99" >>"$OUT/figures"
}

apply herd-ok || exit 1
finish herd-ok
held herd-ok ok
check "ok: after kubectl delete nothing of the run is on the node" gone herd-ok

# wide: as many worker pods as the node holds, and what the controller
# spent on them, from its pod's cgroup on this host
run_args herd-wide
check "wide: the node's allocatable CPU ($(allocatable)m) holds $workers workers of $cpu and no more" \
  fits "$workers" "$cpu"
rm -f "$OUT/herd-wide.cpu.stop"
apply herd-wide || exit 1
cpu_samples herd-wide &
sampler=$!
finish herd-wide
touch "$OUT/herd-wide.cpu.stop"
wait "$sampler"
held herd-wide wide
check "wide: the controller pod's CPU samples go on past its exit (its process gone from the pod's cgroup)" sampled_past_exit herd-wide
check "wide: the controller's CPU per worker-second, in all and over the arm (to $OUT/figures)" cost herd-wide
check "wide: after kubectl delete nothing of the run is on the node" gone herd-wide

# --- gate: exit 99 -------------------------------------------------------
apply herd-gate || exit 1
finish herd-gate
check "gate: a failed gate exits 99 and the Job is Failed (exit $code, $condition)" test "$code" = 99 -a "$condition" = Failed
check "gate: after kubectl delete nothing of the run is on the node" gone herd-gate

# --- lost: a worker pod deleted mid-arm ----------------------------------
apply herd-lost || exit 1
for _ in $(seq 120); do
  [[ $(kubectl get pods -l job-name=herd-lost-controller -o jsonpath='{.items[0].status.phase}' 2>/dev/null) == Running ]] && break
  sleep 0.5
done
sleep 6 # the workers prepared and the arm under way (warmup 0.5 s, before 1 s, after 20 s)
victim=$(kubectl get pods -l job-name=herd-lost-workers -o jsonpath='{.items[1].metadata.name}')
victim_ip=$(kubectl get pod "$victim" -o jsonpath='{.status.podIP}')
log "lost: deleting worker pod $victim ($victim_ip) mid-arm"
deleted=$SECONDS
kubectl delete pod "$victim" --wait=false >/dev/null
finish herd-lost
log "lost: the controller's Job ended $((SECONDS - deleted)) s after the pod's deletion (the arm: 20 s after T)"
check "lost: the controller exits 1 (exit $code, $condition)" test "$code" = 1
lost=$(grep -o "^herdbench: .*worker [0-9] (http://$victim_ip:7070): [^(]*" "$OUT/herd-lost.log" | head -1)
log "lost: the controller says: $lost"
check "lost: the arm ends naming the deleted pod's worker ($lost)" test -n "$lost"
check "lost: the log says partial results were written" grep -q "partial results" "$OUT/herd-lost.log"
check "lost: after kubectl delete nothing of the run is on the node" gone herd-lost

# after down: nothing of the node on the host
host_clean() {
  local left
  left=$({
    pgrep -af '/var/cache/herdbench-kube/bin/|herdbench-kube/containerd|containerd-shim-runc-v2 .*herdbench-kube'
    findmnt -rn -o TARGET | grep herdbench-kube
    ip -o link show hbk0 2>/dev/null
    iptables-save 2>/dev/null | grep -E 'KUBE-|herdbench-kube'
    ip6tables-save 2>/dev/null | grep -E 'KUBE-'
    ls -d /var/lib/herdbench-kube /run/herdbench-kube /sys/fs/cgroup/*/kubepods 2>/dev/null
    comm -13 <(echo "$before") <(ls -d "${outside[@]}" 2>/dev/null)
  })
  [[ -z $left ]] || log "left after down: $left"
  [[ -z $left ]]
}
if [[ -z ${KEEP:-} ]]; then
  trap - EXIT
  cleanup
  check "down: no process, mount, bridge, iptables rule, cgroup or file of the node is left" host_clean
fi
echo "$pass passed, $fail failed"
((fail == 0))
