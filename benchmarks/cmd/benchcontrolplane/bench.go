package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// routeQueue is the queue every benchmarked set routes to: a set with a
// route costs what users' sets cost.
const routeQueue = "bench.work"

// resolution keeps a 32-level set's largest TTL within the broker's limit.
const resolution = 100 * time.Millisecond

// measurement is what one operation cost: the CPU of terraform's process
// tree, of the providers alone, and of the broker's process meanwhile.
type measurement struct {
	Requests     int64
	Wall         time.Duration
	TerraformCPU time.Duration
	ProviderCPU  time.Duration
	BrokerCPU    time.Duration
}

// setResult is one set size measured in one vhost condition.
type setResult struct {
	Busy    bool
	Levels  int
	Objects int // exchanges, queues and bindings of the set
	Create  measurement
	Plan    measurement // the median wall time of the no-change plans; their requests, all equal
	Destroy measurement
}

// createPaths compares the two ways of creating a fresh set.
type createPaths struct {
	Levels      int
	Declares    measurement
	Definitions measurement
}

type report struct {
	// Provenance names the commit, the machine, the broker and Terraform.
	Provenance        machine.Provenance
	UnrelatedQueues   int
	UnrelatedBindings int
	Plans             int
	Sets              []setResult
	CreatePaths       []createPaths
	ManySets          []manySetsResult
	// ManySetsSettings is what each set of the many-sets configurations has
	// besides its name, for example `max_delay = "36h"`, `queue_type = "classic"`.
	ManySetsSettings string
	Floor            floorResult
	// LoadAverage is the machine's 1-minute load average when the run began.
	LoadAverage float64
	// BrokerIdleCPU is the broker's CPU time per second of wall time while
	// the benchmark asks it nothing.
	BrokerIdleCPU time.Duration
	Peeks         []peekResult
}

// bench holds what the measurements share.
type bench struct {
	cfg            config
	progress       progress
	admin          *rabbithole.Client
	client         *broker.Client // straight to the broker: setup, checks and the create-path comparison
	sets           delayset.Sets  // sets created and destroyed as the provider does, over client
	proxy          *countingProxy
	workdir        string
	env            []string
	brokerPID      int    // whose CPU time each operation reads
	providerCPULog string // where the provider's wrapper writes its CPU times
	// direct points terraform straight at the broker: the counting proxy's
	// own work would add to the wall time.
	direct bool
}

// benchmark sets up the broker and terraform, runs every measurement and
// deletes its vhost, whatever happened.
func benchmark(ctx context.Context, cfg config, log io.Writer) (_ report, err error) {
	b := &bench{cfg: cfg, progress: progress{w: log, started: time.Now()}}
	r := report{UnrelatedQueues: unrelatedQueues, UnrelatedBindings: unrelatedBindings, Plans: cfg.Plans}
	if err := b.connect(ctx, &r); err != nil {
		return report{}, err
	}
	if b.workdir, err = os.MkdirTemp("", "benchcontrolplane-"); err != nil {
		return report{}, err
	}
	defer os.RemoveAll(b.workdir)
	if err := b.prepareTerraform(ctx); err != nil {
		return report{}, err
	}
	if b.proxy, err = startCountingProxy(cfg.Endpoint); err != nil {
		return report{}, err
	}
	defer b.proxy.Close()
	if err := b.createVHost(); err != nil {
		return report{}, err
	}
	defer func() {
		b.progress.step("deleting vhost %s", cfg.VHost)
		if _, deleteErr := b.admin.DeleteVhost(cfg.VHost); deleteErr != nil && err == nil {
			err = fmt.Errorf("deleting vhost %s: %w", cfg.VHost, deleteErr)
		}
	}()
	if err := b.measureAll(ctx, &r); err != nil {
		return report{}, err
	}
	return r, nil
}

