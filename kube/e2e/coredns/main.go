// Command coredns is CoreDNS with the few plugins the node's cluster DNS
// uses (bind, ready, errors, kubernetes; health and log for debugging), built from CoreDNS's module:
// the whole plugin set would build the cloud providers' SDKs for nothing.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	// in CoreDNS's own order (core/dnsserver/zdirectives.go)
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "log", "kubernetes"}
}

func main() { coremain.Run() }
