// Package commentlimits holds a test that keeps the comments of the
// packages it lists short enough to read at a glance: a package's doc.go
// at most [maxDocLines] lines, and no other run of consecutive // lines
// over [maxCommentBlock]. Measurements and version history belong in
// DESIGN.md, which has room for them. Extend checkedDirs as packages are
// brought within the limits.
package commentlimits
