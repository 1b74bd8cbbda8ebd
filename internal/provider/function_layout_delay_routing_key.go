package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

var _ function.Function = &LayoutDelayRoutingKeyFunction{}

// NewLayoutDelayRoutingKeyFunction is the layout_delay_routing_key function's constructor.
func NewLayoutDelayRoutingKeyFunction() function.Function {
	return &LayoutDelayRoutingKeyFunction{}
}

// LayoutDelayRoutingKeyFunction computes the routing key that delays a
// message in a set of a library's layout, as the library writes it: the
// delay_routing_key function's arguments (levels, resolution, radix) are
// the library's, fixed, so this function takes the layout instead.
type LayoutDelayRoutingKeyFunction struct{}

// The positions of the function's arguments, for errors that name one.
const (
	layoutKeyArgLayout int64 = iota
	layoutKeyArgKey
	layoutKeyArgDelay
)

// libraryLayouts are the layouts this function writes keys for.
var libraryLayouts = []topology.Layout{topology.LayoutNServiceBus, topology.LayoutCelery}

func (f *LayoutDelayRoutingKeyFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "layout_delay_routing_key"
}

func (f *LayoutDelayRoutingKeyFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "The routing key that delays a message in a delay queue set of a library's layout.",
		MarkdownDescription: "Returns the routing key that delays a message by `delay` in a set of the `nservicebus` or " +
			"`celery` `layout`, as the library writes it: the delay in whole seconds as 28 binary digits, most " +
			"significant first, then the key. NServiceBus rounds the delay up to whole seconds, Celery truncates it " +
			"(`int(countdown)`), and so does this function for each. " +
			"`provider::rabbitmq::layout_delay_routing_key(\"nservicebus\", \"Sales\", \"4.2s\")` is " +
			"`\"0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.1.Sales\"` (5 s). Publish it to the set's " +
			"`ingest_exchange` (the top level's exchange, which takes every delay); NServiceBus itself publishes to the " +
			"level exchange of the delay's highest set bit, which routes it alike. For the `default` layout use " +
			"`delay_routing_key`. Needs no broker.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "layout",
				MarkdownDescription: "The set's `layout`: " + quoted(libraryLayouts) + ".",
			},
			function.StringParameter{
				Name: "key",
				MarkdownDescription: "What follows the delay bits and the delivery exchange routes by: an NServiceBus endpoint's " +
					"queue name, a Celery task's routing key. Not empty; with the bits the routing key must fit " +
					fmt.Sprintf("AMQP's %d bytes.", topology.MaxNameLength),
			},
			function.StringParameter{
				Name:                "delay",
				MarkdownDescription: "How long the message waits, as a duration such as `\"90s\"` or `\"36h\"`; from `\"0s\"` to 2^28 − 1 seconds (about 8.5 years).",
			},
		},
		Return: function.StringReturn{},
	}
}

func (f *LayoutDelayRoutingKeyFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var layoutText, key, delayText string
	resp.Error = req.Arguments.Get(ctx, &layoutText, &key, &delayText)
	if resp.Error != nil {
		return
	}
	routingKey, funcErr := layoutDelayRoutingKey(topology.Layout(layoutText), key, delayText)
	if funcErr != nil {
		resp.Error = funcErr
		return
	}
	resp.Error = resp.Result.Set(ctx, routingKey)
}

// layoutDelayRoutingKey checks every argument, reporting each problem
// against its argument, and encodes the key with topology.KeyFormat.
func layoutDelayRoutingKey(layout topology.Layout, key, delayText string) (string, *function.FuncError) {
	var problems argumentProblems
	delay, delayOK := problems.duration(layoutKeyArgDelay, "delay", delayText)
	known := false
	for _, l := range libraryLayouts {
		known = known || l == layout
	}
	if !known {
		problems.add(layoutKeyArgLayout, fmt.Sprintf("must be one of %s, got %q; for the %s layout use the delay_routing_key function, "+
			"which takes the set's levels and resolution", quoted(libraryLayouts), layout, topology.LayoutDefault))
		return "", problems.err
	}
	if !delayOK {
		return "", problems.err
	}
	routingKey, err := topology.KeyFormat{Layout: layout}.Encode(key, delay)
	problems.encodeError(err, map[string]int64{"key": layoutKeyArgKey, "delay": layoutKeyArgDelay})
	if problems.err != nil {
		return "", problems.err
	}
	return routingKey, nil
}
