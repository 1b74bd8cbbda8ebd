package delaykeycheck

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestModuleStandsAloneOnItsLowestGoLine takes delaykey's module as a
// publisher downloads it (its release files in a directory of their own)
// and builds it with no proxy, no workspace and the Go on PATH whatever the
// go line says. It must require nothing; vet and its own tests must pass on
// its go line, so the line is high enough: the compiler refuses a language
// feature newer than it, vet's stdversion check a newer standard library
// symbol. And vet must fail one minor release lower, because the code
// needs exactly that line, so the line is the lowest: every publisher's
// module below it would have its go line raised by `go get`.
func TestModuleStandsAloneOnItsLowestGoLine(t *testing.T) {
	goBin := goCommand(t)
	dir := t.TempDir()
	for name, data := range releaseFiles(t, filepath.Join(repositoryRoot(t, goBin), "delaykey")) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, name), string(data))
	}
	env := []string{"GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off", "GOTOOLCHAIN=local"}

	var goMod struct {
		Go               string
		Require, Replace []json.RawMessage
		Toolchain        any
	}
	if err := json.Unmarshal([]byte(run(t, dir, env, goBin, "mod", "edit", "-json")), &goMod); err != nil {
		t.Fatal(err)
	}
	if len(goMod.Require)+len(goMod.Replace) > 0 || goMod.Toolchain != nil {
		t.Errorf("delaykey's go.mod has requirements, replacements or a toolchain line: %+v", goMod)
	}
	run(t, dir, env, goBin, "vet", "./...")
	run(t, dir, env, goBin, "test", "-count=1", "./...")

	lower := minorBelow(t, goMod.Go)
	run(t, dir, env, goBin, "mod", "edit", "-go="+lower)
	cmd := exec.Command(goBin, "vet", "./...")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil:
		t.Errorf("delaykey builds on go %s too: lower its go line from %s, so that fewer publishers have theirs raised", lower, goMod.Go)
	case !strings.Contains(string(out), "requires go"+goMod.Go):
		t.Errorf("go vet of delaykey on go %s failed, but not for want of go %s: %v\n%s", lower, goMod.Go, err, out)
	}
}

// minorBelow is the language version one minor release below goLine, which
// must be a language version (1.N): a module's code needs a language
// version and the standard library of one, never a patch release.
func minorBelow(t *testing.T, goLine string) string {
	t.Helper()
	minorText, ok := strings.CutPrefix(goLine, "1.")
	minor, err := strconv.Atoi(minorText)
	if !ok || err != nil || minor < 1 {
		t.Fatalf("delaykey's go line is %q; want a language version, 1.N", goLine)
	}
	return "1." + strconv.Itoa(minor-1)
}
