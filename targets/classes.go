package targets

import (
	"cmp"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/load"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// RequestClass is one class of a target's traffic (requests:): the name
// its figures are filed under, its share of the rate, its request, and
// its keys. One class is the herd's: the one marked herd, or else the only
// one whose request takes a {key} and has no keys of its own. Its keys are
// the file's keys:, whose hot keys the trigger hits; the others are the
// traffic the herd lands beside (the bystanders).
type RequestClass struct {
	Name   string    `yaml:"name"`
	Weight int       `yaml:"weight"` // its share of the rate: weight over the classes' total
	Herd   bool      `yaml:"herd"`
	Keys   *KeySpace `yaml:"keys"` // a bystander's own keys; none for a fixed request
	// Vegeta is a file of vegeta's HTTP targets, beside the target file:
	// the class's requests, taken in turn, instead of Request (vegeta.go)
	Vegeta  string `yaml:"vegeta"`
	Request `yaml:",inline"`

	vegeta []vegeta.Target // read from Vegeta
}

// Class is one class of a target's load, as the engine sends it.
type Class struct {
	Name    string
	Weight  int
	Herd    bool
	Request load.Request
	// Space is a bystander's own keys; nil: the herd's (the target's
	// Space), or none for a request that takes no key
	Space *KeySpace
	// Vegeta are the class's requests as vegeta's targets, taken in
	// turn; none: Request
	Vegeta []vegeta.Target
}

// Load is c as the load sends it, its own keys drawn with seed.
func (c Class) Load(seed uint64) load.Class {
	return load.Class{Name: c.Name, Weight: c.Weight, Request: c.Request, Source: c.Space.Source(seed), Targets: c.Vegeta}
}

// MaxBody bounds a request's body, inline or from its file.
const MaxBody = 1 << 20

// className is what a class may be called: it is a path in gates
// (requests.NAME.p99_ms) and a column in reports.
var className = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// classes checks the file's request classes: names, weights, each one's
// request and keys, and which is the herd's.
func (c *checker) classes() {
	f := c.f
	if len(f.Requests) == 0 && f.doc.Line("requests") > 0 { // requests: [] would send request: alone, as if it were left out
		c.bad("requests", "empty (accepted: one class or more, such as [{name: product, weight: 6, path: /products/{key}}]; or no requests: key, for request: alone)")
	}
	if len(f.Requests) == 0 {
		return
	}
	if c.f.doc.Line("request") > 0 {
		c.bad("request", "beside requests: (accepted: one of them; request: is requests: of one class)")
	}
	seen := map[string]bool{}
	herd := -1
	for i := range f.Requests {
		rc := &f.Requests[i]
		at := fmt.Sprintf("requests[%d]", i)
		c.classNameWeight(at, rc, seen)
		if rc.Vegeta != "" {
			c.vegetaClass(at, rc)
			continue
		}
		c.requestAt(at, &rc.Request)
		if rc.Herd {
			if herd >= 0 {
				c.bad(at+".herd", "a second herd class, beside %s (accepted: herd: true on one class)", f.Requests[herd].Name)
			}
			herd = i
		}
	}
	if herd < 0 {
		herd = c.soleHerd()
	}
	for i := range f.Requests {
		if f.Requests[i].Vegeta == "" {
			c.classKeys(i, i == herd)
		}
	}
}

// MaxWeight bounds a class's weight: the classes' total stays far from
// overflowing, and a share of one in a million is as fine as a mix gets.
const MaxWeight = 1_000_000

// classNameWeight checks a class's name, its own among seen, and its
// weight, which must be given: none would be a phantom 0.
func (c *checker) classNameWeight(at string, rc *RequestClass, seen map[string]bool) {
	const names = "a name of its own of 1 to 32 lower-case letters, digits, - and _, starting with a letter or digit"
	switch {
	case c.f.doc.Line(at+".name") == 0:
		c.bad(at+".name", "no name (accepted: %s)", names)
	case seen[rc.Name]:
		c.bad(at+".name", "%q twice (accepted: %s)", rc.Name, names)
	case !className.MatchString(rc.Name):
		c.bad(at+".name", "%q (accepted: %s)", rc.Name, names)
	}
	seen[rc.Name] = true
	const weights = "1 to 1000000: the class's share of the rate is its weight over the classes' total"
	switch {
	case c.f.doc.Line(at+".weight") == 0:
		c.bad(at+".weight", "no weight (accepted: %s)", weights)
	case rc.Weight < 1 || rc.Weight > MaxWeight:
		c.bad(at+".weight", "%d out of range (accepted: %s)", rc.Weight, weights)
	}
}

// soleHerd is the one class whose request takes a key and has no keys of
// its own, when no class is marked herd; -1, and a problem, when there is
// not exactly one.
func (c *checker) soleHerd() int {
	var keyed []int
	for i, rc := range c.f.Requests {
		if rc.Keys == nil && rc.Request.load().TakesKey() {
			keyed = append(keyed, i)
		}
	}
	if len(keyed) == 1 {
		return keyed[0]
	}
	c.bad("requests", "%d classes could be the herd's (accepted: herd: true on the one whose keys, the file's keys:, the trigger hits)", len(keyed))
	return -1
}

// classKeys checks what class i's keys are: the herd's are the file's
// keys:, a bystander's its own when its request takes a key.
func (c *checker) classKeys(i int, herd bool) {
	rc := &c.f.Requests[i]
	at := fmt.Sprintf("requests[%d]", i)
	takes := rc.Request.load().TakesKey()
	switch {
	case herd && rc.Keys != nil:
		c.bad(at+".keys", "on the herd's class (accepted: none: the herd's keys are the file's keys:, whose hot keys the trigger hits)")
	case herd && !takes:
		c.bad(at, "the herd's class takes no {key} (accepted: {key} in its path, a query or header value, or its body)")
	case !herd && takes && rc.Keys == nil:
		c.bad(at+".keys", "none, and its request takes {key} (accepted: a key space of its own, as keys:; or no {key}, for a fixed request)")
	case !herd && !takes && rc.Keys != nil:
		c.bad(at+".keys", "its request takes no {key}, so no key is drawn (accepted: {key} in its request, or no keys:)")
	case rc.Keys != nil:
		c.keySpace(at+".keys", rc.Keys)
	}
	rc.Herd = herd
}

// requestAt checks the request at path (request, or a class) and reads
// its body file.
func (c *checker) requestAt(path string, r *Request) {
	if m := r.Method; m != "" && !slices.Contains([]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}, m) {
		c.bad(path+".method", "%q (accepted: GET, HEAD, POST, PUT, PATCH, DELETE)", m)
	}
	if p := r.Path; p != "" && !strings.HasPrefix(p, "/") {
		c.bad(path+".path", "%q does not start with / (accepted: a path such as /items/{key})", p)
	}
	c.headers(path, r.Headers, nil)
	if r.BodyFile != "" {
		if r.Body != "" {
			c.bad(path+".body_file", "beside body (accepted: one of them)")
		}
		b, err := readBody(c.f.resolve(r.BodyFile))
		if err != nil {
			c.bad(path+".body_file", "%v (accepted: a readable file of at most %d bytes, beside the target file or by absolute path)", err, MaxBody)
		}
		r.Body = string(b)
	} else if len(r.Body) > MaxBody {
		c.bad(path+".body", "%d bytes (accepted: at most %d)", len(r.Body), MaxBody)
	}
	if r.Body != "" && (r.Method == "" || r.Method == "GET" || r.Method == "HEAD") && !r.AllowBody {
		c.bad(path+".body", "a body on a %s request (accepted: a POST, PUT, PATCH or DELETE; or allow_body: true, for a service that reads a GET's body)",
			cmp.Or(r.Method, "GET"))
	}
}

