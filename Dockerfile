# The herdbench binary as a container image: docker-compose.yml runs the API
# replicas from it (`herdbench testbed serve`), as the local provider runs
# them from the same binary.

# The base images are build arguments with the official images as defaults
# (docker-compose.yml passes HERDBENCH_GO_IMAGE and HERDBENCH_RUN_IMAGE):
# behind a registry mirror, name the mirror's.
ARG GO_IMAGE=golang:1.26
ARG RUN_IMAGE=alpine:3.20

# build: a static binary, no cgo
FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/herdbench ./cmd/herdbench

# run: a small base for its shell and wget, which the healthcheck uses; the
# user is numeric, so any base with wget will do
FROM ${RUN_IMAGE}
COPY --from=build /out/herdbench /usr/local/bin/herdbench
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["herdbench"]
CMD ["testbed", "serve", "--listen", "0.0.0.0:8080"]
