// Package brokertest holds fakes of package broker for other packages'
// tests.
//
// [Broker] is an in-memory broker with the method set of *broker.Client
// that a set needs (reading sets, applying changes, counting messages,
// placements), for unit tests of the code over the client: it keeps each
// vhost's exchanges, queues and bindings as topology types, applies
// topology.Change values in order, refuses to delete a queue that holds
// messages as the client does, and answers the counts a test scripts for
// each queue ([Messages]). It records every call ([Call]) for the test to
// assert on. Build one with [New], seed it with [Broker.Declare], script
// it with [Broker.SetMessages] and [Broker.Script].
//
// For tests of *broker.Client itself, a fake of the management HTTP API:
// [NewClient] serves a handler and returns a client of it; [Identity]
// answers the requests by which a client learns its broker's version and
// feature flags; [SteppedQueue] serves one queue whose statistics change
// from read to read, and records the requests. [AMQPPeer], started with
// [StartAMQPPeer], is a fake AMQP 0-9-1 broker for the client's leader
// counts: it answers passive declarations, or hangs while it heartbeats.
package brokertest
