package broker

import (
	"net/url"
	"strings"
)

// RedactURL is raw as a message may show it: without a password, and
// without any userinfo when url.Parse finds none in raw although raw has
// an "@" (no URL, or an opaque one such as "user:password@host", whose
// userinfo url.URL.Redacted cannot tell from the rest). Every message, log line and
// diagnostic that names a URL a user gave names it through here.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && (u.User != nil || !strings.Contains(raw, "@")) {
		return u.Redacted()
	}
	scheme, rest, found := strings.Cut(raw, "://")
	if !found {
		scheme, rest = "", raw
	}
	authority, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = "xxxxx@" + authority[at+1:]
	}
	redacted := authority
	if found {
		redacted = scheme + "://" + authority
	}
	if strings.Contains(rest, "/") {
		redacted += "/" + path
	}
	return redacted
}
