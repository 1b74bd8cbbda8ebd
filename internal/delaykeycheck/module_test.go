package delaykeycheck

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The modules the tests serve: delaykey, which publishers `go get`, as this
// checkout would be released (tag delaykey/v0.1.0), beside the provider's
// own module at the same version (tag v0.1.0), which the Go module proxy
// serves too once both are tagged; and standInModule, a stand-in for a
// module a publisher already requires: golang.org/x/text, on the versions
// the issue saw moved (v0.25.0 to v0.36.0, the provider's). See
// serveStandIn.
const (
	delaykeyModule = "github.com/delayqueue/terraform-provider-rabbitmq/delaykey"
	providerModule = "github.com/delayqueue/terraform-provider-rabbitmq"
	moduleVersion  = "v0.1.0"
	standInModule  = "golang.org/x/text"
)

// TestGoGetFromScratchModule does what a Go service does to use the
// package, offline: `go get` it into a module of its own and build a
// program with it. The service's module is on go 1.23.0 and already
// requires golang.org/x/text v0.25.0; `go get` must change neither line,
// nor add any but delaykey's, before and after `go mod tidy`. The modules
// come from a proxy directory this test writes and nowhere else; the
// module cache is the test's own. A build of the service then downloads
// delaykey's zip, which must hold its package and nothing more, and the
// stand-in's.
func TestGoGetFromScratchModule(t *testing.T) {
	goBin := goCommand(t)
	root := repositoryRoot(t, goBin)
	proxy := t.TempDir()
	serve(t, proxy, delaykeyModule, moduleVersion, releaseFiles(t, filepath.Join(root, "delaykey")))
	serve(t, proxy, providerModule, moduleVersion, releaseFiles(t, root))
	for _, version := range []string{"v0.25.0", "v0.36.0"} {
		serveStandIn(t, proxy, version)
	}
	scratch := scratchPublisher(t)
	getCache := filepath.Join(t.TempDir(), "modcache")
	env := offlineEnv(proxy, getCache)

	run(t, scratch, env, goBin, "get", delaykeyModule+"@"+moduleVersion)
	checkPublisherGoMod(t, "after go get", run(t, scratch, env, goBin, "mod", "edit", "-json"))
	run(t, scratch, env, goBin, "mod", "tidy")
	checkPublisherGoMod(t, "after go mod tidy", run(t, scratch, env, goBin, "mod", "edit", "-json"))
	// `go get` of a package path also looks for the package in every module
	// whose path is a prefix of it and has that version: the provider's. It
	// is no requirement, and a build does not download it again.
	t.Logf("go get downloaded: %v", downloadedZips(t, getCache))

	buildCache := filepath.Join(t.TempDir(), "modcache")
	env = offlineEnv(proxy, buildCache)
	if got, want := run(t, scratch, env, goBin, "run", "."), "orders.2.5 <nil> v0.25.0\n"; got != want {
		t.Errorf("the scratch program printed %q, want %q", got, want)
	}
	deps := strings.Fields(run(t, scratch, env, goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "."))
	if want := []string{delaykeyModule, standInModule + "/standin", "example.com/publisher"}; !slices.Equal(deps, want) {
		t.Errorf("the scratch program builds %v, want only %v", deps, want)
	}
	checkBuildDownloads(t, buildCache)
}

// scratchPublisher writes the service's module: on go 1.23.0, requiring
// the stand-in golang.org/x/text v0.25.0, whose package it uses so that
// `go mod tidy` keeps the requirement; its program prints a routing key
// and the stand-in's version.
func scratchPublisher(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/publisher\n\ngo 1.23.0\n\nrequire "+standInModule+" v0.25.0\n")
	write(t, filepath.Join(dir, "main.go"), `package main

import (
	"fmt"
	"time"

	"`+delaykeyModule+`"
	"`+standInModule+`/standin"
)

func main() {
	key, err := delaykey.Format{Levels: 2, Radix: 16, Resolution: time.Second}.RoutingKey("orders", 37*time.Second)
	fmt.Println(key, err, standin.Version)
}
`)
	return dir
}

