#!/usr/bin/env bash
# One Kubernetes node on this machine, built from the Go module proxy and
# Debian's packages only, for running `herdbench kube`'s manifests for real
# (kube/e2e/run.sh). docs/distributed.md, "On a real node", says what
# ran and what it measured.
#
#   bash kube/e2e/node.sh build   # the binaries and images (cached)
#   bash kube/e2e/node.sh up      # build, then start the node and wait for Ready
#   bash kube/e2e/node.sh status
#   bash kube/e2e/node.sh kubectl get pods -A
#   bash kube/e2e/node.sh down    # every process, mount, interface, iptables
#                                 # rule, sysctl and file of the node
#   bash kube/e2e/node.sh purge   # down, and the build cache too
#
# What runs, all as processes on this host:
#   etcd 3.6.4, kube-apiserver, kube-controller-manager, kube-scheduler,
#   kubelet and kubectl v1.34.4 (kube/e2e/k8s: the binaries of one release),
#   a containerd of its own (Debian's binary, the CRI plugin on, cgroupfs,
#   its own config, root, state and socket: Docker's containerd is not
#   touched), the bridge/host-local/loopback CNI plugins of Debian's
#   containernetworking-plugins on a bridge of its own (hbk0, 10.244.0.0/24),
#   and CoreDNS (kube/e2e/coredns) on the bridge's address as the cluster DNS.
#   No kube-proxy: nothing uses a ClusterIP (the workers' Service is headless).
#   kube-scheduler places the pods: the manifests have no nodeName and are
#   applied unchanged.
#
# Root only (it runs a kubelet). Heavy builds run under nice -n 19 with
# GOMAXPROCS=2.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

K8S_VERSION=v1.34.4
BASE=${HERDBENCH_KUBE_DIR:-/var/lib/herdbench-kube} # the node's files: down removes them
RUN=/run/herdbench-kube                             # sockets, pids, containerd's state
CACHE=${HERDBENCH_KUBE_CACHE:-/var/cache/herdbench-kube} # builds: kept by down, removed by purge
BIN=$CACHE/bin
BRIDGE=hbk0
NODE_IP=10.244.0.1
POD_CIDR=10.244.0.0/24
SVC_CIDR=10.244.1.0/24
NODE=herdbench-node
CNI_NET=herdbench-kube
ETCD_PORT=23790
API=https://$NODE_IP:6443
SOCK=$RUN/containerd.sock
IMAGE=herdbench.local/herdbench:e2e
PAUSE=herdbench.local/pause:1
CNI_BIN=/usr/lib/cni
IPT_COMMENT=herdbench-kube
KUBELET_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes)

log() { echo "node: $*" >&2; }
die() { log "$*"; exit 1; }

export KUBECONFIG=$BASE/pki/admin.kubeconfig
kubectl() { "$BIN/kubectl" "$@"; }
ctr_() { ctr -a "$SOCK" -n k8s.io "$@"; }

# --- build -------------------------------------------------------------

# stamp of what a build is made from: rebuilt when it changes
stamp() { { go version; cat "$@"; } | sha256sum | cut -c1-16; }

