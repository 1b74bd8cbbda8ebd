package delayset

import (
	"context"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Import reads the set of name in vhost, of layout or, when it is "", of
// the layout its objects tell, and infers its spec from its objects; found
// is false when no object of it exists. Objects that explain no set fail
// with an ImportError.
func (s Sets) Import(ctx context.Context, vhost, name string, layout topology.Layout) (Result, bool, error) {
	var actual topology.Topology
	var err error
	if layout == "" {
		actual, err = s.Broker.ReadSetOfAnyLayout(ctx, vhost, name)
	} else {
		actual, err = s.Broker.ReadSetOf(ctx, vhost, name, layout)
	}
	if found, err := setFound(actual, err); !found {
		return Result{}, false, err
	}
	if layout == "" {
		told, err := topology.Infer(name, actual)
		if err != nil {
			return Result{}, false, &ImportError{Err: err, LayoutsMixed: true}
		}
		layout = told.Layout.OrDefault()
		if actual, err = s.Broker.ReadSetOf(ctx, vhost, name, layout); err != nil {
			return Result{}, false, failed(Reading, err)
		}
	}
	inferred, _, err := topology.InferLayout(name, layout, actual)
	if err != nil {
		return Result{}, false, &ImportError{Err: err}
	}
	inferred.Name, inferred.VHost, inferred.Layout = name, vhost, layout.OrDefault()
	spec, err := ResolveWithLevels(inferred)
	if err != nil {
		return Result{}, false, &ImportError{Err: err}
	}
	result, err := readBack(ctx, s.Broker, s.clock(), Remembered{Spec: spec}, actual)
	return result, err == nil, err
}