// readBody reads a body file of at most MaxBody bytes.
func readBody(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxBody {
		return nil, fmt.Errorf("%s: %d bytes", path, st.Size())
	}
	return os.ReadFile(path)
}

// load is r as the load sends it.
func (r Request) load() load.Request {
	return load.Request{Method: r.Method, Path: r.Path, Query: r.Query, Headers: r.Headers, Body: r.Body}
}

// classesOf are the file's classes as the load sends them, and the herd's
// request; none without requests:.
func classesOf(f *File) ([]Class, load.Request) {
	if len(f.Requests) == 0 {
		return nil, f.Request.load()
	}
	var out []Class
	var herd load.Request
	for _, rc := range f.Requests {
		cl := Class{Name: rc.Name, Weight: rc.Weight, Herd: rc.Herd, Request: rc.Request.load(), Space: rc.Keys, Vegeta: rc.vegeta}
		if rc.Herd {
			herd = cl.Request
		}
		out = append(out, cl)
	}
	return out, herd
}

// vegetaClass checks a class of vegeta targets: nothing of a request
// beside its file, never the herd's; and reads the file.
func (c *checker) vegetaClass(at string, rc *RequestClass) {
	r := rc.Request
	if r.Method != "" || r.Path != "" || len(r.Query) > 0 || len(r.Headers) > 0 || r.Body != "" || r.BodyFile != "" || rc.Keys != nil {
		c.bad(at+".vegeta", "beside a request of its own (accepted: vegeta: alone, its file holding each request, or the class's method, path, query, headers, body and keys without it)")
	}
	if rc.Herd {
		c.bad(at+".herd", "on a class of vegeta targets (accepted: herd: true on a class of its own request, whose {key} takes the hot keys)")
	}
	tgts, err := readVegeta(c.f.resolve(rc.Vegeta))
	if err != nil {
		c.bad(at+".vegeta", "%v", err)
	}
	rc.vegeta = tgts
}
