package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// manySetsResult is one configuration of many sets (one resource block with
// for_each) measured in one vhost condition.
type manySetsResult struct {
	Busy          bool
	Sets          int
	Levels        int // of each set
	Objects       int // exchanges, queues and bindings of all sets
	StateBytes    int64
	Create        measurement
	Plan          measurement // the median (by wall time) of the no-change plans
	PlanNoRefresh measurement // terraform plan -refresh=false, the median likewise
	Destroy       measurement
}

// withRequestsOf is r, timed straight to the broker, with the request
// counts of counted, the same configuration run through the counting proxy.
func (r manySetsResult) withRequestsOf(counted manySetsResult) manySetsResult {
	r.Create.Requests, r.Plan.Requests = counted.Create.Requests, counted.Plan.Requests
	r.PlanNoRefresh.Requests, r.Destroy.Requests = counted.PlanNoRefresh.Requests, counted.Destroy.Requests
	return r
}

// floorResult is Terraform's own cost for as many trivial resources of this
// provider: data sources that plan a set without asking the broker.
type floorResult struct {
	DataSources int
	Plan        measurement
}

// manySetsName is the name of set i of a many-sets configuration.
func manySetsName(i int) string { return fmt.Sprintf("bench-many-%03d", i) }

// manySetsConfig is a configuration of sets (or data sources, when
// dataSources is set) named by manySetsName, one block with for_each.
func (b *bench) manySetsConfig(sets int, dataSources bool) string {
	kind := `resource "rabbitmq_delay_queue_set"`
	settings := fmt.Sprintf("  queue_type = %q\n\n  route {\n    destination = %q\n  }\n", b.cfg.ManySetsQueueType, routeQueue)
	if dataSources {
		kind = `data "rabbitmq_delay_topology"`
	}
	return fmt.Sprintf(`terraform {
  required_providers {
    rabbitmq = {
      source = "delayqueue/rabbitmq"
    }
  }
}

%s "many" {
  for_each  = toset([for i in range(%d) : format("bench-many-%%03d", i)])
  name      = each.key
  vhost     = %q
  max_delay = %q
%s}
`, kind, sets, b.cfg.VHost, b.cfg.ManySetsMaxDelay.String(), settings)
}

// measureManySets creates, plans (with and without refresh) and destroys a
// configuration of many sets.
func (b *bench) measureManySets(ctx context.Context, sets int, busy bool) (manySetsResult, error) {
	spec, err := topology.Resolve(topology.Spec{Name: manySetsName(0), VHost: b.cfg.VHost, MaxDelay: b.cfg.ManySetsMaxDelay,
		QueueType: topology.QueueType(b.cfg.ManySetsQueueType), Routes: []topology.Route{{Destination: routeQueue}}})
	if err != nil {
		return manySetsResult{}, err
	}
	plan, err := topology.Plan(spec)
	if err != nil {
		return manySetsResult{}, err
	}
	result := manySetsResult{Busy: busy, Sets: sets, Levels: spec.Levels,
		Objects: sets * (len(plan.Exchanges) + len(plan.Queues) + len(plan.Bindings))}
	if err := b.writeConfig(b.manySetsConfig(sets, false)); err != nil {
		return manySetsResult{}, err
	}
	condition := map[bool]string{false: "empty vhost", true: "busy vhost"}[busy]
	if !b.direct {
		condition += ", through the counting proxy"
	}
	b.progress.step("%d sets of N=%d, %s: terraform apply (%d objects)", sets, spec.Levels, condition, result.Objects)
	if result.Create, err = b.terraform(ctx, "apply", "-auto-approve"); err != nil {
		return manySetsResult{}, err
	}
	for _, i := range []int{0, sets - 1} {
		name := manySetsName(i)
		spec.Name = name
		want, err := topology.Plan(spec)
		if err != nil {
			return manySetsResult{}, err
		}
		if err := b.checkSet(ctx, name, want); err != nil {
			return manySetsResult{}, err
		}
	}
	state, err := os.Stat(filepath.Join(b.workdir, "terraform.tfstate"))
	if err != nil {
		return manySetsResult{}, err
	}
	result.StateBytes = state.Size()
	label := fmt.Sprintf("%d sets, %s", sets, condition)
	if result.Plan, err = b.medianPlan(ctx, label, "plan", "-detailed-exitcode"); err != nil {
		return manySetsResult{}, err
	}
	if result.PlanNoRefresh, err = b.medianPlan(ctx, label, "plan", "-detailed-exitcode", "-refresh=false"); err != nil {
		return manySetsResult{}, err
	}
	b.progress.step("%s: terraform destroy", label)
	if result.Destroy, err = b.terraform(ctx, "destroy", "-auto-approve"); err != nil {
		return manySetsResult{}, err
	}
	for _, i := range []int{0, sets - 1} {
		if err := b.checkSet(ctx, manySetsName(i), topology.Topology{VHost: b.cfg.VHost}); err != nil {
			return manySetsResult{}, err
		}
	}
	return result, nil
}

// measureFloor plans a configuration of as many data sources as the largest
// many-sets configuration has sets: what Terraform, the plugin protocol and
// the framework cost for that many resources of this provider, with no
// broker and no state to speak of.
func (b *bench) measureFloor(ctx context.Context, dataSources int) (floorResult, error) {
	if err := b.writeConfig(b.manySetsConfig(dataSources, true)); err != nil {
		return floorResult{}, err
	}
	plan, err := b.medianPlan(ctx, fmt.Sprintf("%d data sources (Terraform's floor)", dataSources), "plan")
	return floorResult{DataSources: dataSources, Plan: plan}, err
}

// medianPlan runs a plan command b.cfg.Plans times, each of which must find
// nothing to change and make as many requests as the first, and returns the
// run of median wall time.
func (b *bench) medianPlan(ctx context.Context, label string, args ...string) (measurement, error) {
	var runs []measurement
	for i := range b.cfg.Plans {
		b.progress.step("%s: terraform %v, %d of %d", label, args, i+1, b.cfg.Plans)
		m, err := b.terraform(ctx, args...)
		if err != nil {
			return measurement{}, fmt.Errorf("the plan is not empty, or failed: %w", err)
		}
		if i > 0 && m.Requests != runs[0].Requests {
			return measurement{}, fmt.Errorf("%s: the same plan made %d and then %d requests", label, runs[0].Requests, m.Requests)
		}
		runs = append(runs, m)
	}
	return medianByWall(runs), nil
}

func (b *bench) writeConfig(config string) error {
	return os.WriteFile(filepath.Join(b.workdir, "main.tf"), []byte(config), 0o644)
}

// brokerIdleCPU is the broker's CPU time per second while nobody asks it
// anything: what every operation's broker CPU includes anyway.
func (b *bench) brokerIdleCPU(ctx context.Context) (time.Duration, error) {
	const window = 10 * time.Second
	b.progress.step("measuring the broker's idle CPU for %s", window)
	before, err := machine.ProcessCPU(b.brokerPID)
	if err != nil {
		return 0, err
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(window):
	}
	after, err := machine.ProcessCPU(b.brokerPID)
	return time.Duration(float64(after-before) / window.Seconds()), err
}
