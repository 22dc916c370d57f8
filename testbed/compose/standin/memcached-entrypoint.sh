#!/bin/sh
# The stand-in memcached image's entrypoint, as the official image's: a
# command that starts with an option is memcached's.
set -e
case "${1:-}" in
-*) set -- memcached "$@" ;;
esac
exec "$@"
