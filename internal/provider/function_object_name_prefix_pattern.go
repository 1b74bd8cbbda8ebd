package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

var _ function.Function = &ObjectNamePrefixPatternFunction{}

// NewObjectNamePrefixPatternFunction is the object_name_prefix_pattern function's constructor.
func NewObjectNamePrefixPatternFunction() function.Function {
	return &ObjectNamePrefixPatternFunction{}
}

// ObjectNamePrefixPatternFunction gives the regular expression that matches
// the names of the exchanges and queues of every set whose name starts with
// a prefix (topology.PrefixObjectNamePattern).
type ObjectNamePrefixPatternFunction struct{}

func (f *ObjectNamePrefixPatternFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "object_name_prefix_pattern"
}

func (f *ObjectNamePrefixPatternFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "The regular expression that matches the names of the exchanges and queues of every delay queue set whose name starts with a prefix.",
		MarkdownDescription: "Returns the regular expression that matches the name of every exchange and queue of every " +
			"set of the default layout whose name starts with `prefix` (`\"team-a.\"` for `team-a.orders`, " +
			"`team-a.billing`, …), of any `radix` and generation, and nothing else: the `configure`, `write` and `read` " +
			"permission a user needs in the vhost to manage those sets, and only those. `write` also needs each route's " +
			"destination. The prefix is literal (a `.` in it matches a dot only); `\"\"` matches the objects of every set. " +
			"For exactly one set, use `object_name_pattern`. Needs no broker.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "prefix",
				MarkdownDescription: "What the names of the sets start with, e.g. `\"team-a.\"`.",
			},
		},
		Return: function.StringReturn{},
	}
}

func (f *ObjectNamePrefixPatternFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var prefix string
	resp.Error = req.Arguments.Get(ctx, &prefix)
	if resp.Error != nil {
		return
	}
	resp.Error = resp.Result.Set(ctx, topology.PrefixObjectNamePattern(prefix))
}
