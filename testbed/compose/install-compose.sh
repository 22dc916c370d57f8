#!/usr/bin/env bash
# Makes `docker compose` (Compose v2) work on this machine, for the tests and
# CI: when the docker CLI has no compose plugin, or only the old Python
# docker-compose 1.x is installed, it builds Compose v2 from its Go module at
# a pinned version and installs it as the CLI plugin. Idempotent and cached:
# a plugin that already answers with a v2 version is kept.
#
#   testbed/compose/install-compose.sh          # install if needed
#   COMPOSE_VERSION=v2.29.7 testbed/compose/install-compose.sh
#
# herdbench itself only ever calls `docker compose`, as users have it.
set -euo pipefail

version="${COMPOSE_VERSION:-v2.29.7}"
plugins="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"

command -v docker >/dev/null || { echo "install-compose: docker CLI not on PATH" >&2; exit 1; }

if out=$(docker compose version --short 2>/dev/null) && [[ $out == 2.* || $out == v2.* ]]; then
  echo "install-compose: docker compose $out is here"
  exit 0
fi

command -v go >/dev/null || { echo "install-compose: go not on PATH, needed to build Compose $version" >&2; exit 1; }
echo "install-compose: building Compose $version from github.com/docker/compose/v2 (a few minutes the first time)"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
# the module's main package is ./cmd; the version is stamped as its release
# builds stamp it, so `docker compose version` says which one this is
GOFLAGS= GOBIN="$bin" CGO_ENABLED=0 go install -trimpath \
  -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$version" \
  "github.com/docker/compose/v2/cmd@$version"
mkdir -p "$plugins"
install -m 0755 "$bin/cmd" "$plugins/docker-compose"
echo "install-compose: installed $plugins/docker-compose: $(docker compose version)"
