package local

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/testbed/api"
)

// binaries are the external programs the local testbed runs.
type binaries struct {
	redis     string // redis-server
	initdb    string
	postgres  string
	memcached string // when the replicas' cache is Memcached
	// when the replicas' database is MariaDB, instead of initdb and postgres
	mariadbd, mariadbInstall string
	obs                      obsBinaries // with Config.Observability
}

// pgSearchGlobs are where PostgreSQL's server binaries live when they are not
// on PATH: Debian/Ubuntu, then Homebrew on Apple silicon and on Intel.
var pgSearchGlobs = []string{
	"/usr/lib/postgresql/*/bin",
	"/opt/homebrew/opt/postgresql@*/bin",
	"/usr/local/opt/postgresql@*/bin",
}

// MissingBinaryError says which program is missing and which package
// provides it.
type MissingBinaryError struct {
	Program  string
	Searched string
	Debian   string // apt-get package
	Homebrew string // brew formula
}

func (e *MissingBinaryError) Error() string {
	return fmt.Sprintf("%s not found (searched %s): install it with `apt-get install %s` on Debian/Ubuntu or `brew install %s` with Homebrew",
		e.Program, e.Searched, e.Debian, e.Homebrew)
}

// CheckBinaries reports whether the programs the local testbed runs are
// installed, naming the packages that provide any that are missing.
func CheckBinaries() error {
	_, err := findBinaries(api.DBPostgres)
	return err
}

// CheckBinariesFor is CheckBinaries for replicas of o: their database's
// programs, and memcached when it is their cache.
func CheckBinariesFor(o api.Options) error {
	_, err := findBinaries(o.DB)
	if o.Cache == api.CacheMemcached {
		err = errors.Join(err, CheckMemcached())
	}
	return err
}

// findBinaries locates redis-server and the database's programs: a
// matching initdb and postgres, or with db mariadb mariadbd and
// mariadb-install-db, reporting every missing program at once.
func findBinaries(db string) (binaries, error) {
	var b binaries
	var errs []error
	if p, err := exec.LookPath("redis-server"); err == nil {
		b.redis = p
	} else {
		errs = append(errs, &MissingBinaryError{Program: "redis-server", Searched: "PATH", Debian: "redis-server", Homebrew: "redis"})
	}
	if db == api.DBMariaDB {
		var err error
		if b.mariadbd, b.mariadbInstall, err = findMariaDB(); err != nil {
			errs = append(errs, err)
		}
	} else if dir := postgresBinDir(); dir != "" {
		b.initdb, b.postgres = filepath.Join(dir, "initdb"), filepath.Join(dir, "postgres")
	} else {
		errs = append(errs, &MissingBinaryError{Program: "postgres and initdb",
			Searched: "PATH and " + strings.Join(pgSearchGlobs, ", "), Debian: "postgresql", Homebrew: "postgresql@15"})
	}
	return b, errors.Join(errs...)
}

// CheckMemcached reports whether memcached, which the local testbed runs
// when the replicas' cache is Memcached, is installed.
func CheckMemcached() error {
	_, err := findMemcached()
	return err
}

func findMemcached() (string, error) {
	p, err := exec.LookPath("memcached")
	if err != nil {
		return "", &MissingBinaryError{Program: "memcached", Searched: "PATH", Debian: "memcached", Homebrew: "memcached"}
	}
	return p, nil
}

// postgresBinDir returns a directory holding both initdb and postgres: the
// one on PATH first, else the newest version found in pgSearchGlobs.
func postgresBinDir() string {
	has := func(dir string) bool {
		for _, name := range []string{"initdb", "postgres"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && has(filepath.Dir(real)) {
			return filepath.Dir(real)
		}
		if has(filepath.Dir(p)) {
			return filepath.Dir(p)
		}
	}
	var dirs []string
	for _, g := range pgSearchGlobs {
		m, _ := filepath.Glob(g)
		dirs = append(dirs, m...)
	}
	// newest major version first: the number after "postgresql/" or "@"
	version := func(dir string) int {
		s := strings.TrimSuffix(dir, "/bin")
		i := strings.LastIndexAny(s, "/@")
		v, _ := strconv.Atoi(s[i+1:])
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if has(d) {
			return d
		}
	}
	return ""
}
