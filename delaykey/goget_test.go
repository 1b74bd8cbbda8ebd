package delaykey_test

import (
	"archive/zip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is the provider's module, which holds the package.
const module = "github.com/delayqueue/terraform-provider-rabbitmq"

// TestGoGetFromScratchModule does what a Go service does to use the
// package, offline: `go get` it into a new module and build a program with
// it. The module comes from a proxy directory this test writes (this
// checkout, zipped as a module version), its requirements from the module
// cache the build of this repository filled; the module cache is the
// test's own, so nothing is left behind. It also checks what the service
// pulls in: no package beyond the standard library and this one, and one
// requirement in its go.mod.
func TestGoGetFromScratchModule(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	realCache := strings.TrimSpace(run(t, "", nil, goBin, "env", "GOMODCACHE"))
	root := strings.TrimSpace(run(t, "", nil, goBin, "list", "-m", "-f", "{{.Dir}}", module))

	// A label for this checkout: the proxy serves it as a release would be.
	const version = "v0.1.0"
	proxy := t.TempDir()
	dir := filepath.Join(proxy, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	moduleGoMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, version+".mod"), moduleGoMod)
	write(t, filepath.Join(dir, version+".info"), []byte(`{"Version":"`+version+`","Time":"2026-01-01T00:00:00Z"}`))
	writeModuleZip(t, root, filepath.Join(dir, version+".zip"), module+"@"+version)

	env := []string{
		"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(realCache, "cache", "download")),
		"GOMODCACHE=" + filepath.Join(t.TempDir(), "modcache"),
		"GOFLAGS=-modcacherw", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local",
	}
	scratch := t.TempDir()
	write(t, filepath.Join(scratch, "main.go"), []byte(`package main

import (
	"fmt"
	"time"

	"`+module+`/delaykey"
)

func main() {
	fmt.Println(delaykey.Format{Levels: 2, Radix: 16, Resolution: time.Second}.RoutingKey("orders", 37*time.Second))
}
`))
	run(t, scratch, env, goBin, "mod", "init", "example.com/publisher")
	run(t, scratch, env, goBin, "get", module+"/delaykey@"+version)
	if got := run(t, scratch, env, goBin, "run", "."); got != "orders.2.5 <nil>\n" {
		t.Errorf("the scratch program printed %q", got)
	}
	deps := strings.Fields(run(t, scratch, env, goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "."))
	if want := []string{module + "/delaykey", "example.com/publisher"}; !slices.Equal(deps, want) {
		t.Errorf("the scratch program builds %v, want only %v", deps, want)
	}
	run(t, scratch, env, goBin, "mod", "tidy")
	var goMod struct{ Require []struct{ Path string } }
	if err := json.Unmarshal([]byte(run(t, scratch, env, goBin, "mod", "edit", "-json")), &goMod); err != nil {
		t.Fatal(err)
	}
	if len(goMod.Require) != 1 || goMod.Require[0].Path != module {
		t.Errorf("the scratch module requires %+v after go mod tidy, want only %s", goMod.Require, module)
	}
}

// run runs a command in dir with env added and returns its output; a
// failure fails the test.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func write(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeModuleZip zips the files git knows in root (tracked, or new and not
// ignored) under prefix, as a module proxy serves a version: without the
// directories of nested modules.
func writeModuleZip(t *testing.T, root, name, prefix string) {
	t.Helper()
	files := strings.Split(strings.TrimRight(run(t, root, nil, "git", "ls-files", "--cached", "--others", "--exclude-standard"), "\n"), "\n")
	var nested []string
	for _, f := range files {
		if filepath.Base(f) == "go.mod" && f != "go.mod" {
			nested = append(nested, filepath.Dir(f)+"/")
		}
	}
	out, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	z := zip.NewWriter(out)
	for _, f := range files {
		if slices.ContainsFunc(nested, func(dir string) bool { return strings.HasPrefix(f, dir) }) {
			continue
		}
		info, err := os.Lstat(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		w, err := z.Create(prefix + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}
