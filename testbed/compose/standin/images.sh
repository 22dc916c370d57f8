#!/usr/bin/env bash
# Builds the stand-in images the compose testbed's tests run on a Docker
# Engine that cannot pull (see Dockerfile beside this script), and prints
# the variables that point docker-compose.yml at them:
#
#   eval "$(testbed/compose/standin/images.sh)"
#   herdbench testbed up --provider docker
#
# Steps, each skipped when its result is already there:
#   1. a Debian root filesystem with Redis, PostgreSQL 15, Memcached, MariaDB,
#      Prometheus, both exporters and wget (debootstrap), imported as
#      herdbench-local/base;
#   2. the toxiproxy server and CLI, built from the module version go.mod pins;
#   3. a Go image for the herdbench Dockerfile's build stage: this machine's
#      Go toolchain and an on-disk module proxy holding go.mod's modules;
#   4. one image per service: herdbench-local/NAME:TAG.
# An image is rebuilt when the files it is made from change (a label holds
# their hash). Needs root for debootstrap, the docker CLI, and go.
set -euo pipefail
shopt -s nullglob
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache=${HERDBENCH_STANDIN_CACHE:-/var/cache/herdbench-standin}
suite=bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=redis-server,postgresql-15,memcached,mariadb-server,mariadb-client,prometheus,prometheus-redis-exporter,prometheus-postgres-exporter,wget,ca-certificates
base=herdbench-local/base:$suite

log() { echo "standin: $*" >&2; }

# hash of what an image is made from, kept in its label
sum() { cat "$@" | sha256sum | cut -c1-16; }
label() { docker image inspect -f '{{index .Config.Labels "herdbench.standin"}}' "$1" 2>/dev/null || true; }

# 1. the base
base_sum=$(printf '%s %s' "$suite" "$packages" | sha256sum | cut -c1-16)
if [[ $(label "$base") != "$base_sum" ]]; then
  command -v debootstrap >/dev/null || { log "debootstrap missing: apt-get install debootstrap"; exit 1; }
  rootfs="$cache/rootfs-$base_sum"
  if [[ ! -e $rootfs/.complete ]]; then
    log "debootstrap $suite with $packages into $rootfs (a few minutes, once)"
    rm -rf "$rootfs"
    mkdir -p "$rootfs"
    debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
      { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
    chroot "$rootfs" apt-get clean
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/lib/postgresql/15 "$rootfs"/etc/postgresql/15 "$rootfs"/var/lib/mysql
    touch "$rootfs/.complete"
  fi
  log "importing $rootfs as $base"
  tar -C "$rootfs" --exclude=./.complete --exclude=./proc/* --exclude=./sys/* --exclude=./dev/* -c . |
    docker import --change "LABEL herdbench.standin=$base_sum" --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["/bin/bash"]' - "$base" >/dev/null
fi

# 2. and 3. the build contexts: the Dockerfile, the entrypoints and
# toxiproxy in one; the Go image's toolchain and modules in another
ctx="$cache/context"
goctx="$cache/go-context"
mkdir -p "$ctx" "$goctx"
cp "$here/Dockerfile" "$here"/*-entrypoint.sh "$ctx/"
cp "$here/go.Dockerfile" "$goctx/Dockerfile"
toxiproxy=$(cd "$repo" && go list -m -f '{{.Version}}' github.com/Shopify/toxiproxy/v2)
if [[ ! -x $ctx/toxiproxy-server || $(cat "$ctx/toxiproxy.version" 2>/dev/null) != "$toxiproxy" ]]; then
  log "building toxiproxy $toxiproxy from its Go module"
  bin=$(mktemp -d)
  (cd "$repo" && GOBIN="$bin" CGO_ENABLED=0 go install -trimpath \
    "github.com/Shopify/toxiproxy/v2/cmd/server@$toxiproxy" "github.com/Shopify/toxiproxy/v2/cmd/cli@$toxiproxy")
  mv "$bin/server" "$ctx/toxiproxy-server"
  mv "$bin/cli" "$ctx/toxiproxy-cli"
  rm -rf "$bin"
  echo "$toxiproxy" >"$ctx/toxiproxy.version"
fi
goroot=$(go env GOROOT)
gover=$(go env GOVERSION)
if [[ $(cat "$goctx/go.version" 2>/dev/null) != "$gover $(sum "$repo/go.sum")" ]]; then
  log "copying $gover and go.mod's modules into the Go image's context"
  rm -rf "$goctx/go" "$goctx/goproxy"
  cp -a "$goroot" "$goctx/go"
  # a module proxy on disk: what `go mod download` fetches, as files
  (cd "$repo" && GOFLAGS=-mod=mod GOMODCACHE="$goctx/gomod" go mod download)
  mv "$goctx/gomod/cache/download" "$goctx/goproxy"
  chmod -R u+w "$goctx/gomod" && rm -rf "$goctx/gomod"
  echo "$gover $(sum "$repo/go.sum")" >"$goctx/go.version"
fi

# 4. the images
build() { # image context [target]
  local image=$1 dir=$2 want files
  files=("$dir"/Dockerfile "$dir"/*-entrypoint.sh "$dir"/*.version)
  want="$base_sum-$(sum "${files[@]}")"
  if [[ $(label "$image") != "$want" ]]; then
    log "building $image"
    # quiet unless it fails: the engine's legacy builder warns on every build
    if ! out=$(docker build -q ${3:+--target "$3"} --build-arg "BASE=$base" --label "herdbench.standin=$want" -t "$image" "$dir" 2>&1); then
      echo "$out" >&2
      exit 1
    fi
  fi
}
declare -A tags=(
  [redis]=7.0 [postgres]=15 [memcached]=1.6 [mariadb]=10.11 [toxiproxy]=$toxiproxy [redis-exporter]=v1.45.0
  [postgres-exporter]=v0.11.1 [prometheus]=v2 [go]=${gover#go}
)
for target in redis postgres memcached mariadb toxiproxy redis-exporter postgres-exporter prometheus; do
  build "herdbench-local/$target:${tags[$target]}" "$ctx" "$target"
done
build "herdbench-local/go:${tags[go]}" "$goctx"

cat <<VARS
export HERDBENCH_REDIS_IMAGE=herdbench-local/redis:${tags[redis]}
export HERDBENCH_POSTGRES_IMAGE=herdbench-local/postgres:${tags[postgres]}
export HERDBENCH_MEMCACHED_IMAGE=herdbench-local/memcached:${tags[memcached]}
export HERDBENCH_MARIADB_IMAGE=herdbench-local/mariadb:${tags[mariadb]}
export HERDBENCH_TOXIPROXY_IMAGE=herdbench-local/toxiproxy:${tags[toxiproxy]}
export HERDBENCH_REDIS_EXPORTER_IMAGE=herdbench-local/redis-exporter:${tags[redis-exporter]}
export HERDBENCH_POSTGRES_EXPORTER_IMAGE=herdbench-local/postgres-exporter:${tags[postgres-exporter]}
export HERDBENCH_PROMETHEUS_IMAGE=herdbench-local/prometheus:${tags[prometheus]}
export HERDBENCH_GO_IMAGE=herdbench-local/go:${tags[go]}
export HERDBENCH_RUN_IMAGE=$base
VARS
