// Command doclinks fails when a Markdown link in the docs directory leads
// outside it, or to a page it does not hold. The docs are published to the
// Terraform Registry, which serves docs/ alone: a link into the rest of the
// repository (../../README.md) works on GitHub and leads nowhere there. Use
// an absolute link to the repository instead.
//
//	go run ./cmd/doclinks docs
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: doclinks DOCS_DIR")
		os.Exit(2)
	}
	problems, err := check(os.DirFS(os.Args[1]))
	if err != nil {
		fmt.Fprintln(os.Stderr, "doclinks:", err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "%s/%s\n", os.Args[1], p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "doclinks: %d links that do not work on the Registry; link to the repository with an absolute URL\n", len(problems))
		os.Exit(1)
	}
}

// link matches the target of an inline Markdown link, "](target)" with an
// optional title, and of a reference definition, "[label]: target".
var link = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|(?m)^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)

// check lists, as "file: problem", each relative link of the Markdown files
// in docs that leads outside docs or to no page of it.
func check(docs fs.FS) ([]string, error) {
	var problems []string
	err := fs.WalkDir(docs, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".md") {
			return err
		}
		text, err := fs.ReadFile(docs, name)
		if err != nil {
			return err
		}
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			target := m[1] + m[2]
			if problem := targetProblem(docs, name, target); problem != "" {
				problems = append(problems, fmt.Sprintf("%s: %s", name, problem))
			}
		}
		return nil
	})
	return problems, err
}

// targetProblem says what is wrong with a link to target from the page
// name, or "" for an absolute URL, an anchor of the page, or a page of
// docs (the Registry's links leave out ".md").
func targetProblem(docs fs.FS, name, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
		return ""
	}
	file, _, _ := strings.Cut(target, "#")
	if strings.HasPrefix(file, "/") {
		return fmt.Sprintf("%s is relative to the site's root, which differs between GitHub and the Registry", target)
	}
	resolved := path.Join(path.Dir(name), file)
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return fmt.Sprintf("%s leads outside the docs directory", target)
	}
	for _, candidate := range []string{resolved, resolved + ".md"} {
		if info, err := fs.Stat(docs, candidate); err == nil && !info.IsDir() {
			return ""
		}
	}
	return fmt.Sprintf("%s leads to no page of the docs directory", target)
}
