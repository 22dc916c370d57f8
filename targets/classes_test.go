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
		`:5: requests[0].weight: 0 (accepted: 1 or more`,
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
