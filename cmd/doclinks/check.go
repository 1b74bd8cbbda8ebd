package main

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// repositoryURL is this repository on GitHub; links under it are checked
// against the working tree.
const repositoryURL = "https://github.com/delayqueue/terraform-provider-rabbitmq/"

// link matches the target of an inline Markdown link or image,
// "](target)" with an optional title, and of a reference definition,
// "[label]: target".
var link = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|(?m)^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)

// checker holds what the checks of one run share.
type checker struct {
	repo fs.FS
	// tag is the release tag links into the repository must name.
	tag     string
	anchors map[string]map[string]bool
}

// check lists, as "file: problem", each link of the Markdown pages of paths
// (directories of pages, or pages) in repo that leads nowhere.
func check(repo fs.FS, tag string, paths []string) ([]string, error) {
	c := &checker{repo: repo, tag: tag, anchors: map[string]map[string]bool{}}
	var problems []string
	for _, p := range paths {
		found, err := c.checkPath(path.Clean(p))
		if err != nil {
			return nil, err
		}
		problems = append(problems, found...)
	}
	return problems, nil
}

// checkPath checks a page, or every page of a directory, which its
// relative links must then stay in.
func (c *checker) checkPath(p string) ([]string, error) {
	info, err := fs.Stat(c.repo, p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return c.checkPage(p, "")
	}
	var problems []string
	err = fs.WalkDir(c.repo, p, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".md") {
			return err
		}
		found, err := c.checkPage(name, p)
		problems = append(problems, found...)
		return err
	})
	return problems, err
}

// checkPage checks the links of the page name; site is the directory its
// relative links must stay in, or "" for the whole repository.
func (c *checker) checkPage(name, site string) ([]string, error) {
	text, err := fs.ReadFile(c.repo, name)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, m := range link.FindAllStringSubmatch(prose(string(text)), -1) {
		target := m[1] + m[2]
		if problem := c.targetProblem(name, site, target); problem != "" {
			problems = append(problems, fmt.Sprintf("%s: %s", name, problem))
		}
	}
	return problems, nil
}

// targetProblem says what is wrong with a link to target from the page
// name, or "" when it leads somewhere.
func (c *checker) targetProblem(name, site, target string) string {
	switch {
	case strings.HasPrefix(target, repositoryURL):
		return c.repositoryLinkProblem(target)
	case strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:"):
		return ""
	case strings.HasPrefix(target, "/"):
		return fmt.Sprintf("%s is relative to the site's root, which differs between GitHub and the Registry", target)
	}
	file, fragment, _ := strings.Cut(target, "#")
	if file == "" {
		return c.fragmentProblem(target, name, fragment)
	}
	resolved := path.Join(path.Dir(name), file)
	if site != "" {
		return c.sitePageProblem(target, site, resolved, fragment)
	}
	if outside(".", resolved) {
		return fmt.Sprintf("%s leads outside the repository", target)
	}
	return c.treeProblem(target, resolved, fragment, "")
}

// sitePageProblem checks a relative link of a page of the directory site,
// which resolves to resolved: a page of site, ".md" optional.
func (c *checker) sitePageProblem(target, site, resolved, fragment string) string {
	if outside(site, resolved) {
		return fmt.Sprintf("%s leads outside the %s directory, which the Registry serves alone; "+
			"link to %sblob/%s/… instead", target, site, repositoryURL, c.tag)
	}
	for _, candidate := range []string{resolved, resolved + ".md"} {
		if info, err := fs.Stat(c.repo, candidate); err == nil && !info.IsDir() {
			return c.fragmentProblem(target, candidate, fragment)
		}
	}
	return fmt.Sprintf("%s leads to no page of the %s directory", target, site)
}

// repositoryLinkProblem checks a link into this repository on GitHub:
// blob/<tag>/<file> or tree/<tag>/<directory>, at the release tag, of a
// file or directory the working tree holds. Other pages of the repository
// (its issues, releases) are not checked.
func (c *checker) repositoryLinkProblem(target string) string {
	rest, fragment, _ := strings.Cut(strings.TrimPrefix(target, repositoryURL), "#")
	rest, _, _ = strings.Cut(rest, "?")
	kind, rest, _ := strings.Cut(rest, "/")
	if kind != "blob" && kind != "tree" {
		return ""
	}
	version, file, _ := strings.Cut(rest, "/")
	if version != c.tag {
		return fmt.Sprintf("%s is pinned to %q, not to the release tag %q (the first version of %s)",
			target, version, c.tag, changelog)
	}
	resolved := path.Clean("./" + strings.TrimSuffix(file, "/"))
	if outside(".", resolved) {
		return fmt.Sprintf("%s leads outside the repository", target)
	}
	return c.treeProblem(target, resolved, fragment, kind)
}

// treeProblem checks that the repository holds resolved: a file for
// GitHub's kind "blob", a directory for "tree", either for "".
func (c *checker) treeProblem(target, resolved, fragment, kind string) string {
	info, err := fs.Stat(c.repo, resolved)
	if err != nil {
		return fmt.Sprintf("%s leads to %s, which the repository does not hold", target, resolved)
	}
	switch {
	case kind == "blob" && info.IsDir():
		return fmt.Sprintf("%s names the directory %s: link to it with tree/, not blob/", target, resolved)
	case kind == "tree" && !info.IsDir():
		return fmt.Sprintf("%s names the file %s: link to it with blob/, not tree/", target, resolved)
	case info.IsDir():
		return ""
	}
	return c.fragmentProblem(target, resolved, fragment)
}

// fragmentProblem checks that the page name has the anchor fragment; only
// Markdown pages are read, and "" names the page itself.
func (c *checker) fragmentProblem(target, name, fragment string) string {
	if fragment == "" || !strings.HasSuffix(name, ".md") {
		return ""
	}
	anchors, ok := c.anchors[name]
	if !ok {
		text, err := fs.ReadFile(c.repo, name)
		if err != nil {
			return fmt.Sprintf("%s: %v", target, err)
		}
		anchors = pageAnchors(string(text))
		c.anchors[name] = anchors
	}
	if !anchors[fragment] {
		return fmt.Sprintf("%s: %s has no heading or anchor %q", target, name, fragment)
	}
	return ""
}

// outside says whether the clean path p lies outside the directory dir.
func outside(dir, p string) bool {
	if dir == "." {
		return p == ".." || strings.HasPrefix(p, "../")
	}
	return p != dir && !strings.HasPrefix(p, dir+"/")
}
