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
#   4. the stand-ins' files in one layer over the base (setup.sh), and
#      one image per service, that layer with the official image's
#      settings: herdbench-local/NAME:TAG.
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

# 2. and 3. the build contexts: the entrypoints and toxiproxy in one,
# shared by every stand-in; the Go image's toolchain and modules in another
ctx="$cache/context"
goctx="$cache/go-context"
mkdir -p "$ctx" "$goctx"
cp "$here/setup.sh" "$here"/*-entrypoint.sh "$ctx/"
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

# 4. the images. What the stand-ins add to the base is one layer
# (setup.sh, run once in a container of it); each image is that layer
# committed with its own settings, the official image's: a commit with
# --change sets them all at once, where a Dockerfile's builder would run
# a container per instruction (minutes on an engine over fuse-overlayfs).
layer_sum="$base_sum-$(sum "$ctx"/setup.sh "$ctx"/*-entrypoint.sh "$ctx"/toxiproxy.version)"
layer=herdbench-local/standin:layer
if [[ $(label "$layer") != "$layer_sum" ]]; then
  log "adding the stand-ins' files to $base"
  name="herdbench-standin-setup-$$"
  docker run --name "$name" --user root --entrypoint /bin/sh -v "$ctx:/standin:ro" "$base" /standin/setup.sh >&2
  docker commit --change "LABEL herdbench.standin=$layer_sum" "$name" "$layer" >/dev/null
  docker rm "$name" >/dev/null
fi
image() { # image settings...: the layer with the official image's settings
  local img=$1 want
  shift
  want="$layer_sum-$(printf '%s\n' "$@" | sha256sum | cut -c1-16)"
  [[ $(label "$img") == "$want" ]] && return
  log "committing $img"
  local name changes=(--change "LABEL herdbench.standin=$want") built=()
  for c in "$@"; do
    case $c in
    STOPSIGNAL*) built+=("$c") ;; # commit cannot set it: one builder step
    *) changes+=(--change "$c") ;;
    esac
  done
  name=$(docker create "$layer")
  docker commit "${changes[@]}" "$name" "$img" >/dev/null
  docker rm "$name" >/dev/null
  if ((${#built[@]})); then
    if ! out=$(printf 'FROM %s\n%s\n' "$img" "${built[@]}" | docker build -q -t "$img" - 2>&1); then
      echo "$out" >&2 # quiet unless it fails: the legacy builder warns on every build
      exit 1
    fi
  fi
}
declare -A tags=(
  [redis]=7.0 [postgres]=15 [memcached]=1.6 [mariadb]=10.11 [toxiproxy]=$toxiproxy [redis-exporter]=v1.45.0
  [postgres-exporter]=v0.11.1 [prometheus]=v2 [go]=${gover#go}
)
# redis:7.0-alpine. The official image turns Redis's protected mode off (it
# would refuse every client from another container); so does this one.
image "herdbench-local/redis:${tags[redis]}" 'USER redis' 'WORKDIR /var/lib/redis' 'EXPOSE 6379' \
  'ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]' 'CMD ["redis-server"]'
# postgres:15, with pg_stat_statements (Debian ships it in postgresql-15);
# the POSTGRES_* variables and /docker-entrypoint-initdb.d as the official's
image "herdbench-local/postgres:${tags[postgres]}" 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  'ENV PGDATA=/var/lib/postgresql/data' 'VOLUME /var/lib/postgresql/data' 'USER postgres' 'EXPOSE 5432' 'STOPSIGNAL SIGINT' \
  'ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]' 'CMD ["postgres"]'
image "herdbench-local/memcached:${tags[memcached]}" 'USER memcache' 'EXPOSE 11211' \
  'ENTRYPOINT ["/usr/local/bin/memcached-entrypoint.sh"]' 'CMD ["memcached"]'
image "herdbench-local/mariadb:${tags[mariadb]}" 'VOLUME /var/lib/mysql' 'USER mysql' 'EXPOSE 3306' \
  'ENTRYPOINT ["/usr/local/bin/mariadb-entrypoint.sh"]' 'CMD ["mariadbd"]'
image "herdbench-local/toxiproxy:${tags[toxiproxy]}" 'USER nobody' 'EXPOSE 8474' 'ENTRYPOINT ["/toxiproxy"]' 'CMD ["-host=0.0.0.0"]'
image "herdbench-local/redis-exporter:${tags[redis-exporter]}" 'USER nobody' 'EXPOSE 9121' \
  'ENTRYPOINT ["/usr/bin/prometheus-redis-exporter"]'
image "herdbench-local/postgres-exporter:${tags[postgres-exporter]}" 'USER nobody' 'EXPOSE 9187' \
  'ENTRYPOINT ["/usr/bin/prometheus-postgres-exporter"]'
image "herdbench-local/prometheus:${tags[prometheus]}" 'USER nobody' 'WORKDIR /prometheus' 'EXPOSE 9090' \
  'ENTRYPOINT ["/usr/bin/prometheus"]' 'CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]'
# the Go image: a Dockerfile, for its two large COPYs
go_want="$base_sum-$(sum "$goctx"/Dockerfile "$goctx"/go.version)"
if [[ $(label "herdbench-local/go:${tags[go]}") != "$go_want" ]]; then
  log "building herdbench-local/go:${tags[go]}"
  # quiet unless it fails: the engine's legacy builder warns on every build
  if ! out=$(docker build -q --build-arg "BASE=$base" --label "herdbench.standin=$go_want" -t "herdbench-local/go:${tags[go]}" "$goctx" 2>&1); then
    echo "$out" >&2
    exit 1
  fi
fi

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