// checkPublisherGoMod checks the service's go.mod (`go mod edit -json`):
// its go line as it was, no toolchain line, and exactly its own
// requirement and delaykey's, at the versions it asked for.
func checkPublisherGoMod(t *testing.T, when, goModJSON string) {
	t.Helper()
	var goMod struct {
		Go        string
		Toolchain *struct{ Name string }
		Require   []struct{ Path, Version string }
	}
	if err := json.Unmarshal([]byte(goModJSON), &goMod); err != nil {
		t.Fatal(err)
	}
	if goMod.Go != "1.23.0" || goMod.Toolchain != nil {
		t.Errorf("%s, the scratch module's go.mod says go %s (toolchain %v), want go 1.23.0 and no toolchain line: "+
			"delaykey's go line is above the publisher's", when, goMod.Go, goMod.Toolchain)
	}
	var requires []string
	for _, r := range goMod.Require {
		requires = append(requires, r.Path+"@"+r.Version)
	}
	slices.Sort(requires)
	if want := []string{delaykeyModule + "@" + moduleVersion, standInModule + "@v0.25.0"}; !slices.Equal(requires, want) {
		t.Errorf("%s, the scratch module requires %v, want exactly %v: delaykey's go.mod has requirements", when, requires, want)
	}
}

// checkBuildDownloads checks the module zips a build of the service
// downloaded into its module cache: delaykey's and the stand-in's only,
// and delaykey's holding nothing but its package (Go files at its root),
// go.mod, LICENSE and README.md.
func checkBuildDownloads(t *testing.T, modCache string) {
	t.Helper()
	zips := downloadedZips(t, modCache)
	var modules []string
	for _, z := range zips {
		modules = append(modules, z.module)
	}
	if want := []string{delaykeyModule + "@" + moduleVersion, standInModule + "@v0.25.0"}; !slices.Equal(modules, want) {
		t.Fatalf("a build of the scratch module downloaded %v, want only %v", zips, want)
	}
	files := zipContents(t, zips[0].name)
	t.Logf("%s: %s", zips[0], strings.Join(files, " "))
	for _, f := range files {
		if strings.Contains(f, "/") || (!strings.HasSuffix(f, ".go") && f != "go.mod" && f != "LICENSE" && f != "README.md") {
			t.Errorf("delaykey's module zip holds %s: only the package's Go files, go.mod, LICENSE and README.md belong there", f)
		}
	}
}

// moduleZip is a module zip in a module cache.
type moduleZip struct {
	module string // module@version
	name   string // the file
	size   int64
}

func (z moduleZip) String() string { return fmt.Sprintf("%s (%d bytes)", z.module, z.size) }

// downloadedZips lists the module zips in a module cache, by module.
func downloadedZips(t *testing.T, modCache string) []moduleZip {
	t.Helper()
	downloads := filepath.Join(modCache, "cache", "download")
	var zips []moduleZip
	err := filepath.WalkDir(downloads, func(name string, entry fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(name, ".zip") {
			return err
		}
		info, err := entry.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(downloads, name)
		module, version, _ := strings.Cut(strings.TrimSuffix(filepath.ToSlash(rel), ".zip"), "/@v/")
		zips = append(zips, moduleZip{module: module + "@" + version, name: name, size: info.Size()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(zips, func(a, b moduleZip) int { return strings.Compare(a.module, b.module) })
	return zips
}

// zipContents lists a module zip's files, without their module@version/
// prefix.
func zipContents(t *testing.T, name string) []string {
	t.Helper()
	r, err := zip.OpenReader(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var files []string
	for _, f := range r.File {
		_, atVersion, _ := strings.Cut(f.Name, "@") // module paths hold no '@'
		_, file, _ := strings.Cut(atVersion, "/")
		files = append(files, file)
	}
	slices.Sort(files)
	return files
}
