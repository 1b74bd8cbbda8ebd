// Package delaykeycheck holds the provider's checks on the delaykey module
// (../../delaykey), which publishers `go get` apart from the provider: its
// tests hold every routing key delaykey writes and reads to the provider's
// own encoder (internal/topology), and `go get` the module from a scratch
// publisher's module, offline, to see what that changes in its go.mod and
// what it downloads. The module cannot run them itself: it requires
// nothing, and the provider's module sees it through a replace directive.
// The package has no code of its own.
package delaykeycheck
