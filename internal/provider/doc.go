// Package provider is the Terraform layer of the rabbitmq provider, on the
// terraform-plugin-framework: it turns configuration into planner specs,
// asks internal/topology for the plan, talks to the broker through
// internal/broker, and reports precise diagnostics.
//
// [New] returns the factory providerserver.Serve takes (main.go); the
// [RabbitMQProvider] it makes serves:
//
//   - the resource rabbitmq_delay_queue_set ([NewDelayQueueSetResource],
//     [DelayQueueSetResource]), which declares a whole delay set, drains
//     its older generations and imports existing ones;
//   - the data source rabbitmq_delay_topology ([NewDelayTopologyDataSource],
//     [DelayTopologyDataSource]), which plans a set without a broker;
//   - the functions delay_routing_key ([NewDelayRoutingKeyFunction],
//     [DelayRoutingKeyFunction]) and layout_delay_routing_key
//     ([NewLayoutDelayRoutingKeyFunction], [LayoutDelayRoutingKeyFunction]),
//     which write a message's routing key;
//   - the functions object_name_pattern ([NewObjectNamePatternFunction],
//     [ObjectNamePatternFunction]) and object_name_prefix_pattern
//     ([NewObjectNamePrefixPatternFunction], [ObjectNamePrefixPatternFunction]),
//     which give the least permission pattern of one set, or of every set
//     whose name starts with a prefix.
//
// The provider connects only when an operation needs the broker: Configure
// hands resources a client, or the reason there is none, and the provider's
// clock, by which the resource waits for and judges its draining
// generations (New gives it the machine's; a test builds a provider with
// its own). Package delayset decides what a set does over time (Plan, and
// the verbs Create, Update, Refresh, Import, Destroy); the resource only
// maps: its models to a spec and delayset.Remembered and back, and
// delayset's typed errors and warnings to diagnostics that name its
// attributes. What the data sources share with it is delay_spec_model.go.
package provider
