package targets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const mixYAML = `name: shop
endpoints: [http://127.0.0.1:8080]
keys:
  zipf: {from: 1, to: 1000, s: 1.1}
  hot: 10
requests:
  - name: product
    weight: 6
    path: /items/{key}
  - name: checkout
    weight: 2
    method: POST
    path: /checkout
    headers: {Content-Type: application/json, Authorization: "Bearer ${SHOP_TOKEN}"}
    body_file: cart.json
  - name: like
    weight: 1
    method: POST
    path: /items/{key}/likes
    body: '{"item": {key}}'
    keys: {range: {from: 5000, to: 5999}}
`

// A file of request classes: each its weight, request and keys; the herd
// is the only class that takes the file's keys; a body file is read beside
// the file, and a class's header reads the environment.
func TestAFileOfRequestClasses(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cart.json"), []byte(`{"sku": 7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "shop.yaml")
	f, err := ParseFile([]byte(mixYAML), path, env(map[string]string{"SHOP_TOKEN": "t0k"}))
	if err != nil {
		t.Fatalf("ParseFile = %v", err)
	}
	tg := FromFile(f)
	if len(tg.Classes) != 3 {
		t.Fatalf("%d classes; want 3", len(tg.Classes))
	}
	product, checkout, like := tg.Classes[0], tg.Classes[1], tg.Classes[2]
	if !product.Herd || checkout.Herd || like.Herd || tg.Request.Path != "/items/{key}" {
		t.Errorf("herd: product %v, checkout %v, like %v, target's request %q; want product's, the only class on the file's keys",
			product.Herd, checkout.Herd, like.Herd, tg.Request.Path)
	}
	if checkout.Request.Body != `{"sku": 7}` || checkout.Request.Headers["Authorization"] != "Bearer t0k" || checkout.Space != nil {
		t.Errorf("checkout = %+v; want the body file's body, the token read, no keys", checkout)
	}
	if like.Space == nil || like.Space.Range.From != 5000 || like.Load(1).Source == nil || checkout.Load(1).Source != nil {
		t.Errorf("like's keys %+v; want its own range, drawn from; checkout draws none", like.Space)
	}
}

// Each problem of a file's classes, at its line, with what is accepted.
func TestBadRequestClasses(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, MaxBody+1), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := `endpoints: [http://127.0.0.1:8080]
keys: {range: {from: 1, to: 10}}
request: {path: "/items/{key}"}
requests:
  - {name: Product, weight: 0, path: "/items/{key}", herd: true}
  - {name: two, weight: 1, path: "/b/{key}", herd: true, keys: {range: {from: 1, to: 2}}}
  - {name: get-body, weight: 1, path: /c, body: "x"}
  - {name: big, weight: 1, method: POST, path: /d, body_file: big.json}
  - {name: gone, weight: 1, method: POST, path: /e, body_file: nope.json}
  - {name: nokeys, weight: 1, path: "/f/{key}"}
  - {name: unused, weight: 1, path: /g, keys: {list: [a]}}
`
	_, err := ParseFile([]byte(bad), filepath.Join(dir, "bad.yaml"), env(nil))
	if err == nil {
		t.Fatal("ParseFile = nil; want every problem")
	}
	for _, want := range []string{
		`:3: request: beside requests:`,
		`:5: requests[0].name: "Product" (accepted: a name of its own`,
		`:5: requests[0].weight: 0 out of range (accepted: 1 to 1000000`,
		`:6: requests[1].herd: a second herd class, beside Product`,
		`:6: requests[1].keys: on the herd's class`,
		`:7: requests[2].body: a body on a GET request (accepted:`,
		`:8: requests[3].body_file: ` + big + `: 1048577 bytes`,
		`:9: requests[4].body_file: stat ` + filepath.Join(dir, "nope.json"),
		`:10: requests[5].keys: none, and its request takes {key}`,
		`:11: requests[6].keys: its request takes no {key}`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFile error lacks\n  %s\nin\n%v", want, err)
		}
	}
}