// connect makes the clients of the broker and records its provenance and
// process.
func (b *bench) connect(ctx context.Context, r *report) (err error) {
	cfg := b.cfg
	if b.admin, err = rabbithole.NewClient(cfg.Endpoint, cfg.Username, cfg.Password); err != nil {
		return err
	}
	if b.client, err = broker.New(broker.Config{Endpoint: cfg.Endpoint, Username: cfg.Username,
		Password: cfg.Password, Timeout: time.Minute}); err != nil {
		return err
	}
	b.sets = delayset.Sets{Broker: b.client}
	node, err := b.client.Node(ctx)
	if err != nil {
		return fmt.Errorf("reading the broker's version at %s: %w", cfg.Endpoint, err)
	}
	if r.Provenance, err = results.Provenance(ctx, moduleRoot(ctx), node, cfg.Terraform); err != nil {
		return err
	}
	b.progress.step("%s", strings.TrimSpace(r.Provenance.Markdown()))
	if b.brokerPID = cfg.BrokerPID; b.brokerPID == 0 && results.IsLocal(cfg.Endpoint) {
		b.brokerPID = node.OSPID
	}
	if b.brokerPID == 0 {
		return errors.New("cannot tell the broker's process: it is not on this machine, or the user may not list nodes (pass -broker-pid)")
	}
	r.LoadAverage = machine.LoadAverage()
	r.ManySetsSettings = fmt.Sprintf("`max_delay = %q`, `queue_type = %q`", manySetsMaxDelay.String(), manySetsQueueType)
	return nil
}

// measureAll runs the measurements in the order of the report.
func (b *bench) measureAll(ctx context.Context, r *report) (err error) {
	cfg := b.cfg
	if r.BrokerIdleCPU, err = b.brokerIdleCPU(ctx); err != nil {
		return err
	}
	peekQueue, err := b.createPeekQueue(ctx)
	if err != nil {
		return err
	}
	for _, inFlight := range []int{1, 40} {
		peeks, err := b.measurePeeks(ctx, peekQueue, peeks, inFlight)
		if err != nil {
			return err
		}
		r.Peeks = append(r.Peeks, peeks)
	}
	if len(cfg.ManySets) > 0 {
		if r.Floor, err = b.measureFloor(ctx, slices.Max(cfg.ManySets)); err != nil {
			return err
		}
	}
	for _, busy := range []bool{false, true} {
		if busy {
			if err := b.addUnrelatedObjects(); err != nil {
				return err
			}
		}
		for _, levels := range cfg.Levels {
			result, err := b.measureSet(ctx, levels, busy)
			if err != nil {
				return err
			}
			r.Sets = append(r.Sets, result)
		}
		for _, sets := range cfg.ManySets {
			result, err := b.measureManySets(ctx, sets, busy)
			if err != nil {
				return err
			}
			r.ManySets = append(r.ManySets, result)
		}
	}
	for _, levels := range cfg.Levels {
		paths, err := b.compareCreatePaths(ctx, levels)
		if err != nil {
			return err
		}
		r.CreatePaths = append(r.CreatePaths, paths)
	}
	return nil
}

// prepareTerraform builds the provider and has scripts/dev-overrides.sh write
// the CLI configuration that runs it: no init, no registry.
func (b *bench) prepareTerraform(ctx context.Context) error {
	b.progress.step("building the provider (scripts/dev-overrides.sh)")
	script := exec.CommandContext(ctx, filepath.Join(moduleRoot(ctx), "scripts", "dev-overrides.sh"))
	script.Env = append(os.Environ(), "DEV_OVERRIDES_DIR="+b.workdir)
	script.Stderr = b.progress.w
	out, err := script.Output()
	if err != nil {
		return fmt.Errorf("scripts/dev-overrides.sh: %w", err)
	}
	b.providerCPULog = filepath.Join(b.workdir, "provider-cpu.log")
	if err := providerCPUWrapper(filepath.Join(b.workdir, "provider"), b.providerCPULog); err != nil {
		return fmt.Errorf("wrapping the provider to measure its CPU: %w", err)
	}
	b.env = append(cleanEnv(os.Environ()),
		"TF_CLI_CONFIG_FILE="+strings.TrimSpace(string(out)), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
		"RABBITMQ_USERNAME="+b.cfg.Username, "RABBITMQ_PASSWORD="+b.cfg.Password)
	return nil
}

// cleanEnv drops the variables that would change what terraform or the
// provider does from what the benchmark sets.
func cleanEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(name, "TF_") || strings.HasPrefix(name, "RABBITMQ_") || name == "CHECKPOINT_DISABLE"
	})
}

