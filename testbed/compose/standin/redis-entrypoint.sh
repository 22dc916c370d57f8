#!/bin/sh
# The stand-in redis image's entrypoint: run the command as given; a Redis
# server with protected mode off, as the official image builds it, so
# clients on the compose network are served.
set -e
if [ "${1:-}" = redis-server ]; then
  shift
  exec redis-server "$@" --protected-mode no
fi
exec "$@"