// Without a class marked herd, two that could be are refused.
func TestTwoPossibleHerdsAreRefused(t *testing.T) {
	bad := `endpoints: [http://127.0.0.1:8080]
keys: {range: {from: 1, to: 10}}
requests:
  - {name: a, weight: 1, path: "/a/{key}"}
  - {name: b, weight: 1, path: "/b/{key}"}
`
	_, err := ParseFile([]byte(bad), "two.yaml", env(nil))
	if err == nil || !strings.Contains(err.Error(), "two.yaml:3: requests: 2 classes could be the herd's (accepted: herd: true on the one") {
		t.Fatalf("ParseFile = %v; want the two possible herds refused at requests:", err)
	}
}

// A class of vegeta targets is read by vegeta's own targeter, its body
// files beside it; a line vegeta cannot parse is named, and so is a host
// outside the allowed ones.
func TestAClassOfVegetaTargetsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("q.txt", "q=hat")
	write("browse.targets", "GET http://127.0.0.1:8080/browse\nX-Tag: b\n\nPOST http://127.0.0.1:8080/search\n@q.txt\n")
	write("bad.targets", "GET http://127.0.0.1:8080/ok\n\nGET http://127.0.0.1:8080/a\nno header here\n")
	write("far.targets", "GET http://far.example.com/x\n")
	file := func(vegetaFile string, extra string) string {
		return `endpoints: [http://127.0.0.1:8080]
keys: {range: {from: 1, to: 10}}
requests:
  - {name: items, weight: 3, path: "/items/{key}"}
  - {name: browse, weight: 1, vegeta: ` + vegetaFile + extra + `}
`
	}
	f, err := ParseFile([]byte(file("browse.targets", "")), filepath.Join(dir, "t.yaml"), env(nil))
	if err != nil {
		t.Fatalf("ParseFile = %v", err)
	}
	tg := FromFile(f)
	v := tg.Classes[1].Vegeta
	if len(v) != 2 || v[0].URL != "http://127.0.0.1:8080/browse" || v[0].Header.Get("X-Tag") != "b" || string(v[1].Body) != "q=hat" || !tg.Classes[0].Herd {
		t.Fatalf("browse's targets %+v; want vegeta's two, the body read beside the file; items the herd's", v)
	}
	for _, tt := range []struct{ name, vegeta, extra, want string }{
		{"a bad line", "bad.targets", "", filepath.Join(dir, "bad.targets") + ":4: bad header: no header here"},
		{"beside a path", "browse.targets", ", path: /x", "requests[1].vegeta: beside a request of its own"},
		{"the herd", "browse.targets", ", herd: true", "requests[1].herd: on a class of vegeta targets"},
	} {
		_, err := ParseFile([]byte(file(tt.vegeta, tt.extra)), filepath.Join(dir, "t.yaml"), env(nil))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: ParseFile = %v; want %q", tt.name, err, tt.want)
		}
	}
	f, err = ParseFile([]byte(file("far.targets", "")), filepath.Join(dir, "t.yaml"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := FromFile(f).CheckHosts(nil); err == nil || !strings.Contains(err.Error(), "far.example.com") || !strings.Contains(err.Error(), "requests[1].vegeta") {
		t.Errorf("CheckHosts = %v; want far.example.com refused, named at requests[1].vegeta", err)
	}
}

// An arm's header from the environment is marked secret, for the dry run
// to hide; the others are not.
func TestAnArmsSecretHeadersAreMarked(t *testing.T) {
	f, err := ParseFile([]byte(`endpoints: [http://127.0.0.1:8080]
keys: {range: {from: 1, to: 10}}
request: {path: "/items/{key}"}
arms: [{name: lock, headers: {X-Mode: lock, X-Token: "${ARM_TOKEN}"}}]
`), "a.yaml", env(map[string]string{"ARM_TOKEN": "t0k"}))
	if err != nil {
		t.Fatal(err)
	}
	if a := f.Arms[0]; len(a.Secret) != 1 || a.Secret[0] != "X-Token" || a.Headers["X-Token"] != "t0k" {
		t.Errorf("arm %+v; want X-Token alone secret, read from the environment", a)
	}
}
