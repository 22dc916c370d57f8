package testbed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
)

// Registry is the providers a command picks from by name, in the order
// Auto tries them. testbed/providers.Default builds the one herdbench uses.
type Registry struct{ providers []Provider }

// NewRegistry registers ps, in Auto's order. A name registered twice, or
// named Auto, panics.
func NewRegistry(ps ...Provider) *Registry {
	seen := map[string]bool{Auto: true}
	for _, p := range ps {
		if seen[p.Name()] {
			panic("testbed: provider " + strconv.Quote(p.Name()) + " registered twice, or named auto")
		}
		seen[p.Name()] = true
	}
	return &Registry{providers: slices.Clone(ps)}
}

// Names are the accepted values of Options.Provider: Auto, then each
// provider's name.
func (r *Registry) Names() []string {
	names := []string{Auto}
	for _, p := range r.providers {
		names = append(names, p.Name())
	}
	return names
}

// Check is nil when name is Auto or a registered provider, else a
// herd.FieldError on provider naming the accepted values.
func (r *Registry) Check(name string) error {
	if !slices.Contains(r.Names(), name) {
		return herd.FieldErrors{{Field: "provider", Msg: fmt.Sprintf("unknown %q (accepted: %s)", name, strings.Join(r.Names(), ", "))}}
	}
	return nil
}

// Get returns the provider named name.
func (r *Registry) Get(name string) (Provider, error) {
	for _, p := range r.providers {
		if p.Name() == name {
			return p, nil
		}
	}
	if err := r.Check(name); err != nil {
		return nil, err
	}
	return nil, herd.FieldErrors{{Field: "provider", Msg: "auto names no provider: pick one (accepted: " + strings.Join(r.Names()[1:], ", ") + ")"}}
}

// Find returns the testbed running in dir and its provider: the one whose
// state file dir holds. With none, the error wraps ErrNotRunning.
func (r *Registry) Find(ctx context.Context, dir string) (Status, Provider, error) {
	var first error
	for _, p := range r.providers {
		if !p.Recorded(dir) {
			continue
		}
		st, err := p.Status(ctx, dir)
		if err == nil {
			return st, p, nil
		}
		if first == nil {
			first = err
		}
	}
	if first != nil {
		return Status{}, nil, first
	}
	return Status{}, nil, fmt.Errorf("%w in %s", ErrNotRunning, dir)
}

// Status is the testbed running in dir under provider name; with Auto,
// under whichever provider dir records.
func (r *Registry) Status(ctx context.Context, name, dir string) (Status, error) {
	if name == Auto || name == "" {
		st, _, err := r.Find(ctx, dir)
		return st, err
	}
	p, err := r.Get(name)
	if err != nil {
		return Status{}, err
	}
	return p.Status(ctx, dir)
}

// Down stops the testbed in dir under provider name (Auto: the one dir
// records, else the first registered), and says what it removed and kept.
func (r *Registry) Down(ctx context.Context, name, dir string, timeout time.Duration) (string, error) {
	var p Provider
	if name == Auto || name == "" {
		if len(r.providers) == 0 {
			return "", errors.New("testbed: no provider registered")
		}
		p = r.providers[0]
		if i := slices.IndexFunc(r.providers, func(p Provider) bool { return p.Recorded(dir) }); i >= 0 {
			p = r.providers[i]
		}
	} else {
		var err error
		if p, err = r.Get(name); err != nil {
			return "", err
		}
	}
	return p.Down(ctx, dir, timeout)
}

// Choose returns the provider o.Provider names. Auto picks the first
// that is Available, and says which on o.Log, and why.
func (r *Registry) Choose(ctx context.Context, o Options) (Provider, error) {
	if o.Provider != Auto && o.Provider != "" {
		return r.Get(o.Provider)
	}
	var why []string
	for i, p := range r.providers {
		err := p.Available(ctx, o)
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", p.Name(), err))
			continue
		}
		switch {
		case i > 0:
			fmt.Fprintf(cmp.Or(o.Log, io.Discard), "provider: %s (the %s provider cannot run: %s)\n", p.Name(), r.providers[0].Name(),
				strings.ReplaceAll(strings.TrimPrefix(why[0], r.providers[0].Name()+": "), "\n", "; "))
		case len(r.providers) > 1:
			fmt.Fprintf(cmp.Or(o.Log, io.Discard), "provider: %s (it can run here; --provider %s instead)\n", p.Name(), strings.Join(r.Names()[2:], " or "))
		}
		return p, nil
	}
	return nil, fmt.Errorf("no provider can run the testbed:\n%s", strings.Join(why, "\n"))
}

// Ensure returns the testbed running in o.StateDir, whichever provider
// started it, or starts one as o asks. A running testbed is used as it
// is: Running.Ignored lists what o asked for that it does not have.
// Every problem of o is reported at once, as herd.FieldErrors naming the
// options, before anything starts; so is a key space (o.Keys) larger than
// the items the testbed has or would have. A testbed recorded before it
// recorded its items is not checked.
func (r *Registry) Ensure(ctx context.Context, o Options) (*Running, error) {
	o = o.withDefaults()
	run, p, err := r.prepare(ctx, o)
	if err != nil || run != nil {
		return run, err
	}
	fmt.Fprintf(cmp.Or(o.Log, io.Discard), "starting the %s testbed in %s ...\n", p.Name(), o.StateDir)
	st, stop, err := p.Up(ctx, o)
	if err != nil {
		return nil, err
	}
	return &Running{Status: st, Provider: p, Started: true, stop: stop}, nil
}

