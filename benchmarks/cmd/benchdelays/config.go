package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// config is everything a run needs: the settings its report keeps, and
// how to reach the broker and what else to do.
type config struct {
	settings
	// URL is the first of URLs, the AMQP URLs the trials' clients use: one,
	// or one per node of a cluster, which they spread over (clients.go).
	URL      string
	URLs     []string
	Endpoint string
	Username string
	Password string
	VHost    string
	Variants []variant // settings.Variants are their names

	Settle   time.Duration
	Pause    time.Duration
	QuietMax time.Duration
	// IdleRadixes are the radixes whose sets' idle cost is measured, over
	// IdleWindow each, with the first variant's queue type and strategy.
	IdleRadixes []int
	IdleWindow  time.Duration
	// BrokerProfile samples the broker's processes around each main trial
	// (a broker on this machine, one node), with Rabbitmqctl: the
	// repository's wrapper, or the one on PATH.
	BrokerProfile bool
	Rabbitmqctl   string
	Out           string
	Render        string // a delays.json to render instead of measuring
	// ModelFit and ModelCheck are the delays.json files of cluster runs to
	// fit the scaling model to and to check it against (model.go), instead
	// of measuring.
	ModelFit, ModelCheck []string
	Estimate             bool // print the run's estimated duration and exit
}

// quickDefaults replace the defaults under -quick, for flags not
// given: a run of well under a minute per variant to try things with.
var quickDefaults = map[string]string{
	"levels":          "4",
	"idle-radixes":    "2,16",
	"idle-window":     "3s",
	"rate":            "200",
	"duration":        "3s",
	"steps":           "200,400",
	"fine":            "false",
	"search-duration": "3s",
	"loss-window":     "5s",
	"settle":          "300ms",
	"pause":           "0s",
	"quiet-max":       "10s",
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	flags := flag.NewFlagSet("benchdelays", flag.ContinueOnError)
	flags.SetOutput(stderr)
	// What every run keeps the same: the pacing, the clients and the delays drawn.
	cfg := config{settings: settings{Tick: 10 * time.Millisecond, LagLimit: 500 * time.Millisecond, Prefetch: 256,
		MaxInFlight: messaging.DefaultMaxInFlight, Seed: 1}, Rabbitmqctl: defaultRabbitmqctl()}
	l := defineFlags(flags, &cfg)
	if err := flags.Parse(args); err != nil {
		return config{}, err
	}
	if flags.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	if *l.quick {
		given := map[string]bool{}
		flags.Visit(func(f *flag.Flag) { given[f.Name] = true })
		for name, value := range quickDefaults {
			if !given[name] {
				if err := flags.Set(name, value); err != nil {
					return config{}, fmt.Errorf("-quick: %w", err)
				}
			}
		}
	}
	if err := cfg.readLists(l); err != nil {
		return config{}, err
	}
	if err := cfg.checkDurations(); err != nil {
		return config{}, err
	}
	return cfg, nil
}

// listFlags are the flags parseConfig reads after parsing: lists, and -quick.
type listFlags struct {
	variantList, steps, idleRadixes, modelFit, modelCheck *string
	quick                                                 *bool
}

