package broker

import (
	"errors"
	"net/url"
	"strings"
	"unicode"
)

// RedactURL is raw as a message may show it: without its userinfo's
// password, and without a userinfo that has no ":" (it may be a token).
// It works on the raw string, not on url.Parse's reading of it, since a
// password holding "/", "?" or "#" ends the authority early for the
// parser: everything between "://" (or the start, without one) and the
// last "@" is the userinfo (splitUserinfo). Every message, log line and
// diagnostic that names a URL a user gave names it through here.
func RedactURL(raw string) string {
	prefix, userinfo, rest, found := splitUserinfo(raw)
	if !found {
		return raw
	}
	if user, _, hasPassword := strings.Cut(userinfo, ":"); hasPassword {
		return prefix + user + ":xxxxx@" + rest
	}
	return prefix + "xxxxx@" + rest
}

// splitUserinfo cuts raw into what precedes its userinfo (the scheme and
// "://"), the userinfo, and what follows its "@", taking the userinfo to
// run to the last "@" of raw. An "@" in a path or query is taken for
// the end of a userinfo too: a URL is then refused or redacted more than it
// needs, never less.
func splitUserinfo(raw string) (prefix, userinfo, rest string, found bool) {
	at := strings.LastIndexByte(raw, '@')
	if at < 0 {
		return "", "", raw, false
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 && i < at {
		start = i + len("://")
	}
	return raw[:start], raw[start:at], raw[at+1:], true
}

// urlScheme is raw's scheme, the text before "://", lower case; "" without one.
func urlScheme(raw string) string {
	scheme, _, found := strings.Cut(raw, "://")
	if !found {
		return ""
	}
	return strings.ToLower(scheme)
}

// parseProblem says, in words of the provider's own, why url.Parse refused
// raw: the parser's errors quote what they refuse (`invalid port ":pa"
// after host`), which may be part of a password.
func parseProblem(raw string, err error) string {
	var escape url.EscapeError
	var host url.InvalidHostError
	switch {
	case strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return "it holds a space or a control character"
	case errors.As(err, &escape):
		return `it holds a "%" escape that is not allowed there (a "%" itself is written %25)`
	case errors.As(err, &host):
		return "its host holds a character that no host name has"
	case strings.Contains(err.Error(), "invalid port"):
		return "its port is not a number"
	case strings.Contains(err.Error(), "missing ']'"):
		return `its IPv6 address has no closing "]"`
	}
	return "it is not a URL"
}