// providerModule is the provider's module.
const providerModule = "github.com/delayqueue/terraform-provider-rabbitmq"

// moduleRoot is the provider's checkout, which holds scripts/, whether the
// command runs from there (as make does) or from benchmarks/; "." when go cannot tell.
func moduleRoot(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", providerModule).Output()
	if dir := strings.TrimSpace(string(out)); err == nil && dir != "" {
		return dir
	}
	return "."
}

// createVHost creates the benchmark's vhost afresh, with the route queue
// (a durable classic queue, as a user declares it).
func (b *bench) createVHost() error {
	vhost := b.cfg.VHost
	if exists, err := b.client.VHostExists(context.Background(), vhost); err != nil {
		return err
	} else if exists {
		b.progress.step("deleting vhost %s, left by an earlier run", vhost)
		if _, err := b.admin.DeleteVhost(vhost); err != nil {
			return err
		}
	}
	b.progress.step("creating vhost %s", vhost)
	if _, err := b.admin.PutVhost(vhost, rabbithole.VhostSettings{}); err != nil {
		return fmt.Errorf("creating vhost %s: %w", vhost, err)
	}
	if _, err := b.admin.UpdatePermissionsIn(vhost, b.cfg.Username,
		rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"}); err != nil {
		return fmt.Errorf("granting %s access to vhost %s: %w", b.cfg.Username, vhost, err)
	}
	if _, err := b.admin.DeclareQueue(vhost, routeQueue, rabbithole.QueueSettings{Type: string(topology.QueueTypeClassic), Durable: true}); err != nil {
		return fmt.Errorf("declaring queue %s: %w", routeQueue, err)
	}
	return nil
}

// addUnrelatedObjects fills the vhost with the busy condition's objects, in
// one definitions upload, and checks the broker has them all.
func (b *bench) addUnrelatedObjects() error {
	noise := unrelatedObjects(b.cfg.VHost, unrelatedQueues, unrelatedBindings)
	b.progress.step("uploading %d unrelated exchanges, %d queues and %d bindings to vhost %s",
		len(noise.Exchanges), len(noise.Queues), len(noise.Bindings), b.cfg.VHost)
	started := time.Now()
	if err := b.uploadDefinitions(noise); err != nil {
		return fmt.Errorf("uploading the unrelated objects: %w", err)
	}
	queues, err := b.admin.ListQueuesIn(b.cfg.VHost)
	if err != nil {
		return err
	}
	bindings, err := b.admin.ListBindingsIn(b.cfg.VHost)
	if err != nil {
		return err
	}
	b.progress.step("vhost %s holds %d queues and %d bindings (took %s)", b.cfg.VHost, len(queues), len(bindings),
		time.Since(started).Round(time.Millisecond))
	if len(queues) < unrelatedQueues || len(bindings) < unrelatedBindings {
		return fmt.Errorf("vhost %s holds %d queues and %d bindings after the upload, want at least %d and %d",
			b.cfg.VHost, len(queues), len(bindings), unrelatedQueues, unrelatedBindings)
	}
	return nil
}

// unrelatedExchanges is how many topic exchanges the unrelated bindings
// come from.
const unrelatedExchanges = 50

// unrelatedObjects is the busy vhost: queues bound from a few topic exchanges,
// some named like a set's queues but for case or a suffix, the hardest neighbours.
func unrelatedObjects(vhost string, queues, bindings int) topology.Topology {
	t := topology.Topology{VHost: vhost}
	for i := range unrelatedExchanges {
		t.Exchanges = append(t.Exchanges, topology.Exchange{Name: fmt.Sprintf("noise.x.%02d", i), Type: topology.ExchangeTopic})
	}
	sizes := []int{8, 16, 32}
	for i := range queues {
		k := i / 50
		set, level := sizes[k%len(sizes)], k/len(sizes)%100
		var name string
		switch i % 50 {
		case 0:
			name = fmt.Sprintf("BENCH-N%d.LEVEL.%02d", set, level)
		case 1:
			name = fmt.Sprintf("bench-n%d.level.%02d.noise", set, level)
		default:
			name = fmt.Sprintf("noise.q.%05d", i)
		}
		t.Queues = append(t.Queues, topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}})
	}
	for j := range bindings {
		queue := t.Queues[j%queues]
		t.Bindings = append(t.Bindings, topology.Binding{
			Source:          t.Exchanges[(j/queues+j)%unrelatedExchanges].Name,
			Destination:     queue.Name,
			DestinationType: topology.DestinationQueue,
			RoutingKey:      fmt.Sprintf("noise.%d", j),
		})
	}
	return t
}