// defineFlags defines every flag of cfg on flags.
func defineFlags(flags *flag.FlagSet, cfg *config) (l listFlags) {
	flags.StringVar(&cfg.URL, "url", messaging.URLFromEnv(), "AMQP URL of the broker (default from $"+messaging.URLEnv+
		"), or comma-separated URLs of a cluster's nodes, over which each trial spreads its publishers and consumers round-robin")
	flags.IntVar(&cfg.GroupSize, "quorum-initial-group-size", 0, "replicas of each quorum queue of the measured sets "+
		"(x-quorum-initial-group-size, as quorum_initial_group_size sets it); 0 for the broker's own")
	flags.StringVar(&cfg.Endpoint, "endpoint", results.EnvOr("RABBITMQ_ENDPOINT", "http://127.0.0.1:15672"), "management API endpoint (default from $RABBITMQ_ENDPOINT)")
	flags.StringVar(&cfg.Username, "username", results.EnvOr("RABBITMQ_USERNAME", "guest"), "management API user (default from $RABBITMQ_USERNAME)")
	flags.StringVar(&cfg.Password, "password", results.EnvOr("RABBITMQ_PASSWORD", "guest"), "management API password (default from $RABBITMQ_PASSWORD)")
	flags.StringVar(&cfg.VHost, "vhost", "/", "vhost of the sets; their names are unique to the run")
	l.variantList = flags.String("variants", joinSlugs(defaultVariants()), "comma-separated variants to measure: a queue kind ("+joinSlugs(queueKinds)+
		") in radix 2, or with -r4, -r8 or -r16 in that radix")
	flags.IntVar(&cfg.Levels, "levels", 8, "levels N of the radix-2 sets; every set, whatever its radix, holds their range, (2^N − 1)·R, with the fewest digits of its radix that do")
	flags.DurationVar(&cfg.Resolution, "resolution", 100*time.Millisecond, "resolution R of the measured sets")
	flags.DurationVar(&cfg.BaselineDelay, "baseline-delay", -1, "TTL of the one-hop baseline; default 2^(N−1)·R, the top level's; 0 for no baseline")
	flags.Float64Var(&cfg.Rate, "rate", 1000, "main paced rate, messages per second")
	flags.DurationVar(&cfg.Duration, "duration", 0, "how long the main trials publish; default twice the longest delay (steady state: "+
		topology.FormatDuration(steadyState(topology.MaxDelayFor(8, 100*time.Millisecond)))+" at the default range); a shorter one is measured with a warning that the figures are not steady-state")
	l.steps = flags.String("steps", "100,250,500,750,1000,1500,2000,3000,4000,6000,8000", "rates (msg/s) the search steps through, from the main rate up while p99 holds; empty for no search")
	flags.BoolVar(&cfg.Fine, "fine", true, "once the steps bracket a limit, search up from the highest rate that held in steps of 10 % while they stay below the lowest that failed")
	flags.DurationVar(&cfg.SearchDuration, "search-duration", 0, "how long each search trial publishes; default -duration, which lets the main trial count as the search's step at -rate")
	flags.DurationVar(&cfg.P99Limit, "p99-limit", time.Second, "p99 lateness a rate must stay under to hold")
	flags.DurationVar(&cfg.LossWindow, "loss-window", 10*time.Second, "a message not arrived this long after due is lost")
	flags.DurationVar(&cfg.AbandonLag, "abandon-lag", 5*time.Second, "a publisher further behind than this stops publishing: the rate has failed (0: never stop)")
	flags.DurationVar(&cfg.Settle, "settle", time.Second, "quiet time after the last arrival, for late duplicates")
	flags.DurationVar(&cfg.Pause, "pause", 5*time.Second, "pause between trials, so one trial's clean-up is over before the next")
	flags.DurationVar(&cfg.QuietMax, "quiet-max", 2*time.Minute, "after the pause, wait up to this long for the broker's CPU use to settle near its idle level (a local broker only)")
	l.idleRadixes = flags.String("idle-radixes", "2,4,16", "radixes whose sets' idle broker CPU and memory are measured, declared and empty, with the first variant's queue type; empty for none")
	flags.DurationVar(&cfg.IdleWindow, "idle-window", 20*time.Second, "how long each idle measurement samples the broker, with and without the set")
	flags.BoolVar(&cfg.BrokerProfile, "broker-profile", false, "before and after each main trial, read the reductions of the broker's Erlang processes by kind (rabbitmqctl eval; a broker on this machine, one node) and show where its work goes")
	flags.StringVar(&cfg.Out, "out", "benchmarks", "directory for "+markdownFile+", "+jsonFile+" and the plots "+svgFile+" and "+ratesFile+"; empty to write none")
	flags.StringVar(&cfg.Render, "render", "", "render "+markdownFile+" and the plots again from a "+jsonFile+" a run wrote, into -out, without measuring")
	l.modelFit = flags.String("model-fit", "", "comma-separated "+jsonFile+" files of cluster runs whose clients and leaders vary from node to node: fit the "+
		"model of each node's CPU per message to them and write "+modelFile+" into -out, without measuring")
	l.modelCheck = flags.String("model-check", "", "comma-separated "+jsonFile+" files of cluster runs to check the -model-fit model against")
	flags.BoolVar(&cfg.Estimate, "estimate", false, "print what the run would measure and how long it should take, and exit without measuring")
	l.quick = flags.Bool("quick", false, "short defaults to try the benchmark: N=4, 200 msg/s for 3s, steps 200,400 without 10 % steps, idle radixes 2,16 for 3s")
	return l
}

