# The herdbench binary as a container image: docker-compose.yml runs the API
# replicas from it (`herdbench testbed serve`), as the local provider runs
# them from the same binary.

# build: a static binary, no cgo
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/herdbench ./cmd/herdbench

# run: a small base for its shell and wget, which the healthcheck uses
FROM alpine:3.20
RUN adduser -D -H -u 10001 herdbench
COPY --from=build /out/herdbench /usr/local/bin/herdbench
USER herdbench
EXPOSE 8080
ENTRYPOINT ["herdbench"]
CMD ["testbed", "serve", "--listen", "0.0.0.0:8080"]