// Preview is what Ensure(o) would do, doing none of it, with the same
// checks: the running testbed it would use, or, Started set, the one it
// would start, whose Status names only its provider, state directory,
// items and stores (it has no endpoints yet; a store it would run other
// than its role's default is named "to start", with its proxy).
func (r *Registry) Preview(ctx context.Context, o Options) (*Running, error) {
	o = o.withDefaults()
	run, p, err := r.prepare(ctx, o)
	if err != nil || run != nil {
		return run, err
	}
	st := Status{Provider: p.Name(), StateDir: o.StateDir, Items: p.Items(o), Proxies: map[string]string{}}
	for _, s := range store.MustFor(o.Replica).Running() { // checked by prepare
		if !store.IsDefault(s) {
			*s.Addr(&st.Addrs), st.Proxies[s.Name()] = toStart, toStart
		}
	}
	return &Running{Status: st, Provider: p, Started: true}, nil
}

// toStart stands for the address of a part a preview's testbed would run.
const toStart = "to start"

func (o Options) withDefaults() Options {
	o.Provider = cmp.Or(o.Provider, Auto)
	if o.Replica == (replica.Options{}) {
		o.Replica = replica.DefaultOptions
	}
	return o
}

// prepare checks o and returns the running testbed, or the provider that
// is to start one.
func (r *Registry) prepare(ctx context.Context, o Options) (*Running, Provider, error) {
	if err := r.Check(o.Provider); err != nil {
		return nil, nil, err
	}
	if bad := o.Problems(); len(bad) > 0 {
		return nil, nil, bad
	}
	st, p, err := r.Find(ctx, o.StateDir)
	if err == nil {
		if o.Keys > 0 && st.Items > 0 && o.Keys > st.Items {
			return nil, nil, herd.FieldErrors{tooFewItems(o.Keys, st.Items, "the testbed running in "+st.StateDir+" was seeded with",
				"or 'herdbench testbed down', then 'herdbench testbed up --items "+strconv.Itoa(o.Keys)+"'")}
		}
		return &Running{Status: st, Provider: p, Ignored: ignored(o, st)}, nil, nil
	}
	if !errors.Is(err, ErrNotRunning) {
		return nil, nil, err
	}
	if p, err = r.Choose(ctx, o); err != nil {
		return nil, nil, err
	}
	if bad := p.Problems(o); len(bad) > 0 {
		return nil, nil, bad
	}
	if items := p.Items(o); o.Keys > items {
		return nil, nil, herd.FieldErrors{tooFewItems(o.Keys, items, "the "+p.Name()+" testbed would be seeded with", itemsHint(p, o))}
	}
	return nil, p, nil
}

func tooFewItems(keys, items int, where, fix string) *herd.FieldError {
	return &herd.FieldError{Field: "keys", Msg: fmt.Sprintf("%d is more than the %d items %s: keys beyond them are not found (accepted: 1 to %d; %s)",
		keys, items, where, items, fix),
		// told against --items when the user set it and left keys at its default
		Other: &herd.FieldError{Field: "items", Msg: fmt.Sprintf("%d is fewer than keys' default, %d: keys beyond the items are not found (accepted: %d or more; or --keys %d or fewer)",
			items, keys, keys, items)}}
}

// itemsHint is how to get o.Keys items from p: --items, if p honours it.
func itemsHint(p Provider, o Options) string {
	probe := o
	probe.Items, probe.Set = o.Keys, append(slices.Clone(o.Set), "items")
	if p.Items(probe) >= o.Keys && len(p.Problems(probe)) == 0 {
		return "or --items " + strconv.Itoa(o.Keys)
	}
	return "the " + p.Name() + " provider seeds a fixed count: ask for fewer keys"
}

// ignored is what o chose that the running testbed st does not have.
func ignored(o Options, st Status) []Mismatch {
	var out []Mismatch
	if o.Provider != Auto && o.Provider != st.Provider {
		out = append(out, Mismatch{Option: "provider", Asked: o.Provider, Has: st.Provider})
	}
	tiers := OneTier
	if len(st.Edge) > 0 {
		tiers = TwoTiers
	}
	for _, name := range o.Set {
		m := Mismatch{Option: name}
		switch name {
		case "state_dir", "provider":
			continue
		case "replicas":
			m.Asked, m.Has = strconv.Itoa(o.Replicas), strconv.Itoa(len(st.API))
		case "tiers":
			m.Asked, m.Has = strconv.Itoa(o.Tiers), strconv.Itoa(tiers)
		case "items":
			if st.Items == 0 { // recorded before items were: unknown
				continue
			}
			m.Asked, m.Has = strconv.Itoa(o.Items), strconv.Itoa(st.Items)
		case "observability":
			m.Asked, m.Has = strconv.FormatBool(o.Observability), strconv.FormatBool(st.Prometheus != "")
		case "cache":
			m.Asked, m.Has = o.Replica.Cache, store.In(st.Addrs).Cache.Name()
		case "db":
			m.Asked, m.Has = cmp.Or(o.Replica.DB, store.Names(store.DB)[0]), store.In(st.Addrs).DB.Name()
		}
		if m.Asked == "" || m.Asked != m.Has {
			out = append(out, m)
		}
	}
	return out
}
