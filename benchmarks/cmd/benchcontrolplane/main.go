package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// config is everything a run needs.
type config struct {
	Endpoint  string
	Username  string
	Password  string
	Terraform string
	Levels    []int
	Plans     int
	VHost     string
	Markdown  string
	// ManySets are the numbers of sets of the many-sets configurations.
	ManySets []int
	// BrokerPID is the broker's OS process; 0 takes the one the broker
	// names, when it runs on this machine.
	BrokerPID int
}

// What every run measures the same way: the busy vhost's unrelated objects,
// the many-sets configurations' sets and runs, and the peeks timed.
const (
	unrelatedQueues   = 5000
	unrelatedBindings = 20000
	manySetsMaxDelay  = 36 * time.Hour
	manySetsQueueType = topology.QueueTypeClassic
	manySetsRuns      = 3 // straight to the broker, floors included: the table shows the min and median
	peeks             = 300
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, stderr)
	return results.Main("benchcontrolplane", stderr, err, func(ctx context.Context) (int, error) {
		r, err := benchmark(ctx, cfg, stderr)
		if err != nil {
			return 1, err
		}
		text := r.Markdown()
		fmt.Fprint(stdout, text)
		if err := results.WriteFile(cfg.Markdown, text, stderr); err != nil {
			return 1, err
		}
		return 0, nil
	})
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	flags := flag.NewFlagSet("benchcontrolplane", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&cfg.Endpoint, "endpoint", results.EnvOr("RABBITMQ_ENDPOINT", "http://127.0.0.1:15672"), "management API `URL`")
	flags.StringVar(&cfg.Username, "username", results.EnvOr("RABBITMQ_USERNAME", "guest"), "management API user (needs the administrator tag: the benchmark creates a vhost)")
	flags.StringVar(&cfg.Password, "password", results.EnvOr("RABBITMQ_PASSWORD", "guest"), "management API password")
	flags.StringVar(&cfg.Terraform, "terraform", "terraform", "terraform `binary`")
	levels := flags.String("levels", "8,16,32", "set sizes N to measure, comma-separated")
	flags.IntVar(&cfg.Plans, "plans", 3, "no-change plans per set; the table shows the median")
	flags.StringVar(&cfg.VHost, "vhost", "delayqueue-bench-control-plane", "vhost the benchmark creates and deletes (must not exist, or be left from an earlier run)")
	flags.StringVar(&cfg.Markdown, "markdown", "", "also write the report to this `file`")
	manySets := flags.String("many-sets", "10,100", "numbers of sets of the many-sets configurations, comma-separated (\"\" for none)")
	flags.IntVar(&cfg.BrokerPID, "broker-pid", 0, "the broker's OS `process` id, for its CPU time (0: the one the broker names, when it runs on this machine)")
	err := flags.Parse(args)
	if err != nil {
		return config{}, err
	}
	if flags.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	if cfg.Levels, err = positiveNumbers("-levels", *levels); err != nil {
		return config{}, err
	}
	if cfg.ManySets, err = positiveNumbers("-many-sets", *manySets); err != nil {
		return config{}, err
	}
	if cfg.Plans < 1 {
		return config{}, fmt.Errorf("-plans must be at least 1")
	}
	return cfg, nil
}

// positiveNumbers parses a comma-separated list of positive numbers; an
// empty list is none.
func positiveNumbers(flagName, list string) ([]int, error) {
	return results.List(list, func(field string) (int, error) {
		n, err := strconv.Atoi(field)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%s: %q is not a positive number", flagName, field)
		}
		return n, nil
	})
}

// progress prints what the benchmark is doing, with the time since start.
type progress struct {
	w       io.Writer
	started time.Time
}

func (p progress) step(format string, args ...any) {
	fmt.Fprintf(p.w, "==> [+%5.1fs] %s\n", time.Since(p.started).Seconds(), fmt.Sprintf(format, args...))
}
