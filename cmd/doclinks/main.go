// Command doclinks fails on a Markdown link that leads nowhere: to a file,
// directory or heading the repository does not have, out of the docs
// directory, or into the repository at another version than the release.
//
//	go run ./cmd/doclinks docs README.md benchmarks/README.md
//
// Each argument, relative to the repository's root (the working directory),
// is a directory of pages or a single page:
//
//   - In a directory (docs), a relative link must lead to a page of the same
//     directory, with or without ".md". The docs are published to the
//     Terraform Registry, which serves docs/ alone: a link into the rest of the
//     repository (../../README.md) works on GitHub and leads nowhere there.
//   - From a single page (README.md, benchmarks/README.md), read on GitHub, a
//     relative link must lead to a file or directory of the repository.
//
// Everywhere, a link into this repository on GitHub,
// https://github.com/delayqueue/terraform-provider-rabbitmq/blob/<tag>/<path>
// (tree/<tag>/<path> for a directory), must name the release tag, the
// version of CHANGELOG.md's first "## X.Y.Z" heading with a "v" before it,
// and a <path> that the working tree holds: the Registry shows the docs of
// that release, and their links show the files of that release. A fragment
// (#heading) of a link to a Markdown page must name a heading or an
// <a id="…"> of that page. Links inside code are not links.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: doclinks DOCS_DIR|PAGE.md... (from the repository's root)")
		os.Exit(2)
	}
	repo := os.DirFS(".")
	problems, err := checkRepository(repo, args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "doclinks:", err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "doclinks: %d links lead nowhere, or nowhere on the Registry\n", len(problems))
		os.Exit(1)
	}
}

// changelog is the file whose first version heading names the release tag.
const changelog = "CHANGELOG.md"

// checkRepository checks the pages of paths in repo against the release
// tag of repo's changelog.
func checkRepository(repo fs.FS, paths []string) ([]string, error) {
	text, err := fs.ReadFile(repo, changelog)
	if err != nil {
		return nil, err
	}
	tag, err := releaseTag(text)
	if err != nil {
		return nil, err
	}
	return check(repo, tag, paths)
}

// versionHeading matches a changelog's version heading, "## 0.1.0 (Unreleased)".
var versionHeading = regexp.MustCompile(`(?m)^## v?(\d+\.\d+\.\d+)\b`)

// releaseTag is the tag of the changelog's first version: the release the
// docs in the tree are published with.
func releaseTag(changelog []byte) (string, error) {
	m := versionHeading.FindSubmatch(changelog)
	if m == nil {
		return "", errors.New(`the changelog has no "## X.Y.Z" heading to take the release tag from`)
	}
	return "v" + string(m[1]), nil
}
