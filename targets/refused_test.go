package targets

import (
	"strings"
	"testing"
)

// oneRequest is a target file that passes: each case below adds to it.
const oneRequest = `name: t
endpoints: [http://127.0.0.1:1]
request:
  path: /items/{key}
keys:
  range: {from: 1, to: 100}
  hot: 10
`

// twoClasses is oneRequest's traffic as two classes.
const twoClasses = `name: t
endpoints: [http://127.0.0.1:1]
keys:
  range: {from: 1, to: 100}
  hot: 10
requests:
  - name: a
    path: /items/{key}
`

// Each input of #41 is refused at its line and field, saying what was
// wrong and what is accepted: no value is silently a default, and no
// part that cannot work with the rest is kept.
func TestRefusedAtTheirLines(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"a weight that overflows the total", twoClasses + "    weight: 9223372036854775807\n",
			"t.yaml:9: requests[0].weight: 9223372036854775807 out of range (accepted: 1 to 1000000: "},
		{"a class without weight", twoClasses,
			"t.yaml:7: requests[0].weight: no weight (accepted: 1 to 1000000"},
		{"a class name twice", twoClasses + "    weight: 1\n  - name: a\n    weight: 1\n    path: /x\n",
			`t.yaml:10: requests[1].name: "a" twice (accepted: a name of its own`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile([]byte(tc.file), "t.yaml", env(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseFile(%s) = %v; want\n  %s", tc.name, err, tc.want)
			}
		})
	}
}
