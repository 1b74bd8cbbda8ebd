package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
)

// A broker profile: the reductions (the VM's unit of work) each kind of Erlang
// process ran during a trial, which tells where a layout's extra CPU goes.

// processKindsExpr asks a node for its live processes' reductions by the module
// that started each, and its total; no $ nor quotes: Debian's rabbitmqctl uses a shell.
const processKindsExpr = `Sums = lists:foldl(fun(P, Acc) ->
    case erlang:process_info(P, reductions) of
        {reductions, R} ->
            {M, _, _} = case proc_lib:translate_initial_call(P) of
                {proc_lib, _, _} ->
                    case erlang:process_info(P, initial_call) of
                        {initial_call, Call} -> Call;
                        undefined -> {exited, exited, 0}
                    end;
                Call -> Call
            end,
            maps:update_with(M, fun(S) -> S + R end, R, Acc);
        undefined -> Acc
    end
end, #{}, erlang:processes()),
{Total, _} = erlang:statistics(exact_reductions),
[{node_total, Total} | maps:to_list(Sums)].`

// totalKind is the key of a sample's node-wide total.
const totalKind = "node_total"

// processSample is one reading of a node: reductions by process kind, and
// the total under totalKind.
type processSample map[string]int64

// processTuple matches one {kind, reductions} of the eval's answer, however
// rabbitmqctl wraps its lines; a kind is an atom, quoted or not.
var processTuple = regexp.MustCompile(`\{\s*('(?:[^'\\]|\\.)*'|[a-z][\w@]*)\s*,\s*(\d+)\s*\}`)

func parseProcessSample(output string) (processSample, error) {
	sample := processSample{}
	for _, m := range processTuple.FindAllStringSubmatch(output, -1) {
		n, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("reductions %q: %w", m[2], err)
		}
		sample[strings.Trim(m[1], "'")] += n
	}
	if _, ok := sample[totalKind]; !ok {
		return nil, fmt.Errorf("no total in rabbitmqctl's answer %q", clipText(output, 200))
	}
	return sample, nil
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// processSampler reads a node's process kinds with rabbitmqctl, and the
// CPU time of its OS process's threads.
type processSampler struct {
	rabbitmqctl string
	node        string
	pid         int
}

// brokerSample is one reading of processSampler.
type brokerSample struct {
	processes processSample
	threads   map[string]time.Duration
}

// defaultRabbitmqctl is the repository's wrapper when the program runs from its
// root, as make does; else rabbitmqctl on PATH.
func defaultRabbitmqctl() string {
	const wrapper = "scripts/rabbitmq-cli/rabbitmqctl"
	if _, err := os.Stat(wrapper); err == nil {
		return wrapper
	}
	return "rabbitmqctl"
}

func (s processSampler) sample(ctx context.Context) (brokerSample, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, s.rabbitmqctl, "-n", s.node, "eval", processKindsExpr).CombinedOutput()
	if err != nil {
		return brokerSample{}, fmt.Errorf("%s -n %s eval: %w: %s", s.rabbitmqctl, s.node, err, clipText(strings.TrimSpace(string(out)), 300))
	}
	processes, err := parseProcessSample(string(out))
	if err != nil {
		return brokerSample{}, err
	}
	// Threads after the eval: its own work on the node falls outside the trial's.
	threads, err := machine.ThreadCPU(s.pid)
	if err != nil {
		return brokerSample{}, fmt.Errorf("the broker's threads: %w", err)
	}
	return brokerSample{processes: processes, threads: threads}, nil
}

// processWork is what the kinds of processes ran during a trial.
type processWork struct {
	// Kinds holds the reductions each kind's processes that lived through
	// the whole trial ran during it (a process started during the trial
	// counts whole); Total the node's, exited processes included.
	Kinds map[string]int64 `json:"kinds"`
	Total int64            `json:"total"`
	// ThreadCPU is the CPU time each kind of the broker's OS threads used
	// (erts_sched: the schedulers, which run the processes and busy-wait
	// for work; erts_dios: dirty I/O, file reads and writes).
	ThreadCPU map[string]time.Duration `json:"thread_cpu_ns,omitempty"`
}

// workBetween is the work of each kind from one sample to a later one.
func workBetween(before, after brokerSample) processWork {
	w := processWork{Kinds: map[string]int64{}, Total: after.processes[totalKind] - before.processes[totalKind],
		ThreadCPU: map[string]time.Duration{}}
	for kind, r := range after.processes {
		if kind == totalKind {
			continue
		}
		if d := r - before.processes[kind]; d > 0 {
			w.Kinds[kind] = d
		}
	}
	for kind, cpu := range after.threads {
		if d := cpu - before.threads[kind]; d > 0 {
			w.ThreadCPU[kind] = d
		}
	}
	return w
}

// processKindNames say what the kinds that matter to a delay set are.
var processKindNames = map[string]string{
	"ra_server_proc":                    "quorum queues' Raft servers",
	"rabbit_fifo_dlx_worker":            "at-least-once dead-letter workers",
	"ra_log_wal":                        "Raft write-ahead log",
	"ra_log_segment_writer":             "Raft segment writer",
	"rabbit_channel":                    "AMQP channels",
	"rabbit_reader":                     "AMQP connection readers",
	"rabbit_writer":                     "AMQP connection writers",
	"rabbit_amqqueue_process":           "classic queues",
	"erts_dirty_process_signal_handler": "the VM's signal handler for processes on dirty schedulers",
}

// processKindsShown is how many kinds the table names before it sums the
// rest.
const processKindsShown = 10

