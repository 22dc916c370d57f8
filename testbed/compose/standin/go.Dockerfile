# golang:1.26's stand-in, for the herdbench Dockerfile's build stage on a
# machine that cannot pull: this machine's own Go toolchain, and a module
# proxy on disk holding exactly the modules go.mod needs (images.sh fills
# both), so `go mod download` needs no network. A file of its own so the
# other stand-ins' builds do not send the toolchain to the engine.
ARG BASE=herdbench-local/base:bookworm
FROM ${BASE}
COPY go /usr/local/go
COPY goproxy /goproxy
ENV PATH=/usr/local/go/bin:/root/go/bin:$PATH GOPROXY=file:///goproxy GOSUMDB=off GOTOOLCHAIN=local
