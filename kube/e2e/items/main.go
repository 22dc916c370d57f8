// Command items is the service kube/e2e/run.sh loads from the node's pods:
// GET /items/{key} answers 200 with the key, on every address it is given
// (the node's bridge address, which the pods reach). It is not the testbed:
// it needs no Redis or Postgres, and no process of its is named as the
// testbed's, which .ci/run's check for leftovers kills by name.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18281", "addresses to serve on, comma-separated")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errs := make(chan error, 1)
	var servers []*http.Server
	for _, addr := range strings.Split(*listen, ",") {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /items/{key}", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Replica", addr)
			fmt.Fprintf(w, "{\"id\":%q}\n", r.PathValue("key"))
		})
		s := &http.Server{Addr: addr, Handler: mux}
		servers = append(servers, s)
		go func() { errs <- s.ListenAndServe() }()
		log.Printf("serving on %s", addr)
	}
	select {
	case err := <-errs:
		log.Print(err)
		os.Exit(1)
	case <-ctx.Done():
	}
	for _, s := range servers {
		_ = s.Shutdown(context.Background())
	}
}
