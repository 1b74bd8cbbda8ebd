package delayset

import (
	"context"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Create declares the set of spec, a resolved spec, refusing (ExistsError)
// when objects of it exist already. After a failure part-way the result
// still tells the set, so that no object the broker made is forgotten.
func (s Sets) Create(ctx context.Context, spec topology.Spec) (Result, error) {
	set, err := desired(spec, nil, topology.Topology{})
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	actual, err := s.Broker.ReadSetNamed(ctx, spec.VHost, spec.Name, spec.Layout, set, broker.ReadOptions{})
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	if len(actual.Exchanges)+len(actual.Queues) > 0 {
		return Result{}, &ExistsError{Found: actual}
	}
	result := Result{Remembered: Remembered{Spec: spec, Shown: set}, Set: set}
	err = guardedApply(ctx, s.Broker, spec.VHost, spec.Layout, topology.Diff(set, actual), false)
	result.Declared = declaredMarks(s.Broker, spec.VHost, set.QueueNames())
	if err != nil {
		return result, failed(Applying, err)
	}
	readPlacements(ctx, s.Broker, spec, set, &result)
	return result, nil
}
