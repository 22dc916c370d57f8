package triggers

import (
	"fmt"
	"strings"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/herdbench/herdbench/herd"
)

// proxy is the toxiproxy proxy in front of dep.
func proxy(env Env, dep string) (*toxiclient.Proxy, error) {
	name, ok := env.Proxies[dep]
	if env.Toxiproxy == nil || !ok {
		return nil, fmt.Errorf("the target has no toxiproxy in front of %s", dep)
	}
	p, err := env.Toxiproxy.Proxy(name)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy proxy %s: %w", name, err)
	}
	return p, nil
}

// proxyNames lists the proxies of env, each with its dependency.
func proxyNames(env Env) string {
	var names []string
	for _, dep := range herd.Dependencies {
		if n, ok := env.Proxies[dep]; ok {
			names = append(names, n+" ("+dep+")")
		}
	}
	return strings.Join(names, ", ")
}
