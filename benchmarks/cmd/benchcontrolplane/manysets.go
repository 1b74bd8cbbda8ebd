package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// manySetsResult is one configuration of many sets in one vhost condition: a
// run through the counting proxy for the requests, then runs straight for the times.
type manySetsResult struct {
	Busy       bool
	Sets       int
	Levels     int // of each set
	Objects    int // exchanges, queues and bindings of all sets
	StateBytes int64
	// Counted is the run through the counting proxy: its requests count,
	// its times, which include the proxy's work, do not.
	Counted manySetsRun
	Runs    []manySetsRun
}

// manySetsRun is one run of a many-sets configuration: terraform's create,
// no-change plans and destroy, and the floors measured just before them.
type manySetsRun struct {
	// LoadAverage is the machine's 1-minute load average when the run began.
	LoadAverage   float64
	Create        measurement
	Plan          measurement // the median (by wall time) of the run's no-change plans
	PlanNoRefresh measurement // terraform plan -refresh=false, the median likewise
	Destroy       measurement
	// The broker doing what create and destroy do the cheapest ways it
	// offers, without terraform and without the provider's checks.
	DeclareFloor measurement // every object declared by parallel requests, 10 sets at a time
	UploadFloor  measurement // every object in one definitions upload
	DeleteFloor  measurement // every queue and exchange deleted by parallel requests, their bindings with them
}

// createFloor is the cheaper of the two ways to declare the sets' objects.
func (r manySetsRun) createFloor() measurement {
	if r.UploadFloor.Wall < r.DeclareFloor.Wall {
		return r.UploadFloor
	}
	return r.DeclareFloor
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
	settings := fmt.Sprintf("  queue_type = %q\n\n  route {\n    destination = %q\n  }\n", manySetsQueueType, routeQueue)
	if dataSources {
		kind = `data "rabbitmq_delay_topology"`
	}
	return fmt.Sprintf(terraformBlock+`%s "many" {
  for_each  = toset([for i in range(%d) : format("bench-many-%%03d", i)])
  name      = each.key
  vhost     = %q
  max_delay = %q
%s}
`, kind, sets, b.cfg.VHost, manySetsMaxDelay.String(), settings)
}

// measureManySets measures a configuration of many sets: once through the
// counting proxy, then manySetsRuns times straight to the broker.
func (b *bench) measureManySets(ctx context.Context, sets int, busy bool) (manySetsResult, error) {
	spec, err := topology.NewSet(topology.Spec{Name: manySetsName(0), VHost: b.cfg.VHost, MaxDelay: manySetsMaxDelay, // as terraform creates them
		QueueType: manySetsQueueType, Routes: []topology.Route{{Destination: routeQueue}}})
	if err != nil {
		return manySetsResult{}, err
	}
	planned := make([]delayset.Remembered, sets) // each set as a state remembers it once created
	for i := range planned {
		spec.Name = manySetsName(i)
		if planned[i], err = remembered(spec); err != nil {
			return manySetsResult{}, err
		}
	}
	first := planned[0].Shown
	result := manySetsResult{Busy: busy, Sets: sets, Levels: spec.Levels,
		Objects: sets * (len(first.Exchanges) + len(first.Queues) + len(first.Bindings))}
	if result.Counted, err = b.runManySets(ctx, &result, planned, 0); err != nil {
		return manySetsResult{}, err
	}
	b.direct = true
	defer func() { b.direct = false }()
	for run := 1; run <= manySetsRuns; run++ {
		timed, err := b.runManySets(ctx, &result, planned, run)
		if err != nil {
			return manySetsResult{}, err
		}
		result.Runs = append(result.Runs, timed)
	}
	return result, nil
}

// runManySets measures the floors (unless counting), then creates, plans and
// destroys the configuration with terraform, and notes the state's size.
func (b *bench) runManySets(ctx context.Context, result *manySetsResult, planned []delayset.Remembered, run int) (manySetsRun, error) {
	timed := manySetsRun{LoadAverage: machine.LoadAverage()}
	sets := result.Sets
	var err error
	condition := vhostCondition(result.Busy) + " vhost"
	label := fmt.Sprintf("%d sets, %s, run %d of %d", sets, condition, run, manySetsRuns)
	if !b.direct {
		label = fmt.Sprintf("%d sets, %s, through the counting proxy", sets, condition)
	} else if err := b.measureFloors(ctx, label, planned, &timed); err != nil {
		return manySetsRun{}, err
	}

	if err := b.writeConfig(b.manySetsConfig(sets, false)); err != nil {
		return manySetsRun{}, err
	}
	b.progress.step("%s: terraform apply (%d objects, load average %.2f)", label, result.Objects, timed.LoadAverage)
	if timed.Create, err = b.terraform(ctx, "apply", "-auto-approve"); err != nil {
		return manySetsRun{}, err
	}
	if err := b.checkFirstAndLast(ctx, len(planned), planned); err != nil {
		return manySetsRun{}, err
	}
	state, err := os.Stat(filepath.Join(b.workdir, "terraform.tfstate"))
	if err != nil {
		return manySetsRun{}, err
	}
	result.StateBytes = state.Size()
	// One plan of each kind per run: the runs give the median.
	if timed.Plan, err = b.medianPlan(ctx, label, 1, "plan", "-detailed-exitcode"); err != nil {
		return manySetsRun{}, err
	}
	if timed.PlanNoRefresh, err = b.medianPlan(ctx, label, 1, "plan", "-detailed-exitcode", "-refresh=false"); err != nil {
		return manySetsRun{}, err
	}
	b.progress.step("%s: terraform destroy", label)
	if timed.Destroy, err = b.terraform(ctx, "destroy", "-auto-approve"); err != nil {
		return manySetsRun{}, err
	}
	return timed, b.checkFirstAndLast(ctx, sets, nil)
}

