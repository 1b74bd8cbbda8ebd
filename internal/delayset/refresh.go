package delayset

import (
	"context"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

// Refresh reads the set prior remembers and tells what is to be kept of it
// now; found is false when the set is gone (its vhost, or every object of
// it).
func (s Sets) Refresh(ctx context.Context, prior Remembered) (Result, bool, error) {
	s.Broker.RememberDeclared(prior.Spec.VHost, prior.Declared)
	actual, err := readKnown(ctx, s.Broker, prior, broker.ReadOptions{ShareBindings: true})
	if found, err := setFound(actual, err); !found {
		return Result{}, false, err
	}
	result, err := readBack(ctx, s.Broker, s.clock(), prior, actual)
	return result, err == nil, err
}