// uploadDefinitions loads a topology into the vhost with one request; not
// rabbit-hole's, whose "policies": null RabbitMQ 3.10 answers with a 500.
func (b *bench) uploadDefinitions(t topology.Topology) error {
	document, err := topology.DefinitionsJSON(t)
	if err != nil {
		return err
	}
	resp, err := b.post(context.Background(), "/api/definitions/"+url.PathEscape(b.cfg.VHost), bytes.NewReader(document))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("POST /api/definitions/%s: %s: %s", b.cfg.VHost, resp.Status, answer)
	}
	return nil
}

// post sends body to the management API's path as the benchmark's user.
func (b *bench) post(ctx context.Context, path string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(b.cfg.Endpoint, "/")+path, body)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(b.cfg.Username, b.cfg.Password)
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// terraformBlock opens every configuration: the provider from the dev
// overrides.
const terraformBlock = `terraform {
  required_providers {
    rabbitmq = {
      source = "delayqueue/rabbitmq"
    }
  }
}

`

// measureSet creates, plans and destroys one set with terraform.
func (b *bench) measureSet(ctx context.Context, levels int, busy bool) (setResult, error) {
	set, err := b.plan(levels)
	if err != nil {
		return setResult{}, err
	}
	spec, plan := set.Spec, set.Shown
	result := setResult{Busy: busy, Levels: levels, Objects: len(plan.Exchanges) + len(plan.Queues) + len(plan.Bindings)}
	config := fmt.Sprintf(terraformBlock+`resource "rabbitmq_delay_queue_set" "bench" {
  name       = %q
  vhost      = %q
  levels     = %d
  resolution = %q

  route {
    destination = %q
  }
}
`, spec.Name, spec.VHost, levels, resolution.String(), routeQueue)
	if err := b.writeConfig(config); err != nil {
		return setResult{}, err
	}

	condition := vhostCondition(busy) + " vhost"
	b.progress.step("N=%d, %s: terraform apply (%d objects)", levels, condition, result.Objects)
	if result.Create, err = b.terraform(ctx, "apply", "-auto-approve"); err != nil {
		return setResult{}, err
	}
	if err := b.checkSet(ctx, spec.Name, plan); err != nil {
		return setResult{}, err
	}
	if result.Plan, err = b.medianPlan(ctx, fmt.Sprintf("N=%d, %s", levels, condition), b.cfg.Plans, "plan", "-detailed-exitcode"); err != nil {
		return setResult{}, err
	}
	b.progress.step("N=%d, %s: terraform destroy", levels, condition)
	if result.Destroy, err = b.terraform(ctx, "destroy", "-auto-approve"); err != nil {
		return setResult{}, err
	}
	if err := b.checkSet(ctx, spec.Name, topology.Topology{VHost: spec.VHost}); err != nil {
		return setResult{}, err
	}
	return result, nil
}

// plan is the benchmark's set of the given size as a state remembers it
// once created.
func (b *bench) plan(levels int) (delayset.Remembered, error) {
	spec, err := topology.NewSet(topology.Spec{ // as terraform creates it
		Name: fmt.Sprintf("bench-n%d", levels), VHost: b.cfg.VHost, Levels: levels, Resolution: resolution,
		Routes: []topology.Route{{Destination: routeQueue}},
	})
	if err != nil {
		return delayset.Remembered{}, err
	}
	return remembered(spec)
}

// remembered is what the provider remembers of a new set of spec once
// created: what delayset's Plan says it holds.
func remembered(spec topology.Spec) (delayset.Remembered, error) {
	planned, err := delayset.Plan(delayset.Remembered{}, spec, time.Now())
	return delayset.Remembered{Spec: planned.Spec, Shown: planned.Set}, err
}

