package main

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// fence opens or closes a fenced code block, indented or not (in a list).
var fence = regexp.MustCompile("^\\s*(```|~~~)")

// codeSpan is an inline code span of one or two backticks.
var codeSpan = regexp.MustCompile("``[^`]*``|`[^`\n]*`")

// prose is text with its code blanked out, fenced blocks and inline spans,
// so that what looks like a link inside code is not checked.
func prose(text string) string {
	lines := strings.Split(text, "\n")
	inFence := false
	for i, line := range lines {
		if fence.MatchString(line) {
			inFence = !inFence
			lines[i] = ""
			continue
		}
		if inFence {
			lines[i] = ""
			continue
		}
		lines[i] = codeSpan.ReplaceAllStringFunc(line, func(span string) string {
			return strings.Repeat(" ", len(span))
		})
	}
	return strings.Join(lines, "\n")
}

// heading matches an ATX heading, "## Text", with optional closing #s.
var heading = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)

// htmlAnchor matches an HTML anchor's name, <a id="x"> or <a name="x">,
// which tfplugindocs writes before each nested schema.
var htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)

// inlineLink is a Markdown link or image in a heading, whose text counts.
var inlineLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// pageAnchors are the fragments a link to a Markdown page may name: each
// heading's, as GitHub writes it (duplicates get -1, -2, …), and each HTML
// anchor's.
func pageAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			slug := slugify(m[1])
			if n := seen[slug]; n > 0 {
				anchors[slug+"-"+strconv.Itoa(n)] = true
			} else {
				anchors[slug] = true
			}
			seen[slug]++
		}
	}
	return anchors
}

// slugify is GitHub's anchor of a heading's text: lower case, spaces as
// hyphens, and every character but letters, digits, marks, "_" and "-"
// left out ("Faults: `make test-faults`" is "faults-make-test-faults").
func slugify(text string) string {
	text = inlineLink.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
