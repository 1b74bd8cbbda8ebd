package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

var _ function.Function = &DelayRoutingKeyFunction{}

// NewDelayRoutingKeyFunction is the delay_routing_key function's constructor.
func NewDelayRoutingKeyFunction() function.Function {
	return &DelayRoutingKeyFunction{}
}

// DelayRoutingKeyFunction computes the routing key that delays a message in a
// delay queue set, with no broker: the same encoding publishers use.
type DelayRoutingKeyFunction struct{}

// The positions of the function's arguments, for errors that name one.
const (
	routingKeyArgKey int64 = iota
	routingKeyArgDelay
	routingKeyArgLevels
	routingKeyArgResolution
	// routingKeyArgRadix is the optional trailing argument, the first of the variadic ones.
	routingKeyArgRadix
)

func (f *DelayRoutingKeyFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "delay_routing_key"
}

func (f *DelayRoutingKeyFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "The routing key that delays a message in a delay queue set.",
		MarkdownDescription: "Returns the routing key to publish to a set's `ingest_exchange` so that the message waits " +
			"`delay` before it leaves through the set's `out_exchange`: the key, then the delay in ticks of " +
			"`resolution`, rounded up (a message never waits less than its delay, to within the broker's millisecond expiry clock), as exactly `levels` digits in base `radix` " +
			"(binary unless given), most significant first, each digit a decimal word. " +
			"`provider::rabbitmq::delay_routing_key(\"orders\", \"5s\", 4, \"1s\")` is `\"orders.0.1.0.1\"`, and " +
			"`provider::rabbitmq::delay_routing_key(\"orders\", \"200s\", 2, \"1s\", 16)` is `\"orders.12.8\"`. " +
			"Pass the set's `levels`, `resolution` and, for a set of another radix than 2, `radix` attributes. " +
			"Needs no broker.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name: "key",
				MarkdownDescription: "The message key: the part of the routing key before the delay digits, which " +
					"routes match. Dot-separated words without `#` or `*`, or `\"\"` for no key; with the digits the " +
					fmt.Sprintf("routing key must fit AMQP's %d bytes.", topology.MaxNameLength),
			},
			function.StringParameter{
				Name:                "delay",
				MarkdownDescription: "How long the message waits, as a duration such as `\"90s\"` or `\"36h\"`; from `\"0s\"` to the set's `max_delay_effective`.",
			},
			function.Int64Parameter{
				Name:                "levels",
				MarkdownDescription: fmt.Sprintf("The set's number of levels, from %d to %d.", topology.MinLevels, topology.MaxLevels),
			},
			function.StringParameter{
				Name:                "resolution",
				MarkdownDescription: "The set's tick, as a duration of whole milliseconds such as `\"1s\"`.",
			},
		},
		VariadicParameter: function.Int64Parameter{
			Name: "radix",
			MarkdownDescription: fmt.Sprintf("Optional, at most one: the set's radix, one of %s; `%d` when left out.",
				numbers(topology.Radixes), topology.DefaultRadix),
		},
		Return: function.StringReturn{},
	}
}

func (f *DelayRoutingKeyFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var key, delayText, resolutionText string
	var levels int64
	var radixes []int64
	resp.Error = req.Arguments.Get(ctx, &key, &delayText, &levels, &resolutionText, &radixes)
	if resp.Error != nil {
		return
	}
	if len(radixes) > 1 {
		resp.Error = function.NewArgumentFuncError(routingKeyArgRadix+1, fmt.Sprintf(
			"the function takes at most one radix after the resolution, got %d: %v", len(radixes), radixes))
		return
	}
	radix := int64(topology.DefaultRadix)
	if len(radixes) == 1 {
		radix = radixes[0]
	}
	routingKey, funcErr := delayRoutingKey(key, delayText, levels, resolutionText, radix)
	if funcErr != nil {
		resp.Error = funcErr
		return
	}
	resp.Error = resp.Result.Set(ctx, routingKey)
}

// delayRoutingKey checks every argument, reporting each problem against its
// argument, and encodes the routing key with topology.KeyFormat.
func delayRoutingKey(key, delayText string, levels int64, resolutionText string, radix int64) (string, *function.FuncError) {
	var problems argumentProblems
	// A delay that is no duration is reported once, by its parse: Encode
	// then gets 0, which no format refuses.
	delay, _ := problems.duration(routingKeyArgDelay, "delay", delayText)
	resolution, resolutionOK := problems.duration(routingKeyArgResolution, "resolution", resolutionText)
	if !resolutionOK {
		return "", problems.err
	}
	// The key's own rules, those of a route's key; its length is the key format's to judge.
	var invalid topology.ValidationErrors
	if errors.As(topology.CheckKey(key), &invalid) {
		for _, problem := range invalid {
			problems.add(routingKeyArgKey, problem.Message)
		}
	}
	if radix == 0 { // the planner would read it as the default
		problems.add(routingKeyArgRadix, topology.ExplicitZero("radix").Message)
		return "", problems.err
	}
	levelCount, levelsOK := intOf(levels)
	radixNumber, radixOK := intOf(radix)
	if !levelsOK {
		problems.add(routingKeyArgLevels, outOfRange(levels))
	}
	if !radixOK {
		problems.add(routingKeyArgRadix, outOfRange(radix))
	}
	if !levelsOK || !radixOK {
		return "", problems.err
	}
	routingKey, err := topology.KeyFormat{Levels: levelCount, Radix: radixNumber, Resolution: resolution}.Encode(key, delay)
	problems.encodeError(err, map[string]int64{
		"key": routingKeyArgKey, "delay": routingKeyArgDelay,
		"levels": routingKeyArgLevels, "resolution": routingKeyArgResolution, "radix": routingKeyArgRadix,
	})
	if problems.err != nil {
		return "", problems.err
	}
	return routingKey, nil
}

// argumentProblems collects one error per problem, each naming its argument.
type argumentProblems struct {
	err *function.FuncError
}

func (p *argumentProblems) add(position int64, message string) {
	p.err = function.ConcatFuncErrors(p.err, function.NewArgumentFuncError(position, message))
}

// encodeError adds an error of topology.KeyFormat.Encode against the
// argument at positions[its field], or as the function's own when it is no
// *topology.FieldError.
func (p *argumentProblems) encodeError(err error, positions map[string]int64) {
	var problem *topology.FieldError
	switch {
	case errors.As(err, &problem):
		p.add(positions[problem.Field], problem.Message)
	case err != nil:
		p.err = function.ConcatFuncErrors(p.err, function.NewFuncError(err.Error()))
	}
}

func (p *argumentProblems) duration(position int64, name, text string) (time.Duration, bool) {
	d, err := time.ParseDuration(text)
	if err != nil {
		p.add(position, fmt.Sprintf("%q is not a duration (the %s); write it like \"500ms\", \"30s\", \"15m\" or \"36h\"", text, name))
		return 0, false
	}
	return d, true
}
