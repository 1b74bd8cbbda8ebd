package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// freshnessMarkdownEnv names the file TestAccStatisticsFreshness writes
// its figures to when it passes (`CHECKS_MARKDOWN=benchmarks/checks-4.0.md`).
const freshnessMarkdownEnv = "CHECKS_MARKDOWN"

// freshnessQueues is how many quorum queues the measurement watches at
// once, each read every freshnessPoll; queue i gets its message i × 1 s
// later than queue 0, so that the publishes fall across the leaders' 5 s
// ticks, which run in step for queues declared together.
const (
	freshnessQueues = 5
	freshnessPoll   = 250 * time.Millisecond
)

// TestAccStatisticsFreshness measures on the test broker (with management
// metrics) what the no-peek check of a quorum queue relies on (checkRule,
// countFresh): how long a new queue waits for its first statistics; how
// long a published message takes to show in them; how often a queue's
// reductions change, and that its counts never change without them but in
// a torn read, next to a change of them (a read between the collection's
// write of the counts and that of the reductions, which countFresh's
// second read of a row steps over); and how many changes of reductions
// after a publish the count needs — at most two, the proof countFresh
// waits for. Then how long Apply takes to delete five such empty queues at
// once. It fails if a count changes with no change of reductions beside
// it, or needs a third change.
func TestAccStatisticsFreshness(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	ch := amqpChannel(t)
	base := uniqueName(t)
	queues := make([]topology.Queue, freshnessQueues)
	for i := range queues {
		queues[i] = quorumQueue(fmt.Sprintf("%s.%d", base, i))
	}
	declared := time.Now()
	createObjects(t, client, nil, queues, nil)
	var figures freshnessFigures
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, q := range queues {
		wg.Go(func() {
			offset := time.Duration(i) * time.Second
			w, err := watchQueue(t.Context(), q.Name, declared, offset, func() error { return publishTo(t.Context(), ch, q.Name) })
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("watching %s: %v", q.Name, err)
			}
			figures.add(w)
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, q := range queues {
		if _, _, err := ch.Get(q.Name, true); err != nil {
			t.Fatal(err)
		}
		awaitStatistics(t, client, q.Name, 0) // until then they count the message taken: a deletion would be refused
	}
	figures.deletion = timeDeletion(t, client, queues)
	t.Log(figures.markdown())
	if figures.violations > 0 || slices.Max(figures.changesToCount) > 2 {
		t.Errorf("a count changed with no change of its reductions beside it %d times, or needed %d changes: the rule's proof does not hold",
			figures.violations, slices.Max(figures.changesToCount))
	}
	writeFreshness(t, client, figures)
}

// watch is what watching one queue found.
type watch struct {
	firstStatistics time.Duration   // after the declaration
	countLag        time.Duration   // from the publish's confirm to a count of 1
	changesToCount  int             // changes of reductions from the publish to that count
	intervals       []time.Duration // between changes of reductions
	torn            int             // count changes without a reductions change, in a read next to one
	violations      int             // count changes without a reductions change beside them
}

// watchQueue reads queue every freshnessPoll: until its first statistics, then
// for 12 s and offset, when it publishes once (publish), then until the
// count shows the message and 12 s more.
func watchQueue(ctx context.Context, queue string, declared time.Time, offset time.Duration, publish func() error) (watch, error) {
	var w watch
	var last freshnessSample
	var published, lastChange, counted time.Time
	// Reads are numbered; a count change without its reductions is torn if
	// the read before or after it changed them.
	var read, reductionsChangedAt, unexplainedAt int
	for started := time.Now(); ; time.Sleep(freshnessPoll) {
		s, err := readFreshness(ctx, queue)
		now := time.Now()
		read++
		if unexplainedAt != 0 && unexplainedAt < read-1 {
			w.violations++ // neither the read before it nor the one after changed the reductions
			unexplainedAt = 0
		}
		switch {
		case err != nil:
			return w, err
		case time.Since(started) > 2*time.Minute+testHangSlack:
			return w, fmt.Errorf("hung: still watching after %s: %+v", 2*time.Minute+testHangSlack, w)
		case s.Reductions == nil:
			continue
		case last.Reductions == nil:
			w.firstStatistics, lastChange = now.Sub(declared), now
		case *s.Reductions != *last.Reductions:
			w.intervals = append(w.intervals, now.Sub(lastChange))
			lastChange, reductionsChangedAt = now, read
			if !published.IsZero() && counted.IsZero() {
				w.changesToCount++
			}
			if unexplainedAt == read-1 {
				w.torn, unexplainedAt = w.torn+1, 0
			}
		case s.Messages != last.Messages && reductionsChangedAt == read-1:
			w.torn++
		case s.Messages != last.Messages:
			unexplainedAt = read
		}
		if !published.IsZero() && counted.IsZero() && s.Messages == 1 {
			counted, w.countLag = now, now.Sub(published)
		}
		last = s
		if published.IsZero() && now.Sub(declared) > w.firstStatistics+12*time.Second+offset {
			if err := publish(); err != nil {
				return w, err
			}
			published = time.Now()
		}
		if !counted.IsZero() && now.Sub(counted) > 12*time.Second && unexplainedAt == 0 {
			return w, nil
		}
	}
}

// publishTo publishes a message to queue and waits for its confirm.
func publishTo(ctx context.Context, ch *amqp.Channel, queue string) error {
	confirmation, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false,
		amqp.Publishing{DeliveryMode: amqp.Persistent, Body: []byte("test " + queue)})
	if err != nil {
		return err
	}
	if acked, err := confirmation.WaitContext(ctx); err != nil || !acked {
		return fmt.Errorf("publishing to %s: acked = %v, error = %v", queue, acked, err)
	}
	return nil
}

type freshnessSample struct {
	Messages   int64  `json:"messages"`
	Reductions *int64 `json:"reductions"`
}

// readFreshness reads queue's count and reductions; a queue without
// statistics yet answers [] (no column it has), an empty sample.
func readFreshness(ctx context.Context, queue string) (freshnessSample, error) {
	query := url.Values{"columns": {"messages,reductions"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		accEndpoint+"/api/queues/"+url.PathEscape(accVHost)+"/"+url.PathEscape(queue)+"?"+query.Encode(), nil)
	if err != nil {
		return freshnessSample{}, err
	}
	req.SetBasicAuth("guest", "guest")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return freshnessSample{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return freshnessSample{}, fmt.Errorf("reading %s: %s %v", queue, resp.Status, err)
	}
	var s freshnessSample
	if strings.HasPrefix(string(body), "[") {
		return s, nil
	}
	return s, json.Unmarshal(body, &s)
}

// timeDeletion deletes the empty queues in one Apply, as a destroy does,
// and returns how long it took.
func timeDeletion(t *testing.T, client *broker.Client, queues []topology.Queue) time.Duration {
	t.Helper()
	var deletions []topology.Change
	for i := range queues {
		deletions = append(deletions, topology.Change{Kind: topology.DeleteQueue, Queue: &queues[i]})
	}
	started := time.Now()
	if err := client.Apply(t.Context(), accVHost, deletions, broker.ApplyOptions{}); err != nil {
		t.Fatalf("deleting the empty queues: %v", err)
	}
	return time.Since(started)
}

// freshnessFigures are the measurements of every queue watched.
type freshnessFigures struct {
	firstStatistics, countLag, intervals []time.Duration
	changesToCount                       []int
	torn, violations                     int
	deletion                             time.Duration
}

func (f *freshnessFigures) add(w watch) {
	f.firstStatistics = append(f.firstStatistics, w.firstStatistics)
	f.countLag = append(f.countLag, w.countLag)
	f.intervals = append(f.intervals, w.intervals...)
	f.changesToCount = append(f.changesToCount, w.changesToCount)
	f.torn += w.torn
	f.violations += w.violations
}

func (f freshnessFigures) markdown() string {
	var b strings.Builder
	b.WriteString("| measure | n | min | median | max |\n|---|--:|--:|--:|--:|\n")
	for _, row := range []struct {
		name   string
		values []time.Duration
	}{
		{"a new quorum queue's first statistics, after its declaration", f.firstStatistics},
		{"a published message in the statistics' count, after its confirm", f.countLag},
		{"between two changes of a queue's reductions", f.intervals},
	} {
		s := slices.Sorted(slices.Values(row.values))
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", row.name, len(s), seconds(s[0]), seconds(s[len(s)/2]), seconds(s[len(s)-1]))
	}
	c := slices.Sorted(slices.Values(f.changesToCount))
	fmt.Fprintf(&b, "| changes of reductions from the publish to the count | %d | %d | %d | %d |\n", len(c), c[0], c[len(c)/2], c[len(c)-1])
	fmt.Fprintf(&b, "\nCounts that changed without their reductions: %d in a torn read (the read before or after it changed them), "+
		"%d otherwise. Apply deleted the %d empty queues at once, each after its no-peek check, in %s.\n",
		f.torn, f.violations, freshnessQueues, seconds(f.deletion))
	return b.String()
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// writeFreshness writes the figures, with where they come from, to the
// file freshnessMarkdownEnv names, if any.
func writeFreshness(t *testing.T, client *broker.Client, f freshnessFigures) {
	path := os.Getenv(freshnessMarkdownEnv)
	if path == "" || t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	provenance := machine.Collect(ctx, "")
	node, err := client.Node(ctx)
	if err != nil {
		t.Fatal(err)
	}
	provenance.RabbitMQ, provenance.Erlang, provenance.MetadataStore = node.RabbitMQVersion, node.ErlangVersion, node.MetadataStore
	text := "# Statistics freshness on RabbitMQ " + node.RabbitMQVersion + "\n\n" + provenance.Markdown() +
		"Written by `TestAccStatisticsFreshness` (internal/broker, `" + freshnessMarkdownEnv + "=…`), with management metrics on: " +
		fmt.Sprintf("%d quorum queues declared at once, each read every %s until its first statistics, for 12 s more, "+
			"then (queue i later by i × 1 s, across a tick) one message published to it, read on until the count showed it "+
			"and 12 s more.\n\n", freshnessQueues, freshnessPoll) + f.markdown()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}
