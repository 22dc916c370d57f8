#!/usr/bin/env bash
# The wide run's figures beside its report, for kube/e2e/run.sh, which
# sources this after manifests.sh: how many worker pods the node holds, and
# what the controller spent on them, read on this host from the controller
# pod's cgroup (cgroup v1's cpuacct.usage: CPU time in ns, every task of
# the pod counted, the exited ones too; the pod's other task is the pause
# container, which sleeps). Needs kubectl on the node, $OUT, $RATE, $ARM_S.

CPUACCT=/sys/fs/cgroup/cpuacct

milli() { # QUANTITY: a CPU quantity (2, 1.5, 200m) in millicores
  [[ $1 == *m ]] && echo "${1%m}" || awk -v q="$1" 'BEGIN { printf "%d", q * 1000 }'
}

# allocatable: the node's allocatable CPU, the scheduler's room, in millicores
allocatable() {
  milli "$(kubectl get nodes -o jsonpath='{.items[0].status.allocatable.cpu}')"
}

# fits N CPU: N pods of CPU fill the node: they fit, one more would not
fits() {
  local n=$1 c room
  c=$(milli "$2") room=$(allocatable)
  ((n * c <= room && (n + 1) * c > room))
}

# cpu_samples NAME: until $OUT/NAME.cpu.stop exists or the pod's cgroup is
# gone, every 100 ms a line "EPOCH-SECONDS CPU-NS PROCESSES" of the run's
# controller pod's cgroup to $OUT/NAME.cpu: the processes counted first,
# so a sample without the controller's has all its CPU
cpu_samples() {
  local name=$1 f=$OUT/$1.cpu uid dir="" deadline=$((SECONDS + 120))
  : >"$f"
  while [[ -z $dir && ! -e $f.stop ]] && ((SECONDS < deadline)); do
    uid=$(kubectl get pods -l job-name="$name-controller" -o jsonpath='{.items[0].metadata.uid}' 2>/dev/null)
    [[ -n $uid ]] && dir=$(find "$CPUACCT/kubepods" -maxdepth 2 -type d -name "pod$uid" 2>/dev/null | head -1)
    [[ -n $dir ]] || sleep 0.1
  done
  [[ -n $dir ]] || { log "$name: no cgroup of the controller's pod under $CPUACCT/kubepods"; return 1; }
  local ns procs
  while [[ ! -e $f.stop ]]; do
    procs=$(find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null | wc -l)
    ns=$(cat "$dir/cpuacct.usage" 2>/dev/null) || break
    echo "$(date +%s.%N) $ns $procs" >>"$f"
    sleep 0.1
  done
}

# sampled_past_exit NAME: the samples saw the controller's process in the
# pod's cgroup (two processes, with the pause container's) and end after it
# left: the last one is all the controller spent
sampled_past_exit() {
  awk '$3 >= 2 { ran = 1 } END { exit (ran && NR && $3 < 2) ? 0 : 1 }' "$OUT/$1.cpu"
}

# cost NAME: the controller's CPU time in all, and over the samples that
# span the arm (T - 1 s to T + 2 s), each as CPU-ms per worker-second: its
# CPU over the workers and the arm's seconds. Logged and written to
# $OUT/figures; fails when the samples do not span the arm.
cost() {
  local name=$1 json=$OUT/$1.json n t line
  n=$(jq '.arms[0].workers.each | length' "$json" 2>/dev/null)
  t=$(date -d "$(jq -r '.arms[0].t' "$json" 2>/dev/null)" +%s.%N 2>/dev/null) || return 1
  # the arm: from T less before (1 s) to T plus after (ARM_S - 1 s)
  line=$(awk -v from="$(echo "$t - 1" | bc)" -v to="$(echo "$t + $ARM_S - 1" | bc)" -v n="$n" -v arm="$ARM_S" '
    { t[NR] = $1; u[NR] = $2 }
    END {
      for (i = 1; i <= NR; i++) {
        if (t[i] <= from) a = i
        if (t[i] >= to && !b) b = i
      }
      if (!NR || !n || !a || !b) exit 1
      all = u[NR] / 1e6; span = t[b] - t[a]; during = (u[b] - u[a]) / 1e6
      printf "controller_cpu_ms %.0f per_worker_s_ms %.2f arm_cpu_ms %.0f arm_span_s %.2f arm_per_worker_s_ms %.2f\n",
        all, all / (n * arm), during, span, during / (n * span)
    }' "$OUT/$name.cpu") || return 1
  log "$name: $n workers, $line"
  echo "$name $line" >>"$OUT/figures"
}
