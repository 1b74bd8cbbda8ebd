package topology

import (
	"fmt"
	"strconv"
)

// A quorum queue's initial group size is how many nodes hold a replica of
// it (x-quorum-initial-group-size, RabbitMQ's word). The broker fixes a
// queue's members when it declares it: the node that declares it, and the
// running nodes that hold the fewest quorum queue members (one at random
// once the cluster holds 1,000 queues), up to the size, or every node when
// the cluster has no more (rabbit_queue_location:select_members in 3.10.8
// and 4.3.5). The argument is part of the queue's equivalence, so it cannot
// change in place, and no policy sets it: a set's change of it goes
// through a new generation, like a change of queue type.

// groupSizeField is the attribute a problem with the group size is about.
const groupSizeField = "quorum_initial_group_size"

// quorumGroupSize refuses a group size below 1 and one for classic queues,
// which have a single node and no replicas; queueType is the spec's
// (unset: quorum).
func (v *specValidator) quorumGroupSize(size int, queueType QueueType) {
	switch {
	case size < 0:
		v.addErr(groupSizeBelowOne(size))
	case size > 0 && queueType == QueueTypeClassic:
		v.add(groupSizeField, -1, "applies to quorum queues only: a classic queue lives on one node and has no replicas; "+
			"leave it unset, or set queue_type = %q; got %d", QueueTypeQuorum, size)
	}
}

// groupSizeBelowOne refuses a group size below 1, which the broker refuses
// too (0 is refused as a value of zero, a negative size as not an
// unsigned integer).
func groupSizeBelowOne(size int) *FieldError {
	return &FieldError{Field: groupSizeField, Route: -1, Message: fmt.Sprintf(
		"must be at least 1 (the nodes that hold a replica of each quorum queue), got %d", size)}
}

// refuseGroupSize refuses any group size in a library's layout: the
// library declares its queues without the argument, and no policy sets it.
func (lib *library) refuseGroupSize(v *specValidator, size int) {
	if size == 0 {
		return
	}
	v.add(groupSizeField, -1, "must be unset in the %s layout: %s declares its queues without %s, and a queue declared "+
		"with other arguments than the library's fails the library's own declaration; no policy sets it: to keep the "+
		"queues on fewer nodes, set the broker's quorum_queue.initial_cluster_size (every quorum queue declared without "+
		"the argument), or change their members once declared (rabbitmq-queues shrink and grow, or from RabbitMQ 3.13 "+
		"the management API's /api/queues/quorum/<vhost>/<queue>/replicas/add and /delete); got %d",
		lib.layout, lib.product, ArgQuorumInitialGroupSize, size)
}

// inferGroupSize reads x-quorum-initial-group-size from the level queues:
// none, or one size of at least 1 that all of them share.
func inferGroupSize(levelQueues []levelQueue) (int, []string) {
	return sharedArgument[int]{name: ArgQuorumInitialGroupSize,
		value:    func(lq levelQueue) int { return lq.queue.Arguments.QuorumInitialGroupSize },
		valid:    func(size int) bool { return size >= 0 },
		expected: "a delay set's queues have a size of at least 1 or none"}.infer(levelQueues)
}

// groupSizeValue spells a group size in a reason.
func groupSizeValue(size int) string {
	if size == 0 {
		return absent
	}
	return strconv.Itoa(size)
}
