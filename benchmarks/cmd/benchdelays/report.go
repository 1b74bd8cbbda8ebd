package main

import (
	"fmt"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// variant is a queue type, dead-letter strategy and radix a set can be
// declared with.
type variant struct {
	Slug      string // in flags and object names
	Name      string // in tables
	QueueType topology.QueueType
	Strategy  topology.DeadLetterStrategy
	Radix     int
	// LeaderLocator places the set's queue leaders on a cluster; empty
	// leaves it to the broker (client-local unless configured otherwise).
	LeaderLocator topology.LeaderLocator
	// Base is the name of the radix-2 variant of the same queue type and
	// strategy, whose one-hop baseline this variant shares.
	Base string
}

// queueKinds are the queue types and strategies the resource offers, in the
// order the tables show them; their radix-2 variants keep these names.
var queueKinds = []variant{
	{Slug: "classic", Name: "classic", QueueType: topology.QueueTypeClassic, Strategy: topology.AtMostOnce},
	{Slug: "quorum-at-most-once", Name: "quorum at-most-once", QueueType: topology.QueueTypeQuorum, Strategy: topology.AtMostOnce},
	{Slug: "quorum-at-least-once", Name: "quorum at-least-once", QueueType: topology.QueueTypeQuorum, Strategy: topology.AtLeastOnce},
}

// variants are every queue kind in every radix, radix 2 first ("quorum-at-most-once-r4"),
// then each with every leader locator ("quorum-at-least-once-r16-balanced").
var variants = func() []variant {
	var plain []variant
	for _, kind := range queueKinds {
		for _, radix := range topology.Radixes {
			v := kind
			v.Radix, v.Base = radix, kind.Name
			if radix != 2 {
				v.Slug += fmt.Sprintf("-r%d", radix)
				v.Name += fmt.Sprintf(" r%d", radix)
			}
			plain = append(plain, v)
		}
	}
	all := plain
	for _, locator := range topology.LeaderLocators {
		for _, v := range plain {
			v.LeaderLocator = locator
			v.Slug += "-" + string(locator)
			v.Name += v.leadersSuffix()
			all = append(all, v)
		}
	}
	return all
}()

// leadersSuffix is ", LOCATOR" when v places its leaders, as its name
// ends, or "".
func (v variant) leadersSuffix() string {
	if v.LeaderLocator == "" {
		return ""
	}
	return ", " + string(v.LeaderLocator)
}

// defaultVariants are the queue kinds in radix 2, today's layout.
func defaultVariants() []variant {
	var chosen []variant
	for _, v := range variants {
		if v.Radix == 2 && v.LeaderLocator == "" {
			chosen = append(chosen, v)
		}
	}
	return chosen
}

// kindOf is the radix-2 variant of v's queue kind, whose baseline v shares.
func kindOf(v variant) variant {
	if kind, ok := variantNamed(v.Base); ok {
		return kind
	}
	return v
}

// variantNamed is the variant a table names, or false.
func variantNamed(name string) (variant, bool) {
	for _, v := range variants {
		if v.Name == name {
			return v, true
		}
	}
	return variant{}, false
}

// trialResult is one paced run through one freshly declared set.
type trialResult struct {
	Variant  string `json:"variant"`
	Baseline bool   `json:"baseline"`
	// Main marks the trials at the main rate and duration, which the main
	// tables show; the others are rate-search steps.
	Main bool   `json:"main"`
	Set  string `json:"set"`
	// Levels are the set's delay digits, in Radix (2 when zero, as in runs
	// from before sets had a radix).
	Levels     int           `json:"levels"`
	Radix      int           `json:"radix,omitempty"`
	Resolution time.Duration `json:"resolution_ns"`
	Rate       float64       `json:"rate_per_s"`
	Duration   time.Duration `json:"duration_ns"`
	Started    time.Time     `json:"started"`
	// LoadBefore and LoadAfter are the machine's 1-minute load average when
	// the trial started and ended (-1 when unknown): other work on the
	// machine shows there.
	LoadBefore float64 `json:"load_before"`
	LoadAfter  float64 `json:"load_after"`
	// MachineBusy is how busy the machine's CPUs were during the trial, in
	// percent, and BrokerCPU the CPU seconds the broker's process used
	// (when it runs on this machine); -1 when unknown.
	MachineBusy float64 `json:"machine_cpu_busy_percent"`
	BrokerCPU   float64 `json:"broker_cpu_s"`
	// OwnCPU is the CPU seconds this program used, to publish, consume and
	// count: the load generator's share of the machine.
	OwnCPU float64 `json:"own_cpu_s"`
	// NodeCPU is the CPU seconds each node of a cluster used, in the order
	// of the environment's Nodes (BrokerCPU is their sum); Leaders counts
	// the set's queues each node leads, as the broker said after declaring
	// them. Both only on a cluster.
	NodeCPU []float64 `json:"node_cpu_s,omitempty"`
	// NodeThreads is, in the same order, the CPU seconds of each kind of
	// each node's threads (machine.ThreadKind: erts_sched the schedulers,
	// which run the Erlang processes and busy-wait for work, erts_dios the
	// dirty I/O threads, which write the queues' files).
	NodeThreads []map[string]float64 `json:"node_thread_cpu_s,omitempty"`
	// BrokerWork is what the broker's processes ran during a main trial,
	// by kind, under -broker-profile.
	BrokerWork *processWork   `json:"broker_work,omitempty"`
	Leaders    map[string]int `json:"leaders,omitempty"`
	// Replicas counts the set's TTL queues each node holds a member of, and
	// Queues says where each queue of the set ran and how many messages
	// passed it; on a cluster only.
	Replicas    map[string]int         `json:"replicas,omitempty"`
	Queues      []queuePlacement       `json:"queues,omitempty"`
	Pacing      messaging.PacingReport `json:"pacing"`
	Measurement measurement            `json:"measurement"`
	// BrokerSettled says whether the broker's CPU use had settled near its
	// idle level before the trial started, after BrokerSettling of waiting.
	BrokerSettled  bool          `json:"broker_settled"`
	BrokerSettling time.Duration `json:"broker_settling_ns"`
	// Error is why the trial could not finish, if it could not.
	Error string `json:"error,omitempty"`
}

// searchResult is the rate search of one variant's set or baseline.
type searchResult struct {
	Variant  string  `json:"variant"`
	Baseline bool    `json:"baseline"`
	Steps    []step  `json:"steps"`
	Highest  float64 `json:"highest_held_per_s"` // 0 when no step held
	// Capped is true when the highest step held: the true limit is higher.
	Capped bool `json:"capped"`
}

// settings are the parameters of a run.
type settings struct {
	Variants       []string      `json:"variants"`
	Levels         int           `json:"levels"`
	Resolution     time.Duration `json:"resolution_ns"`
	BaselineDelay  time.Duration `json:"baseline_delay_ns"`
	Rate           float64       `json:"rate_per_s"`
	Duration       time.Duration `json:"duration_ns"`
	Steps          []float64     `json:"steps_per_s"`
	Fine           bool          `json:"fine_steps"` // 10 % steps near the limit
	SearchDuration time.Duration `json:"search_duration_ns"`
	P99Limit       time.Duration `json:"p99_limit_ns"`
	LossWindow     time.Duration `json:"loss_window_ns"`
	Tick           time.Duration `json:"tick_ns"`
	LagLimit       time.Duration `json:"lag_limit_ns"`
	AbandonLag     time.Duration `json:"abandon_lag_ns,omitempty"`
	Prefetch       int           `json:"prefetch"`
	MaxInFlight    int           `json:"max_in_flight"`
	Seed           uint64        `json:"seed"`
	// GroupSize is the quorum sets' x-quorum-initial-group-size, 0 for none;
	// ClientURLs the AMQP URLs the clients spread over, passwords hidden,
	// when more than one.
	GroupSize  int      `json:"quorum_initial_group_size,omitempty"`
	ClientURLs []string `json:"client_urls,omitempty"`
	// Warnings say why the figures may not be what they seem, such as a
	// duration too short for steady state.
	Warnings []string `json:"warnings,omitempty"`
}

// maxDelay is the longest delay of the sets measured.
func (s settings) maxDelay() time.Duration { return topology.MaxDelayFor(s.Levels, s.Resolution) }

// environment says where and when a run happened.
type environment struct {
	// Provenance is the commit measured, the date, the machine, and the
	// broker's RabbitMQ and Erlang versions; -render keeps the run's.
	Provenance machine.Provenance `json:"provenance"`
	Command    string             `json:"command"`
	// BrokerPID is the local process listening on the AMQP port, whose CPU
	// time the trials report; 0 when it is not on this machine.
	BrokerPID int `json:"broker_pid"`
	// Nodes are the nodes of the broker's cluster when it has more than
	// one, with their processes when on this machine (else 0): the broker's
	// CPU is then theirs together, and each trial also gives each node's.
	Nodes []clusterNode `json:"nodes,omitempty"`
	// ClientNodes is the node each AMQP URL of the clients reached, on a
	// cluster.
	ClientNodes []string `json:"client_nodes,omitempty"`
	// NodeFlags are the scheduler flags of each node's Erlang VM (+sbwt and
	// the like), from its command line, when any are set.
	NodeFlags []string `json:"node_vm_flags,omitempty"`
	// BrokerIdleCPU is the broker's CPU use before the first trial, in
	// percent of one CPU: its background work, part of every trial's figure.
	BrokerIdleCPU float64 `json:"broker_idle_cpu_percent"`
}

// clusterNode is a node of the broker's cluster and its local process.
type clusterNode struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
}