build_go() { # NAME OUT MODULE-DIR PACKAGE...
  local name=$1 out=$2 dir=$3
  shift 3
  local sum
  sum=$(stamp $(ls "$dir"/go.mod "$dir"/go.sum "$dir"/*.go 2>/dev/null))
  if [[ -x $out && $(cat "$out.stamp" 2>/dev/null) == "$sum" ]]; then return; fi
  log "building $name"
  local ld="-s -w"
  if [[ $name == kube* ]]; then
    # the release's own version, as its build scripts stamp it
    local v
    for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ld+=" -X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=34 -X $v.gitTreeState=clean"
    done
  fi
  (cd "$dir" && GOMAXPROCS=2 CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags "$ld" -o "$out" "$@")
  echo "$sum" >"$out.stamp"
}

build_binaries() {
  mkdir -p "$BIN"
  local p
  for p in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
    build_go "$p" "$BIN/$p" "$here/k8s" "k8s.io/kubernetes/cmd/$p"
  done
  build_go etcd "$BIN/etcd" "$here/k8s" go.etcd.io/etcd/server/v3
  build_go coredns "$BIN/coredns" "$here/coredns" .
  build_go pause "$BIN/pause" "$here/pause" .
}

# The pause image: the static pause binary as the one layer of an image in
# docker save's format, which ctr imports.
build_pause_image() {
  local out=$CACHE/pause-image.tar sum
  sum=$(stamp "$BIN/pause")
  [[ -e $out && $(cat "$out.stamp" 2>/dev/null) == "$sum" ]] && return
  log "making the pause image $PAUSE"
  local d
  d=$(mktemp -d)
  mkdir "$d/root"
  cp "$BIN/pause" "$d/root/pause"
  tar -C "$d/root" --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$d/layer.tar" pause
  local diff cfg
  diff=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$diff" >"$d/config.json"
  cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1)
  mv "$d/config.json" "$d/$cfg.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["layer.tar"]}]' "$cfg" "$PAUSE" >"$d/manifest.json"
  tar -C "$d" -cf "$out" manifest.json "$cfg.json" layer.tar
  rm -rf "$d"
  echo "$sum" >"$out.stamp"
}

# herdbench's image from the repository's Dockerfile. No registry is
# reachable here, so its base images are the stand-ins the docker testbed
# builds (testbed/compose/standin/images.sh), unless HERDBENCH_GO_IMAGE and
# HERDBENCH_RUN_IMAGE already name others.
build_herdbench_image() {
  if [[ -z ${HERDBENCH_GO_IMAGE:-} || -z ${HERDBENCH_RUN_IMAGE:-} ]]; then
    eval "$(nice -n 19 bash "$repo/testbed/compose/standin/images.sh")"
  fi
  log "building $IMAGE from the Dockerfile (on $HERDBENCH_GO_IMAGE, $HERDBENCH_RUN_IMAGE)"
  nice -n 19 docker build -q --build-arg GO_IMAGE="$HERDBENCH_GO_IMAGE" --build-arg RUN_IMAGE="$HERDBENCH_RUN_IMAGE" \
    -t "$IMAGE" "$repo" >/dev/null
  local id out=$CACHE/herdbench-image.tar
  id=$(docker image inspect -f '{{.Id}}' "$IMAGE")
  [[ -e $out && $(cat "$out.stamp" 2>/dev/null) == "$id" ]] && return
  log "saving $IMAGE"
  docker save "$IMAGE" >"$out.tmp"
  mv "$out.tmp" "$out"
  echo "$id" >"$out.stamp"
}

cmd_build() {
  command -v go >/dev/null || die "go missing"
  local t0=$SECONDS
  build_binaries
  build_pause_image
  build_herdbench_image
  log "built in $((SECONDS - t0)) s"
}

# --- packages ----------------------------------------------------------

need_packages() {
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [[ -x $CNI_BIN/bridge && -x $CNI_BIN/host-local && -x $CNI_BIN/loopback ]] || missing+=(containernetworking-plugins)
  command -v openssl >/dev/null || missing+=(openssl)
  command -v iptables >/dev/null || missing+=(iptables)
  ((${#missing[@]})) || return 0
  log "installing ${missing[*]}"
  # Debian starts a package's service on install (containerd's would be a
  # second system containerd): policy-rc.d forbids it for the install.
  local policy=/usr/sbin/policy-rc.d had=false
  [[ -e $policy ]] && had=true
  $had || { printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; }
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  local rc=$?
  $had || rm -f "$policy"
  return $rc
}

# --- certificates and kubeconfigs --------------------------------------

cert() { # NAME SUBJECT [SAN]
  local name=$1 subj=$2 san=${3:-} d=$BASE/pki
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$d/$name.key" -subj "$subj" -out "$d/$name.csr" 2>/dev/null
  local ext="keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth"
  [[ -n $san ]] && ext+=$'\n'"subjectAltName=$san"
  openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 30 \
    -extfile <(echo "$ext") -out "$d/$name.crt" 2>/dev/null
  rm -f "$d/$name.csr"
}

kubeconfig() { # NAME (its cert)
  local d=$BASE/pki
  cat >"$d/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: herdbench
  cluster:
    server: $API
    certificate-authority-data: $(base64 -w0 "$d/ca.crt")
users:
- name: $1
  user:
    client-certificate-data: $(base64 -w0 "$d/$1.crt")
    client-key-data: $(base64 -w0 "$d/$1.key")
contexts:
- name: herdbench
  context: {cluster: herdbench, user: $1}
current-context: herdbench
EOF
}

make_pki() {
  local d=$BASE/pki
  [[ -e $d/.complete ]] && return
  mkdir -p "$d"
  chmod 700 "$d"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$d/ca.key" -out "$d/ca.crt" \
    -days 30 -subj /CN=herdbench-kube-ca 2>/dev/null
  cert apiserver /CN=kube-apiserver \
    "IP:$NODE_IP,IP:127.0.0.1,IP:${SVC_CIDR%.0/24}.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  cert admin "/O=system:masters/CN=admin"
  cert kubelet "/O=system:nodes/CN=system:node:$NODE"
  cert controller-manager /CN=system:kube-controller-manager
  cert scheduler /CN=system:kube-scheduler
  cert coredns "/O=system:masters/CN=coredns"
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  local k
  for k in admin kubelet controller-manager scheduler coredns; do kubeconfig "$k"; done
  touch "$d/.complete"
}

# --- configs -----------------------------------------------------------

write_configs() {
  mkdir -p "$BASE/cni/net.d" "$BASE/cni/networks" "$BASE/containerd" "$BASE/opt" "$BASE/pod-logs" "$RUN/containerd"
  cat >"$BASE/containerd.toml" <<EOF
# herdbench-kube's own containerd: its own root, state and socket, the CRI
# plugin on. Docker's containerd (/etc/containerd/config.toml) is not this.
version = 2
root = "$BASE/containerd"
state = "$RUN/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$BASE/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE"
  # this machine's root may not lower an oom_score_adj (runc's "failed to
  # update /proc/self/oom_score_adj: Permission denied" for a sandbox's -998)
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN"
    conf_dir = "$BASE/cni/net.d"
EOF
  cat >"$BASE/cni/net.d/10-$CNI_NET.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NET",
  "plugins": [
    {
      "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "dataDir": "$BASE/cni/networks",
               "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]]}
    }
  ]
}
EOF
  : >"$BASE/resolv.conf" # the pods' DNS is the cluster's only: no host search path
  cat >"$BASE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://$SOCK
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $BASE/pki/ca.crt}
authorization: {mode: AlwaysAllow}
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
resolvConf: $BASE/resolv.conf
podLogsDir: $BASE/pod-logs
serializeImagePulls: false
maxPods: 30
evictionHard: {memory.available: 100Mi, nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
  cat >"$BASE/Corefile" <<EOF
cluster.local:53 {
  bind $NODE_IP
  errors
  ready 127.0.0.1:18181
  kubernetes cluster.local {
    kubeconfig $BASE/pki/coredns.kubeconfig herdbench
  }
}
EOF
}

# --- processes ---------------------------------------------------------

start() { # NAME ARGS...: in the background, its pid in $RUN/pids
  local name=$1
  shift
  mkdir -p "$RUN/pids" "$BASE/logs"
  if [[ -e $RUN/pids/$name ]] && kill -0 "$(cat "$RUN/pids/$name")" 2>/dev/null; then return; fi
  setsid nohup "$@" >>"$BASE/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/pids/$name"
}

wait_for() { # WHAT SECONDS COMMAND...
  local what=$1 secs=$2 deadline=$((SECONDS + $2))
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "$what: not within $secs s; see $BASE/logs"
    sleep 0.5
  done
}

healthy() { curl -sfk --max-time 2 "$@" >/dev/null; }

save_host_state() {
  [[ -e $BASE/host.saved ]] && return
  {
    local s
    for s in "${KUBELET_SYSCTLS[@]}"; do echo "sysctl $s=$(sysctl -n "$s")"; done
    [[ -e /var/log/containers ]] || echo "rmdir /var/log/containers"
    [[ -e /var/lib/cni ]] || echo "rmdir /var/lib/cni"
    [[ -e /var/lib/kubelet ]] || echo "rmdir /var/lib/kubelet"
  } >"$BASE/host.saved"
}

cmd_up() {
  [[ $(id -u) == 0 ]] || die "run as root: it runs a kubelet"
  local t0=$SECONDS
  need_packages
  cmd_build
  local t1=$SECONDS
  mkdir -p "$BASE" "$RUN"
  save_host_state
  make_pki
  write_configs

  # the node's bridge, before anything binds its address
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$NODE_IP/24" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  # pod to pod across the bridge: Docker's FORWARD policy is DROP and
  # br_netfilter sends bridged frames through it
  iptables -C FORWARD -i "$BRIDGE" -o "$BRIDGE" -m comment --comment "$IPT_COMMENT" -j ACCEPT 2>/dev/null ||
    iptables -I FORWARD 1 -i "$BRIDGE" -o "$BRIDGE" -m comment --comment "$IPT_COMMENT" -j ACCEPT

  # HERDBENCH_KUBE_ETCD: another etcd binary, such as Debian's etcd-server
  # 3.4 (docs/distributed.md says how the apiserver took it)
  local etcd=${HERDBENCH_KUBE_ETCD:-$BIN/etcd} nofsync=()
  "$etcd" --help 2>&1 | grep -q -- --unsafe-no-fsync && nofsync=(--unsafe-no-fsync)
  start etcd "$etcd" --name herdbench-kube --data-dir "$BASE/etcd" "${nofsync[@]}" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
    --initial-cluster herdbench-kube=http://127.0.0.1:23800
  start containerd containerd --config "$BASE/containerd.toml"
  wait_for etcd 30 healthy "http://127.0.0.1:$ETCD_PORT/health"

  local p=$BASE/pki
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port 6443 \
    --service-cluster-ip-range "$SVC_CIDR" --cert-dir "$BASE/apiserver" \
    --client-ca-file "$p/ca.crt" --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --kubelet-preferred-address-types InternalIP \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --profiling=false
  wait_for kube-apiserver 90 healthy --cacert "$p/ca.crt" "$API/readyz"

  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$p/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$p/controller-manager.kubeconfig" --authorization-kubeconfig "$p/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
    --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" --cluster-name herdbench-kube --profiling=false
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$p/scheduler.kubeconfig" \
    --authentication-kubeconfig "$p/scheduler.kubeconfig" --authorization-kubeconfig "$p/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false
  start coredns "$BIN/coredns" -conf "$BASE/Corefile"

  wait_for containerd 30 ctr_ version
  local img
  for img in "$CACHE/pause-image.tar:$PAUSE" "$CACHE/herdbench-image.tar:$IMAGE"; do
    local tar=${img%%:*} name=${img#*:} imported
    imported=$BASE/imported-$(basename "$tar")
    # imported again when the build made another (its stamp is the image's id)
    if ! ctr_ images ls -q | grep -qx "$name" || [[ $(cat "$imported" 2>/dev/null) != $(cat "$tar.stamp") ]]; then
      log "importing $name into the node's containerd"
      ctr_ images import "$tar" >/dev/null
      cp "$tar.stamp" "$imported"
    fi
  done

  start kubelet "$BIN/kubelet" --config "$BASE/kubelet.yaml" --kubeconfig "$p/kubelet.kubeconfig" \
    --root-dir "$BASE/kubelet" --cert-dir "$BASE/kubelet/pki" --hostname-override "$NODE" --node-ip "$NODE_IP" --v 1
  wait_for "node $NODE Ready" 120 kubectl wait --for=condition=Ready "node/$NODE" --timeout=2s
  wait_for coredns 30 healthy http://127.0.0.1:18181/ready
  # pods may be created once the namespace's service account is there
  wait_for "default service account" 60 kubectl get serviceaccount default
  log "node $NODE Ready: started in $((SECONDS - t1)) s ($((SECONDS - t0)) s with the build's check)"
  log "kubectl: KUBECONFIG=$KUBECONFIG $BIN/kubectl, or bash $0 kubectl ..."
}

# --- down --------------------------------------------------------------

stop() { # NAME: TERM, then KILL after 10 s
  local f=$RUN/pids/$1 pid
  [[ -e $f ]] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    local i
    for i in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

# every container of the node's containerd, its shim and task gone
remove_containers() {
  [[ -S $SOCK ]] || return 0
  local id
  for id in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s KILL "$id" 2>/dev/null || true; done
  for id in $(ctr_ tasks ls -q 2>/dev/null); do
    local i
    for i in $(seq 20); do ctr_ tasks delete "$id" >/dev/null 2>&1 && break; sleep 0.25; done
  done
  for id in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers delete "$id" >/dev/null 2>&1 || true; done
}

remove_iptables() {
  local ipt table chain
  iptables -D FORWARD -i "$BRIDGE" -o "$BRIDGE" -m comment --comment "$IPT_COMMENT" -j ACCEPT 2>/dev/null || true
  # the kubelet's own chains (KUBE-IPTABLES-HINT, KUBE-KUBELET-CANARY, KUBE-FIREWALL...)
  for ipt in iptables ip6tables iptables-legacy ip6tables-legacy; do
    command -v "$ipt" >/dev/null || continue
    for table in filter nat mangle; do
      local rules
      rules=$("$ipt" -t "$table" -S 2>/dev/null) || continue
      # rules that jump to a KUBE- chain, from chains that are not
      while read -r rule; do
        [[ -n $rule ]] || continue
        eval "$ipt -t $table ${rule/-A /-D }" 2>/dev/null || true
      done < <(grep -E '^-A [^ ]+ .*-j KUBE-' <<<"$rules" | grep -vE '^-A KUBE-' || true)
      for chain in $(sed -n 's/^-N \(KUBE-[^ ]*\)$/\1/p' <<<"$rules"); do
        "$ipt" -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $(sed -n 's/^-N \(KUBE-[^ ]*\)$/\1/p' <<<"$rules"); do
        "$ipt" -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

remove_cgroups() { # what the kubelet and its pods made: kubepods under every hierarchy
  local d
  for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods /sys/fs/cgroup/*/kubepods.slice; do
    [[ -d $d ]] || continue
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
}

cmd_down() {
  [[ $(id -u) == 0 ]] || die "run as root"
  # the kubelet first, so it restarts nothing; then every pod's processes
  stop kubelet
  remove_containers
  local n
  for n in kube-scheduler kube-controller-manager coredns kube-apiserver etcd containerd; do stop "$n"; done
  # shims that outlived their containerd (a crash): theirs name its socket
  local pid
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCK" || true); do kill -KILL "$pid" 2>/dev/null || true; done
  # mounts: the pods' volumes, rootfs, shm and netns, deepest first
  local m
  while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done < <(
    findmnt -rn -o TARGET | grep -E "^($BASE|$RUN)(/|$)" | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-)
  remove_iptables
  ip link del "$BRIDGE" 2>/dev/null || true
  remove_cgroups
  # what the kubelet and CNI write outside the node's directories
  find /var/log/containers -maxdepth 1 -type l -lname "$BASE/*" -delete 2>/dev/null || true
  rm -f /var/lib/cni/results/"$CNI_NET"-* 2>/dev/null || true
  # the kubelet's device-plugin socket is at a fixed path, whatever its root dir
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock
  if [[ -e $BASE/host.saved ]]; then
    local what arg
    while read -r what arg; do
      case $what in
      sysctl) sysctl -qw "$arg" || true ;;
      rmdir) find "$arg" -depth -type d -empty -delete 2>/dev/null || true ;;
      esac
    done <"$BASE/host.saved"
  fi
  rm -rf "$BASE" "$RUN"
  log "down: nothing of the node is left (the build cache $CACHE stays; purge removes it)"
}

cmd_purge() {
  cmd_down
  rm -rf "$CACHE"
  docker image rm "$IMAGE" >/dev/null 2>&1 || true
}

cmd_status() {
  local n
  for n in etcd containerd kube-apiserver kube-controller-manager kube-scheduler coredns kubelet; do
    if [[ -e $RUN/pids/$n ]] && kill -0 "$(cat "$RUN/pids/$n")" 2>/dev/null; then
      echo "$n running (pid $(cat "$RUN/pids/$n"))"
    else
      echo "$n not running"
    fi
  done
  [[ -e $KUBECONFIG ]] && kubectl get nodes -o wide 2>/dev/null || true
}

case ${1:-} in
build) cmd_build ;;
up) cmd_up ;;
down) cmd_down ;;
purge) cmd_purge ;;
status) cmd_status ;;
kubectl) shift; kubectl "$@" ;;
env) echo "export KUBECONFIG=$KUBECONFIG PATH=$BIN:\$PATH" ;;
*) echo "usage: $0 build|up|status|down|purge|env|kubectl ARGS..." >&2; exit 2 ;;
esac
