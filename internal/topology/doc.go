// Package topology plans a broker-native delay topology on RabbitMQ: one TTL
// queue per power of two (per power of the radix and nonzero digit), chained
// by topic exchanges and dead-lettering, so that a message whose routing key
// ends in its delay written as N binary digits passes only through the
// queues of its set bits (nonzero digits), largest first, and leaves through
// the set's out exchange after exactly that delay.
//
// The package is pure: it performs no I/O. Package broker reads and
// changes sets on a broker in its types; the provider plans with it.
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
// ([Spec.Layout]: [LayoutNServiceBus], [LayoutCelery]): 28 levels of one
// second, each a topic exchange and a TTL queue of one fixed name, the delay
// written as 28 bits before the key, and exchange-to-exchange bindings
// between the levels; library.go describes it. The library binds its
// destinations from the delivery exchange itself, so the bindings there that
// no route lists are its own ([LibraryBindings]): a set never deletes them
// one by one ([KeepLibraryBindings], [WithoutLibraryBindings]).
//
// # Planning
//
// A [Spec] names a set: its name, vhost, [Layout], levels or max delay,
// resolution, radix ([Radixes], [DefaultRadix]), [QueueType],
// [DeadLetterStrategy], [LeaderLocator] and [Route]s ([DestinationType]),
// whose allowed values [Layouts], [QueueTypes], [DeadLetterStrategies],
// [LeaderLocators] and [DestinationTypes] list ([Layout.OrDefault],
// [Layout.DeclaredByLibrary] tell a layout's kind). [Validate] reports
// every problem at once as [ValidationErrors] of [FieldError]s
// ([ExplicitZero] for a zero the caller was given); [Resolve] gives its
// canonical form, and [NewSet] that of a set being created (its leader
// locator by [UnsetLeaderLocator]). [Plan] turns a resolved spec into the
// [Topology] of [Exchange]s, [Queue]s and [Binding]s, their arguments typed
// ([QueueArguments], [ExchangeArguments], named as RabbitMQ names them by
// [ArgMessageTTL] and its siblings). [LevelsFor] and [MaxDelayFor] convert
// between levels and delays; [MinLevels], [MaxLevels], [MaxTTL] and
// [MaxSetNameLength] are the limits, and [Topology.QueueNames] lists a
// topology's queues. The spec tells its exchanges
// ([Spec.IngestExchange], [Spec.OutExchange], [Spec.UnroutableQueue],
// [Spec.EntryExchange]) and [Names] every object's name ([Names.Ingest],
// [Names.Out], [Names.Unroutable], [Names.Level], [Names.Done],
// [Names.Queue], [Names.LevelDone]), by generation ([Names.Generation]: the
// same methods of [GenerationNames]) and as one pattern
// ([Names.ObjectNamePattern], [Layout.ObjectNamePattern],
// [AnyLayoutObjectNamePattern]; for every set whose name starts with a
// prefix, [PrefixObjectNamePattern]): the least permission patterns too.
//
// # Keys
//
// [KeyFormat] ([Spec.KeyFormat]) writes, reads and checks the routing key of
// a delay ([KeyFormat.Encode], [KeyFormat.Decode], [KeyFormat.CheckKey],
// [KeyFormat.MaxDelay]); [EncodeKey] and [DecodeKey] are its radix-2
// shorthands, [CheckKey] checks a key whatever the set, and [Hops] counts the
// queues a delay passes.
//
// # Changing a set
//
// [Diff] orders the [Change]s ([ChangeKind]) that take an actual topology to
// a desired one, so that no message is lost and no binding left out;
// [Teardown] deletes a whole set in fewer requests. [Infer] explains a live
// topology as a spec (an [*InferError] says why it cannot), [InferLayout]
// when the layout is known. Before diffing, the caller keeps what the broker
// must keep: the parking lot's type ([ParkingLotType], [KeepParkingLot]) and
// a library's bindings; [Align] lists an actual topology in its plan's order
// and [CurrentObjects] leaves out the draining generations' objects.
// [DriftedQueues] names the TTL queues that drifted, which holding messages
// a new generation repairs.
//
// # Generations
//
// The broker cannot change a queue's arguments, so a change of queue type,
// strategy, leader locator, resolution or radix declares a new generation of
// TTL queues and done exchanges (named with ".g<g>") beside the old one,
// which drains through its own chain and is deleted once empty.
// generation.go holds them: a [Generation] is one chain's settings
// ([Spec.CurrentGeneration]; [Generation.Queues], [Generation.Messages],
// [Generation.KeyFormat]); [NextGeneration] numbers a changed spec (at most
// [MaxGeneration]) and [NewGeneration] starts one whatever changed;
// [PlanGenerations] plans the current generation with the draining ones;
// [InferGenerations] reads them back, and [FollowBroker] moves a spec to the
// generation the broker holds after an apply was cut off; [KeepDraining],
// [Holding] and [KeepDrainingQueues] say which draining generations an
// update keeps and keep their queues as they are.
//
// # Rendering
//
// [DefinitionsJSON], [Mermaid] and [BindingTable] render any topology, as
// RabbitMQ definitions JSON, a diagram or a table. [Exchange.String],
// [Queue.String] and [Binding.String] write one object a line, [Lines] a
// list of them, and [LineName] and [QueueTypeInLine] read such a line back;
// [FormatDuration] writes a duration without its zero units.
//
// [Discover] finds every set among the objects of one vhost, in every
// layout, each inferred as an import infers it: a [FoundSet] when its
// objects are exactly its plan, an [UnreadableSet] with the reasons
// otherwise.
package topology