// cluster says the broker had more than one node.
func (e environment) cluster() bool { return len(e.Nodes) > 1 }

// brokerPIDs are the processes whose CPU is the broker's, every node's of a
// cluster or the one node's; none when they are not all here.
func (e environment) brokerPIDs() []int {
	if len(e.Nodes) == 0 {
		if e.BrokerPID == 0 {
			return nil
		}
		return []int{e.BrokerPID}
	}
	pids := make([]int, len(e.Nodes))
	for i, n := range e.Nodes {
		if n.PID == 0 {
			return nil
		}
		pids[i] = n.PID
	}
	return pids
}

// report is everything a run writes: delays.json holds it whole, delays.md
// and delays.svg render it.
type report struct {
	Environment environment    `json:"environment"`
	Settings    settings       `json:"settings"`
	Trials      []trialResult  `json:"trials"`
	Searches    []searchResult `json:"searches"`
	// Layouts are the planner's figures of a set of each radix the run
	// measured, holding its range; Idle the idle cost of some of them.
	Layouts []layoutFigures `json:"layouts,omitempty"`
	Idle    []idleResult    `json:"idle,omitempty"`
}

// perMessage is CPU seconds per message sent, or -1 when unknown.
func (t trialResult) perMessage(cpuSeconds float64) time.Duration {
	return perEach(cpuSeconds, t.Pacing.Sent)
}

// perDelivered is CPU seconds per message delivered, or -1 when unknown.
func (t trialResult) perDelivered(cpuSeconds float64) time.Duration {
	return perEach(cpuSeconds, t.Measurement.Delivered)
}

// perEach is CPU seconds shared by n messages, or -1 when unknown.
func perEach(cpuSeconds float64, n int) time.Duration {
	if cpuSeconds < 0 || n == 0 {
		return -1
	}
	return time.Duration(cpuSeconds / float64(n) * float64(time.Second))
}

// mainTrial returns the trial at the main rate of a variant's set or baseline.
func (r report) mainTrial(variantName string, baseline bool) (trialResult, bool) {
	for _, t := range r.Trials {
		if t.Main && t.Variant == variantName && t.Baseline == baseline {
			return t, true
		}
	}
	return trialResult{}, false
}

// search returns the rate search of a variant's set or baseline.
func (r report) search(variantName string, baseline bool) (searchResult, bool) {
	for _, s := range r.Searches {
		if s.Variant == variantName && s.Baseline == baseline {
			return s, true
		}
	}
	return searchResult{}, false
}