// readLists reads the flags that are lists, and checks that every set they
// name can hold the run's range.
func (cfg *config) readLists(l listFlags) error {
	cfg.ModelFit, cfg.ModelCheck = results.Words(*l.modelFit), results.Words(*l.modelCheck)
	if cfg.URLs = results.Words(cfg.URL); len(cfg.URLs) == 0 {
		return errors.New("-url names no AMQP URL")
	}
	cfg.URL = cfg.URLs[0]
	if cfg.GroupSize < 0 {
		return fmt.Errorf("-quorum-initial-group-size must be 0 (none) or more, got %d", cfg.GroupSize)
	}
	var err error
	if cfg.Variants, err = parseVariants(*l.variantList); err != nil {
		return err
	}
	if cfg.Steps, err = parseRates(*l.steps); err != nil {
		return fmt.Errorf("-steps: %w", err)
	}
	if err := topology.Validate(topology.Spec{Name: "check", VHost: cfg.VHost, Levels: cfg.Levels, Resolution: cfg.Resolution}); err != nil {
		return fmt.Errorf("-levels %d -resolution %s: %w", cfg.Levels, cfg.Resolution, err)
	}
	for _, v := range cfg.Variants {
		if cfg.levelsIn(v.Radix) == 0 {
			return fmt.Errorf("-variants %s: no set of radix %d holds %s at resolution %s", v.Slug, v.Radix, cfg.maxDelay(), cfg.Resolution)
		}
	}
	if cfg.BaselineDelay < 0 {
		cfg.BaselineDelay = cfg.Resolution << (cfg.Levels - 1)
	}
	if cfg.IdleRadixes, err = parseRadixes(*l.idleRadixes); err != nil {
		return fmt.Errorf("-idle-radixes: %w", err)
	}
	for _, radix := range cfg.IdleRadixes {
		if cfg.levelsIn(radix) == 0 {
			return fmt.Errorf("-idle-radixes: no set of radix %d holds %s at resolution %s", radix, cfg.maxDelay(), cfg.Resolution)
		}
	}
	return nil
}

// checkDurations spells out the default durations, warns of figures that
// are not steady-state and refuses what cannot run.
func (cfg *config) checkDurations() error {
	steady := steadyState(cfg.maxDelay())
	if cfg.Duration == 0 {
		cfg.Duration = steady
	}
	if cfg.SearchDuration == 0 {
		cfg.SearchDuration = cfg.Duration
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{{"-duration", cfg.Duration}, {"-search-duration", cfg.SearchDuration}} {
		if d.value > 0 && d.value < steady && (d.flag == "-duration" || cfg.SearchDuration != cfg.Duration) {
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf(
				"%s %s is shorter than twice the longest delay (%s): the broker never carries the full load of every delay at once, so these figures are not steady-state and flatter the layout",
				d.flag, topology.FormatDuration(d.value), topology.FormatDuration(steady)))
		}
	}
	if cfg.BaselineDelay > 0 {
		if err := topology.Validate(topology.Spec{Name: "check", VHost: cfg.VHost, Levels: 1, Resolution: cfg.BaselineDelay}); err != nil {
			return fmt.Errorf("-baseline-delay %s: %w", cfg.BaselineDelay, err)
		}
	}
	switch {
	case cfg.Rate <= 0:
		return fmt.Errorf("-rate must be positive, got %g", cfg.Rate)
	case cfg.Duration <= 0 || cfg.SearchDuration <= 0:
		return errors.New("-duration and -search-duration must be positive")
	case cfg.AbandonLag != 0 && cfg.AbandonLag <= cfg.LagLimit:
		return fmt.Errorf("-abandon-lag %s must be longer than the lag limit %s, or 0", cfg.AbandonLag, cfg.LagLimit)
	case len(cfg.IdleRadixes) > 0 && cfg.IdleWindow <= 0:
		return errors.New("-idle-window must be positive")
	}
	return nil
}

