package provider

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

var _ function.Function = &ObjectNamePatternFunction{}

// NewObjectNamePatternFunction is the object_name_pattern function's constructor.
func NewObjectNamePatternFunction() function.Function {
	return &ObjectNamePatternFunction{}
}

// ObjectNamePatternFunction gives the regular expression that matches the
// names of one set's exchanges and queues (topology.Names.ObjectNamePattern):
// the least permission pattern for managing that set.
type ObjectNamePatternFunction struct{}

func (f *ObjectNamePatternFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "object_name_pattern"
}

func (f *ObjectNamePatternFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "The regular expression that matches the names of one delay queue set's exchanges and queues.",
		MarkdownDescription: "Returns the regular expression that matches the name of every exchange and queue the set " +
			"`name` of the default layout has or may have, of any `radix` and generation (the `.g<g>` names a change " +
			"declares), and nothing else, not even the objects of a set whose name starts with this one's: the " +
			"`configure`, `write` and `read` permission a user needs in the set's vhost to create, change and destroy " +
			"that set alone. `write` also needs each route's destination, e.g. `\"${provider::rabbitmq::object_name_pattern(\"orders\")}|^orders-work$\"`. " +
			"For every set whose name starts " +
			"with a prefix, use `object_name_prefix_pattern`. Needs no broker.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "name",
				MarkdownDescription: "The set's `name`, as the resource's argument takes it.",
			},
		},
		Return: function.StringReturn{},
	}
}

func (f *ObjectNamePatternFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var name string
	resp.Error = req.Arguments.Get(ctx, &name)
	if resp.Error != nil {
		return
	}
	if resp.Error = checkSetName(name); resp.Error != nil {
		return
	}
	resp.Error = resp.Result.Set(ctx, topology.Names(name).ObjectNamePattern())
}

// checkSetName refuses, against the first argument, a name that the
// resource's name argument refuses.
func checkSetName(name string) *function.FuncError {
	var problems argumentProblems
	var invalid topology.ValidationErrors
	if errors.As(topology.Validate(topology.Spec{Name: name, VHost: defaultVHost, Levels: 1, Resolution: time.Second}), &invalid) {
		for _, problem := range invalid {
			if problem.Field == "name" {
				problems.add(0, problem.Message)
			}
		}
	}
	return problems.err
}
