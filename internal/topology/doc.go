// Package topology plans a broker-native delay topology on RabbitMQ: one TTL
// queue per power of the radix and nonzero digit, chained by topic exchanges
// and dead-lettering, so that a message whose routing key ends in its delay's
// digits passes only the queues of its nonzero digits, largest first, and
// leaves through the set's out exchange after that delay, never before.
// DESIGN.md ("The layout") draws the objects, the bindings, the radixes and
// the libraries' layouts (NServiceBus, Celery).
//
// The package is pure: no I/O, no clock. Its invariants: a resolved [Spec]
// plans the same [Topology] every time; [Diff] orders changes so that no
// message is lost and no binding left out; a [Layout] is asked, never
// switched on, and a binding is one whatever the spelling of an unset
// destination type ([Binding.Canonical], [CompareBindings]).
//
// Entry points:
//   - Specs: [Validate] (every problem at once, as [ValidationErrors] of
//     [FieldError]s), [Resolve], [NewSet], [Plan]; the allowed values in
//     [Layouts], [QueueTypes], [DeadLetterStrategies], [LeaderLocators],
//     [DestinationTypes], [Radixes]; [LevelsFor] and [MaxDelayFor].
//   - Names: [Names] and [GenerationNames]; the permission patterns
//     [Layout.ObjectNamePattern], [AnyLayoutObjectNamePattern],
//     [PrefixObjectNamePattern]; a set's ends [Spec.IngestExchange],
//     [Spec.EntryExchange], [Spec.OutExchange], [Spec.UnroutableQueue].
//   - Keys: [KeyFormat] ([KeyFormat.Encode], [KeyFormat.Decode],
//     [KeyFormat.CheckKey]), [EncodeKey], [DecodeKey], [CheckKey], [Hops].
//   - Changes: [Diff] into [Change]s, [Teardown], [Align], [Infer] and
//     [InferLayout] (an [*InferError] says why not), [Discover] of every
//     set of a vhost ([FoundSet], [UnreadableSet]); what a change keeps:
//     [KeepParkingLot], [KeepLibraryBindings], [WithoutLibraryBindings],
//     [CurrentObjects], [DriftedQueues].
//   - Generations (generation.go; DESIGN.md "Generations"): a change the
//     broker cannot make in place declares a new chain beside the old one,
//     which drains: [Generation], [NextGeneration], [NewGeneration],
//     [PlanGenerations], [InferGenerations], [FollowBroker], [KeepDraining],
//     [Holding], [KeepDrainingQueues].
//   - Rendering: [DefinitionsJSON], [Mermaid], [BindingTable], [Lines] and
//     the objects' String methods, read back by [LineName] and
//     [QueueTypeInLine]; [FormatDuration].
package topology