// checkFirstAndLast asks the broker that the first and the last of sets
// sets are exactly as planned (that they are gone when planned is nil).
func (b *bench) checkFirstAndLast(ctx context.Context, sets int, planned []delayset.Remembered) error {
	for _, i := range []int{0, sets - 1} {
		want := topology.Topology{VHost: b.cfg.VHost}
		if planned != nil {
			want = planned[i].Shown
		}
		if err := b.checkSet(ctx, manySetsName(i), want); err != nil {
			return err
		}
	}
	return nil
}

// measureFloors times the cheapest ways to create and destroy the sets without
// terraform: parallel Creates and forced Destroys, and one definitions upload.
func (b *bench) measureFloors(ctx context.Context, label string, planned []delayset.Remembered, run *manySetsRun) error {
	var err error
	b.progress.step("%s: floors: declares, deletes, definitions upload", label)
	if run.DeclareFloor, err = b.timed(func() error {
		return b.eachSet(planned, func(set delayset.Remembered) error {
			_, err := b.sets.Create(ctx, set.Spec)
			return err
		})
	}); err != nil {
		return fmt.Errorf("declaring the sets straight to the broker: %w", err)
	}
	if err := b.checkFirstAndLast(ctx, len(planned), planned); err != nil {
		return err
	}
	if run.DeleteFloor, err = b.deleteSetsUnchecked(ctx, planned); err != nil {
		return err
	}
	all := topology.Topology{VHost: b.cfg.VHost}
	for _, set := range planned {
		all.Exchanges = append(all.Exchanges, set.Shown.Exchanges...)
		all.Queues = append(all.Queues, set.Shown.Queues...)
		all.Bindings = append(all.Bindings, set.Shown.Bindings...)
	}
	if run.UploadFloor, err = b.timed(func() error { return b.uploadDefinitions(all) }); err != nil {
		return err
	}
	if err := b.checkFirstAndLast(ctx, len(planned), planned); err != nil {
		return err
	}
	_, err = b.deleteSetsUnchecked(ctx, planned)
	return err
}

// deleteSetsUnchecked times forced destroys of every set, in passes until none
// is left (RabbitMQ 3.10 can keep exchanges bound to each other; topology.Teardown).
func (b *bench) deleteSetsUnchecked(ctx context.Context, planned []delayset.Remembered) (measurement, error) {
	var total measurement
	left := planned
	for pass := 1; len(left) > 0; pass++ {
		if pass > 3 {
			return measurement{}, fmt.Errorf("%d sets still have objects after 3 passes of deletes", len(left))
		}
		m, err := b.timed(func() error {
			return b.eachSet(left, func(set delayset.Remembered) error { return b.sets.Destroy(ctx, set, true) })
		})
		if err != nil {
			return measurement{}, fmt.Errorf("deleting the sets straight to the broker: %w", err)
		}
		total.Wall, total.BrokerCPU = total.Wall+m.Wall, total.BrokerCPU+m.BrokerCPU
		if left, err = b.setsWithObjects(planned); err != nil {
			return measurement{}, err
		}
	}
	return total, nil
}

// setsWithObjects is the sets of planned of which the broker still holds a
// queue or an exchange.
func (b *bench) setsWithObjects(planned []delayset.Remembered) ([]delayset.Remembered, error) {
	names := map[string]bool{}
	queues, err := b.admin.ListQueuesIn(b.cfg.VHost)
	if err != nil {
		return nil, err
	}
	for _, q := range queues {
		names[q.Name] = true
	}
	exchanges, err := b.admin.ListExchangesIn(b.cfg.VHost)
	if err != nil {
		return nil, err
	}
	for _, e := range exchanges {
		names[e.Name] = true
	}
	return slices.DeleteFunc(slices.Clone(planned), func(set delayset.Remembered) bool {
		return !slices.ContainsFunc(set.Shown.Queues, func(q topology.Queue) bool { return names[q.Name] }) &&
			!slices.ContainsFunc(set.Shown.Exchanges, func(e topology.Exchange) bool { return names[e.Name] })
	}), nil
}

// eachSet does do with each set, ten sets at a time as Terraform's default
// parallelism would.
func (b *bench) eachSet(sets []delayset.Remembered, do func(delayset.Remembered) error) error {
	return errors.Join(inParallel(len(sets), 10, func(i int) error { return do(sets[i]) })...)
}

// inParallel calls do for 0 … n−1, at most limit at once, and returns each call's error.
func inParallel(n, limit int, do func(i int) error) []error {
	errs := make([]error, n)
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			errs[i] = do(i)
		}()
	}
	wg.Wait()
	return errs
}

// measureFloor plans as many data sources as the largest configuration has sets:
// what Terraform and the framework cost for that many resources, with no broker.
func (b *bench) measureFloor(ctx context.Context, dataSources int) (floorResult, error) {
	if err := b.writeConfig(b.manySetsConfig(dataSources, true)); err != nil {
		return floorResult{}, err
	}
	plan, err := b.medianPlan(ctx, fmt.Sprintf("%d data sources (Terraform's floor)", dataSources), b.cfg.Plans, "plan")
	return floorResult{DataSources: dataSources, Plan: plan}, err
}

// medianPlan runs a plan plans times, each finding nothing to change with as
// many requests as the first, and returns the run of median wall time.
func (b *bench) medianPlan(ctx context.Context, label string, plans int, args ...string) (measurement, error) {
	var runs []measurement
	for i := range plans {
		b.progress.step("%s: terraform %v, %d of %d", label, args, i+1, plans)
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
	m, err := b.timed(func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(window):
			return nil
		}
	})
	return time.Duration(float64(m.BrokerCPU) / window.Seconds()), err
}
