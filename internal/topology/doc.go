// Package topology plans a broker-native delay topology on RabbitMQ: one TTL
// queue per power of two (per power of the radix and nonzero digit), chained
// by topic exchanges and dead-lettering, so that a message whose routing key
// ends in its delay written as N binary digits passes only through the
// queues of its set bits (nonzero digits), largest first, and leaves through
// the set's out exchange after exactly that delay.
//
// The package is pure: it turns a [Spec] into the exact exchanges, queues and
// bindings of the layout ([Plan]), encodes and decodes routing keys
// ([EncodeKey], [DecodeKey]), computes the ordered changes that take an
// actual topology to the desired one ([Diff]), explains a live topology as a
// spec ([Infer]), and renders a topology as RabbitMQ definitions JSON, a
// Mermaid diagram or a binding table. It performs no I/O.
//
// For a set named "delay" with N levels and resolution R:
//
//	delay.ingest              topic exchange, alternate-exchange delay.unroutable
//	delay.level.kk            queue, x-message-ttl R·2^k, dead-letters to delay.level.kk.done
//	delay.level.kk.done       topic exchange, alternate-exchange delay.unroutable
//	delay.out                 topic exchange, alternate-exchange delay.unroutable
//	delay.unroutable          fanout exchange and queue: nothing is dropped silently
//
// with the bindings ingest → level j on "#.0^(N−1−j).1.*^j", ingest → out on
// "#.0^N", level k done → level j (j < k) on "#.0^(k−1−j).1.*^j", level k done
// → out on "#.0^k", and out → each route's destination on "<key>.*^N".
//
// With a radix r of 4, 8, 16 or 256 ([Spec.Radix]) the delay is written as N
// digits in base r, each a decimal word, and each level has one queue per
// nonzero digit v, delay.r<r>.kk.v (delay.r16.03.15) holding R·v·r^k, all
// dead-lettering into delay.r<r>.kk.done; the bindings read the digits the
// same way, with v in place of 1 ([KeyFormat] writes and reads such keys).
// Radix 2 is the layout above.
//
// A set may instead take the delay layout of NServiceBus (v2) or Celery
// ([Spec.Layout]): 28 levels of one second, each a topic exchange and a
// TTL queue of one fixed name, the delay written as 28 bits before the
// key, and exchange-to-exchange bindings between the levels; library.go
// describes it. The library binds its destinations from the delivery
// exchange itself, so the bindings there that no route lists are its own
// ([LibraryBindings]): a set never deletes them one by one.
//
// [Discover] finds every set among the objects of one vhost, in every
// layout, each inferred as an import infers it: a [FoundSet] when its
// objects are exactly its plan, an [UnreadableSet] with the reasons
// otherwise.
package topology