// levelsIn is the number of digits of radix a set needs to hold the run's
// longest delay, as the planner picks it from a max_delay; 0 when it cannot.
func (c config) levelsIn(radix int) int {
	return levelsFor(c.maxDelay(), radix, c.Resolution)
}

// levelsFor is the planner's number of levels for a max_delay in radix at
// resolution, or 0 when no valid set holds it.
func levelsFor(maxDelay time.Duration, radix int, resolution time.Duration) int {
	spec, err := topology.Resolve(topology.Spec{Name: "check", VHost: "/", MaxDelay: maxDelay, Radix: radix, Resolution: resolution})
	if err != nil {
		return 0
	}
	return spec.Levels
}

// commandLine writes a command as a shell would take it, quoting the
// arguments that need it.
func commandLine(name string, args []string) string {
	words := []string{name}
	for _, arg := range args {
		if arg == "" || strings.ContainsFunc(arg, func(r rune) bool { return !isShellSafe(r) }) {
			arg = "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
		}
		words = append(words, arg)
	}
	return strings.Join(words, " ")
}

func isShellSafe(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-_./:,=+@%", r)
}

func joinSlugs(vs []variant) string {
	return results.Join(vs, ",", func(v variant) string { return v.Slug })
}

func parseVariants(list string) ([]variant, error) {
	var chosen []variant
	for _, slug := range strings.Split(list, ",") {
		slug = strings.TrimSpace(slug)
		i := slices.IndexFunc(variants, func(v variant) bool { return v.Slug == slug })
		if i < 0 {
			return nil, fmt.Errorf("-variants: unknown variant %q; the variants are %s", slug, joinSlugs(variants))
		}
		chosen = append(chosen, variants[i])
	}
	return chosen, nil
}

// parseRadixes parses comma-separated radixes the planner allows, in the
// order given, without repeats.
func parseRadixes(list string) ([]int, error) {
	radixes, err := results.List(list, func(field string) (int, error) {
		radix, err := strconv.Atoi(field)
		if err != nil || !slices.Contains(topology.Radixes, radix) {
			return 0, fmt.Errorf("%q is not a radix the planner allows (%v)", field, topology.Radixes)
		}
		return radix, nil
	})
	var unique []int
	for _, radix := range radixes {
		if !slices.Contains(unique, radix) {
			unique = append(unique, radix)
		}
	}
	return unique, err
}

// parseRates parses comma-separated positive rates, returned ascending.
func parseRates(list string) ([]float64, error) {
	rates, err := results.List(list, func(field string) (float64, error) {
		rate, err := strconv.ParseFloat(field, 64)
		if err != nil || rate <= 0 {
			return 0, fmt.Errorf("%q is not a positive rate", field)
		}
		return rate, nil
	})
	slices.Sort(rates)
	return slices.Compact(rates), err
}

// groupSizeOf is the group size of v's sets: the run's, for quorum queues.
func (c config) groupSizeOf(v variant) int {
	if v.QueueType != topology.QueueTypeQuorum {
		return 0
	}
	return c.GroupSize
}
