package delaykeycheck

import (
	"archive/zip"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A module proxy in a directory (GOPROXY=file://…), serving modules as the
// Go module proxy would serve their releases, so that `go get` runs offline.

// goCommand is the go command on PATH; the tests that run it skip without.
func goCommand(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	return goBin
}

// repositoryRoot is the provider's module's directory: this checkout.
func repositoryRoot(t *testing.T, goBin string) string {
	t.Helper()
	return filepath.Dir(strings.TrimSpace(run(t, "", nil, goBin, "env", "GOMOD")))
}

// offlineEnv makes the go command take every module from proxy and nothing
// from the network, the machine's module cache or a workspace, build with
// the Go it is (no toolchain switch), and record checksums without asking
// a checksum database, which knows nothing of the proxy's modules.
func offlineEnv(proxy, modCache string) []string {
	return []string{
		"GOPROXY=file://" + filepath.ToSlash(proxy), "GOPRIVATE=", "GONOPROXY=", "GONOSUMDB=", "GOSUMDB=off",
		"GOMODCACHE=" + modCache, "GOFLAGS=-mod=mod -modcacherw", "GOWORK=off", "GOTOOLCHAIN=local",
	}
}

// serve adds version of module, made of files (by name in the module), to
// the proxy directory.
func serve(t *testing.T, proxy, module, version string, files map[string][]byte) {
	t.Helper()
	dir := filepath.Join(proxy, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, version+".mod"), string(files["go.mod"]))
	write(t, filepath.Join(dir, version+".info"), `{"Version":"`+version+`","Time":"2026-01-01T00:00:00Z"}`)
	writeModuleZip(t, filepath.Join(dir, version+".zip"), module+"@"+version, files)
	list, err := os.OpenFile(filepath.Join(dir, "list"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer list.Close()
	if _, err := list.WriteString(version + "\n"); err != nil {
		t.Fatal(err)
	}
}

// serveStandIn serves a stand-in for golang.org/x/text at version: a go.mod
// on go 1.23.0 without requirements, like the real module's of that time
// save its tools requirement, and one package, standin, that says which
// version it is. It lets a publisher's module require golang.org/x/text
// offline; the module cache it goes into is the test's own.
func serveStandIn(t *testing.T, proxy, version string) {
	t.Helper()
	serve(t, proxy, standInModule, version, map[string][]byte{
		"go.mod": []byte("module " + standInModule + "\n\ngo 1.23.0\n"),
		"standin/version.go": []byte("// Package standin stands in for golang.org/x/text in the provider's tests.\npackage standin\n\n" +
			"// Version is the module version this package was served as.\nconst Version = \"" + version + "\"\n"),
	})
}

// releaseFiles reads the files a release of the module in dir would hold,
// as the Go module proxy zips a tag: those git knows there (tracked, or new
// and not ignored), not those of nested modules, and the repository root's
// LICENSE when the module has none of its own (the go command adds it to
// a module in a subdirectory).
func releaseFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	names := strings.Split(strings.TrimRight(run(t, dir, nil, "git", "ls-files", "--cached", "--others", "--exclude-standard", "."), "\n"), "\n")
	var nested []string
	for _, name := range names {
		if filepath.Base(name) == "go.mod" && name != "go.mod" {
			nested = append(nested, filepath.Dir(name)+"/")
		}
	}
	files := map[string][]byte{}
	for _, name := range names {
		if slices.ContainsFunc(nested, func(prefix string) bool { return strings.HasPrefix(name, prefix) }) {
			continue
		}
		if data, ok := regularFile(t, filepath.Join(dir, name)); ok {
			files[name] = data
		}
	}
	if _, ok := files["LICENSE"]; !ok {
		top := strings.TrimSpace(run(t, dir, nil, "git", "rev-parse", "--show-toplevel"))
		if data, ok := regularFile(t, filepath.Join(top, "LICENSE")); ok {
			files["LICENSE"] = data
		}
	}
	return files
}

// regularFile reads name if it is a regular file; not if it is gone (git
// still lists a file deleted in the working tree) or is a link.
func regularFile(t *testing.T, name string) ([]byte, bool) {
	t.Helper()
	info, err := os.Lstat(name)
	if os.IsNotExist(err) || (err == nil && !info.Mode().IsRegular()) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data, true
}

// writeModuleZip writes files under prefix (module@version), as a module
// proxy serves a version.
func writeModuleZip(t *testing.T, name, prefix string, files map[string][]byte) {
	t.Helper()
	out, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	z := zip.NewWriter(out)
	for _, file := range slices.Sorted(maps.Keys(files)) {
		w, err := z.Create(prefix + "/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(files[file]); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
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

func write(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