// brokerProfileMarkdown is the table of the main trials' broker work by
// process kind, per message delivered; empty when no trial was profiled.
func brokerProfileMarkdown(r report) string {
	var trials []trialResult
	for _, t := range r.Trials {
		if t.Main && t.BrokerWork != nil && t.Measurement.Delivered > 0 {
			trials = append(trials, t)
		}
	}
	if len(trials) == 0 {
		return ""
	}
	perMessage := func(t trialResult, reductions int64) float64 {
		return float64(reductions) / float64(t.Measurement.Delivered)
	}
	shown := topProcessKinds(trials)

	var b strings.Builder
	b.WriteString("\n## Where the broker's work goes\n\n")
	fmt.Fprintf(&b, "Reductions (the Erlang VM's count of the work each process runs) per message delivered, during each main trial, "+
		"by the module that started the process (`rabbitmqctl eval` before the first message and after the last arrived: a process "+
		"started in between counts whole, one that exited counts only in the total). The %d kinds that take the largest share in any trial; "+
		"the rest summed.\n\n", len(shown))
	header := []string{"process kind"}
	for _, t := range trials {
		header = append(header, trialName(t))
	}
	rows := [][]string{header}
	row := func(name string, value func(t trialResult) int64) {
		cells := []string{name}
		for _, t := range trials {
			cells = append(cells, formatReductions(perMessage(t, value(t))))
		}
		rows = append(rows, cells)
	}
	for _, kind := range shown {
		name := "`" + kind + "`"
		if what, ok := processKindNames[kind]; ok {
			name += " (" + what + ")"
		}
		row(name, func(t trialResult) int64 { return t.BrokerWork.Kinds[kind] })
	}
	row("other live processes", func(t trialResult) int64 {
		var sum int64
		for kind, n := range t.BrokerWork.Kinds {
			if !slices.Contains(shown, kind) {
				sum += n
			}
		}
		return sum
	})
	row("exited processes", func(t trialResult) int64 {
		var live int64
		for _, n := range t.BrokerWork.Kinds {
			live += n
		}
		return max(t.BrokerWork.Total-live, 0)
	})
	row("**total**", func(t trialResult) int64 { return t.BrokerWork.Total })
	results.Table(&b, rows, "l"+strings.Repeat("r", len(trials)))
	b.WriteString(threadCPUMarkdown(trials))
	return b.String()
}

// topProcessKinds are the processKindsShown kinds that take the largest
// share of any trial's work, largest first.
func topProcessKinds(trials []trialResult) []string {
	share := map[string]float64{}
	for _, t := range trials {
		for kind, n := range t.BrokerWork.Kinds {
			share[kind] = max(share[kind], float64(n)/float64(max(t.BrokerWork.Total, 1)))
		}
	}
	kinds := slices.Collect(maps.Keys(share))
	slices.SortFunc(kinds, func(a, b string) int {
		return cmp.Or(cmp.Compare(share[b], share[a]), strings.Compare(a, b))
	})
	return kinds[:min(len(kinds), processKindsShown)]
}

// threadKindNames say what the Erlang VM's threads do.
var threadKindNames = map[string]string{
	"erts_sched": "schedulers: run the processes above, and busy-wait for work before they sleep",
	"erts_dios":  "dirty I/O schedulers: file reads and writes",
	"erts_dcpus": "dirty CPU schedulers: long NIFs, such as a large process's garbage collection",
	"erts_aux":   "auxiliary work: timers, delayed memory deallocation",
	"erts_poll":  "network and file-descriptor polling",
}

// threadCPUMarkdown is the table of the broker's CPU by thread kind, per message
// delivered, kinds grouped by machine.ThreadKind; "" when no trial read its threads.
func threadCPUMarkdown(trials []trialResult) string {
	kinds := map[string]bool{}
	byKind := make([]map[string]time.Duration, len(trials))
	for i, t := range trials {
		byKind[i] = map[string]time.Duration{}
		for name, cpu := range t.BrokerWork.ThreadCPU {
			kind := machine.ThreadKind(name)
			byKind[i][kind] += cpu
			kinds[kind] = true
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nThe CPU time of the broker's OS threads over the same span, by kind, in ms per message delivered " +
		"(a kind's share of the machine is not in the reductions above when its threads spin or wait on the kernel):\n\n")
	header := []string{"thread kind"}
	for _, t := range trials {
		header = append(header, trialName(t))
	}
	rows := [][]string{header}
	row := func(name string, cpu func(threads map[string]time.Duration) time.Duration) {
		cells := []string{name}
		for i, t := range trials {
			cells = append(cells, formatMs(cpu(byKind[i])/time.Duration(t.Measurement.Delivered)))
		}
		rows = append(rows, cells)
	}
	named := slices.Sorted(maps.Keys(threadKindNames))
	for _, kind := range named {
		if kinds[kind] {
			row("`"+kind+"` ("+threadKindNames[kind]+")", func(threads map[string]time.Duration) time.Duration { return threads[kind] })
		}
	}
	row("other threads", func(threads map[string]time.Duration) time.Duration {
		var sum time.Duration
		for kind, cpu := range threads {
			if _, ok := threadKindNames[kind]; !ok {
				sum += cpu
			}
		}
		return sum
	})
	row("**all threads**", func(threads map[string]time.Duration) time.Duration {
		var sum time.Duration
		for _, cpu := range threads {
			sum += cpu
		}
		return sum
	})
	results.Table(&b, rows, "l"+strings.Repeat("r", len(trials)))
	return b.String()
}

func formatReductions(perMessage float64) string {
	if perMessage < 0.5 {
		return "–"
	}
	return results.Rate(perMessage)
}