// checkSet asks the broker that the set is exactly want: the same objects,
// each with the same type and arguments, in any order.
func (b *bench) checkSet(ctx context.Context, name string, want topology.Topology) error {
	actual, err := b.client.ReadSet(ctx, b.cfg.VHost, name)
	if err != nil {
		return err
	}
	if has, wants := objectLines(actual), objectLines(want); !slices.Equal(has, wants) {
		return fmt.Errorf("set %s is not what it should be:\nit has %q,\nit should have %q", name, has, wants)
	}
	return nil
}

// objectLines are t's objects, one line each as listings show them, sorted.
func objectLines(t topology.Topology) []string {
	var lines []string
	for _, e := range t.Exchanges {
		lines = append(lines, "exchange "+e.String())
	}
	for _, q := range t.Queues {
		lines = append(lines, "queue "+q.String())
	}
	for _, b := range t.Bindings {
		lines = append(lines, "binding "+b.Canonical().String())
	}
	slices.Sort(lines)
	return slices.Compact(lines)
}

// terraform runs and measures one terraform command in the work directory.
// Any exit status but 0 (a plan with changes, too) fails the benchmark.
func (b *bench) terraform(ctx context.Context, args ...string) (measurement, error) {
	cmd := exec.CommandContext(ctx, b.cfg.Terraform, append(args, "-input=false", "-no-color")...)
	cmd.Dir = b.workdir
	endpoint := b.proxy.URL()
	if b.direct {
		endpoint = b.cfg.Endpoint
	}
	cmd.Env = append(slices.Clone(b.env), "RABBITMQ_ENDPOINT="+endpoint)
	b.proxy.Reset()
	if _, err := providerCPU(b.providerCPULog); err != nil { // empties the log
		return measurement{}, err
	}
	var out []byte
	var runErr error // reported once the CPU times are read
	m, err := b.timed(func() error { out, runErr = cmd.CombinedOutput(); return nil })
	if err != nil {
		return measurement{}, err
	}
	m.Requests = b.proxy.Requests()
	if cmd.ProcessState != nil {
		// wait4 counts the providers terraform has waited for with terraform.
		m.TerraformCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if m.ProviderCPU, err = providerCPU(b.providerCPULog); err != nil {
		return measurement{}, err
	}
	if runErr != nil {
		return measurement{}, fmt.Errorf("terraform %s: %v\n%s", strings.Join(args, " "), runErr, out)
	}
	return m, nil
}

// compareCreatePaths creates the same fresh set twice without terraform: by
// the provider's parallel declares, then by one definitions upload.
func (b *bench) compareCreatePaths(ctx context.Context, levels int) (createPaths, error) {
	set, err := b.plan(levels)
	if err != nil {
		return createPaths{}, err
	}
	spec, plan := set.Spec, set.Shown
	result := createPaths{Levels: levels}

	b.progress.step("N=%d: create by parallel declares (delayset's Create, as the provider creates a set)", levels)
	before, started := b.client.Requests(), time.Now()
	created, err := b.sets.Create(ctx, spec)
	if err != nil {
		return createPaths{}, err
	}
	result.Declares = measurement{Requests: b.client.Requests() - before, Wall: time.Since(started)}
	if err := b.checkSet(ctx, spec.Name, plan); err != nil {
		return createPaths{}, err
	}
	if err := b.sets.Destroy(ctx, created.Remembered, false); err != nil {
		return createPaths{}, err
	}

	b.progress.step("N=%d: create by one definitions upload", levels)
	started = time.Now()
	if err := b.uploadDefinitions(plan); err != nil {
		return createPaths{}, err
	}
	result.Definitions = measurement{Requests: 1, Wall: time.Since(started)}
	if err := b.checkSet(ctx, spec.Name, plan); err != nil {
		return createPaths{}, err
	}
	return result, b.sets.Destroy(ctx, created.Remembered, false)
}

// medianByWall is the measurement of median wall time.
func medianByWall(runs []measurement) measurement {
	sorted := slices.SortedFunc(slices.Values(runs), func(a, b measurement) int { return cmp.Compare(a.Wall, b.Wall) })
	return sorted[len(sorted)/2]
}
