#!/usr/bin/env bash
# The manifests kube/e2e/run.sh applies: one place for the runs' names and
# for the `herdbench kube` command line that makes each run's manifests.
# run.sh sources it; on its own it prints them, with no cluster:
#
#   HB=./herdbench bash kube/e2e/manifests.sh --list    # the runs' names
#   HB=./herdbench bash kube/e2e/manifests.sh herd-ok   # that run's manifests
#
# cmd/herdbench's TestKubeE2EManifestsBuild builds every run's this way in
# the suite, so a flag herdbench comes to refuse fails CI, not the next
# bring-up of the node.

IMAGE=herdbench.local/herdbench:e2e
BRIDGE_IP=10.244.0.1
RATE=300
RUNS=(herd-ok herd-wide herd-gate herd-lost)
# herd-wide: as many worker pods as the node holds. The node has 2 cores
# and the scheduler places a pod by its CPU request: 10 of 200m fill them
# (the controller requests none), an 11th would stay Pending.
WIDE=10
WIDE_CPU=200m

# run_args NAME: the run NAME's worker pods and each one's CPU, in workers
# and cpu, and the stampede's arguments beyond the ones every run shares,
# in the array args
run_args() {
  workers=3 cpu=500m
  case $1 in
    herd-ok) args=(--after 2s) ;;
    herd-wide) workers=$WIDE cpu=$WIDE_CPU args=(--after 2s) ;;
    herd-gate) args=(--after 2s --gate 'http.requests < 1') ;;
    herd-lost) args=(--after 20s) ;;
    *)
      echo "manifests.sh: no run $1 (accepted: ${RUNS[*]})" >&2
      return 2
      ;;
  esac
}

# manifests NAME: the run NAME's manifests on stdout, from the herdbench
# at $HB. The controller writes the results JSON to stdout, its log: the
# one report there (a second on stdout is refused), which run.sh reads.
manifests() {
  local name=$1 args workers cpu
  run_args "$name" || return
  "${HB:?the herdbench binary}" kube --image "$IMAGE" --name "$name" --workers "$workers" --worker-cpu "$cpu" \
    --configmap "$name-config" --allow-host "$BRIDGE_IP" -- stampede --target /config/target.yaml --yes \
    --trigger burst --burst 300 --rate "$RATE" --warmup 500ms --before 1s "${args[@]}" -o json
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -uo pipefail
  case ${1:-} in
    --list) printf '%s\n' "${RUNS[@]}" ;;
    "") echo "usage: HB=HERDBENCH bash kube/e2e/manifests.sh --list | NAME" >&2 && exit 2 ;;
    *) manifests "$1" ;;
  esac
fi
