package broker

// PeekReady and PeekRequest let the acceptance tests make the client's own
// peek and record what the broker does with it.
var (
	PeekReady   = (*Client).peekReady
	PeekRequest = peekRequest
)
