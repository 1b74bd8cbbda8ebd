package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

const (
	// checksNode is the script's node the checks tests run alone.
	checksNode = 5
	// The set holds delays up to 63 s; its messages are due 55 to 63 s after
	// they are published, after every check of the test.
	checksLevels     = 6
	checksResolution = time.Second
	checksMessages   = 20
	checksMinDelay   = 55 * time.Second
	// checksApplies and checksDestroys are the steps that check the set's
	// draining queues: each apply's plan and apply refresh the set (counting
	// them) and its apply checks them before it decides to keep them; each
	// refused destroy refreshes and checks them.
	checksApplies  = 10
	checksDestroys = 5
)

// TestFaultChecksWithStatistics and TestFaultChecksWithoutStatistics check
// that the provider's checks of a queue that holds messages never send a
// message on early (issue 23): a quorum, at-least-once set switches
// generations while its older one holds 20 messages due in 55 to 63 s,
// then plans and applies 10 times and refuses to be destroyed 5 times,
// each checking every queue of the draining generation (at least 25 checks
// of each), and every message arrives on time, once. RabbitMQ 4.x counts a
// returned message against a quorum queue's delivery limit (20 by default);
// without management statistics every check peeks.
func TestFaultChecksWithStatistics(t *testing.T) {
	checksScenario(t, "")
}

// TestFaultChecksWithoutStatistics is TestFaultChecksWithStatistics on a
// node that collects no management metrics: the provider reads no count
// and peeks at every queue instead, and must still never call the draining
// generation empty while it holds messages.
//
// It runs on 4.x, which deprecates the collection of management metrics:
// what 4.x asks operators to prepare for is the deprecated feature not
// permitted. RabbitMQ 3.10 with management_agent.disable_metrics_collector
// answers every read of an exchange by name with 500 (a badkey in
// rabbit_mgmt_db:detail_exchange_stats, even with disable_stats=true), so
// no set can be read there at all.
func TestFaultChecksWithoutStatistics(t *testing.T) {
	if version := os.Getenv("RABBITMQ_VERSION"); strings.HasPrefix(version, "3.") {
		t.Skipf("RabbitMQ %s without management metrics cannot read an exchange by name (500); this runs on 4.x", version)
	}
	checksScenario(t, "deprecated_features.permit.management_metrics_collection = false")
}

func checksScenario(t *testing.T, conf string) {
	n, client, name, routeQueue := setUpNode(t, checksNode, nodeConfig{Conf: conf}, "faults-checks-")
	names := topology.Names(name)
	config := func(strategy topology.DeadLetterStrategy, migrationWait string) string {
		// Without force_destroy: the destroys must be refused.
		return strings.Replace(
			setConfig(plainProvider(n.ManagementURL), name, checksLevels, checksResolution, strategy, migrationWait, route{Queue: routeQueue, Key: restartKey}),
			"force_destroy        = true", "force_destroy        = false", 1)
	}
	set := messaging.Set{IngestExchange: names.Ingest(), Levels: checksLevels, Resolution: checksResolution}
	var f *flight // started by a step
	t.Cleanup(func() { f.close() })
	var firstDue, switching time.Time
	holdingChecked := 0
	// holding checks, while the first message is more than a few seconds
	// from due, that the state counts the draining generation's messages —
	// once its statistics have settled after the switch (drain.Refreshed:
	// until then the plan does not call it empty, and its count may read 0).
	holding := func(s *terraform.State) error {
		if time.Until(firstDue) < 3*time.Second || time.Since(switching) < broker.StatisticsLag+10*time.Second {
			return nil
		}
		res, ok := s.RootModule().Resources["rabbitmq_delay_queue_set.test"]
		if !ok {
			return fmt.Errorf("no rabbitmq_delay_queue_set.test in the state")
		}
		holdingChecked++
		if messages, _ := strconv.Atoi(res.Primary.Attributes["draining.0.messages"]); messages == 0 {
			return fmt.Errorf("the state counts %q messages in the draining generation (%q generations), which holds %d due from %s on",
				res.Primary.Attributes["draining.0.messages"], res.Primary.Attributes["draining.#"], checksMessages, firstDue.Format(time.RFC3339))
		}
		return nil
	}
	steps := []resource.TestStep{
		{Config: config(topology.AtLeastOnce, "0s")},
		{
			PreConfig: func() {
				f = newFlight(t, n, name, routeQueue)
				delays := spreadDelays(checksMessages, checksMinDelay, topology.MaxDelayFor(checksLevels, checksResolution), checksResolution,
					rand.New(rand.NewPCG(5, 6)))
				if err := f.publish(set, delays); err != nil {
					t.Fatal(err)
				}
				switching = time.Now()
				firstDue = f.sent[0].Due()
				for _, m := range f.sent {
					if m.Due().Before(firstDue) {
						firstDue = m.Due()
					}
				}
				if conf != "" {
					requireNoStatistics(t, n.ManagementURL, names.Level(checksLevels-1))
				}
			},
			// A new generation: the old one drains with every message.
			Config: config(topology.AtMostOnce, "0s"),
			Check:  holding,
		},
	}
	for i := range checksApplies {
		// A changed migration_wait is an update: its apply checks the
		// draining generation before it keeps it.
		step := resource.TestStep{Config: config(topology.AtMostOnce, []string{"1s", "0s"}[i%2]), Check: holding}
		if i == 0 {
			// The checks come once the statistics have settled, when the
			// state must count the messages, and go on past the instant
			// (32 s after the publish) when they all move on to the next
			// level at once, which statistics see late.
			step.PreConfig = func() { time.Sleep(time.Until(switching.Add(broker.StatisticsLag + 10*time.Second))) }
		}
		steps = append(steps, step)
	}
	for range checksDestroys {
		steps = append(steps, resource.TestStep{
			Config:      config(topology.AtMostOnce, "0s"),
			Destroy:     true,
			ExpectError: regexp.MustCompile(`Delay Queues Hold Messages`),
		})
	}
	// Once every message has arrived, the draining generation is empty: the
	// next apply (migration_wait covers the statistics' lag) deletes it.
	steps = append(steps, resource.TestStep{
		PreConfig: func() {
			// How many steps came while the messages were held is the
			// machine's pace, a figure; at least one must have, or the run
			// told nothing of the counts.
			t.Logf("the checks ran until %s before the first message was due; the draining count was checked after %d steps",
				time.Until(firstDue).Round(time.Millisecond), holdingChecked)
			if holdingChecked < 1 {
				t.Errorf("hung: no step checked the state's count of the draining generation while it held messages")
			}
			waitCtx, cancel := context.WithDeadlineCause(t.Context(), lastDue(f.sent).Add(lossWindow), errHung)
			defer cancel()
			if err := f.arrivals.waitForAll(waitCtx, f.sent); err != nil {
				t.Error(err)
			}
			f.arrivals.settle(t.Context(), 2*time.Second)
			row := f.arrivals.row(checksScenarioName(conf), f.sent, f.parked, 0)
			row.Test, row.Strategy = t.Name(), topology.AtLeastOnce
			report.addRow(row)
			t.Logf("%d lost, %d parked, %d duplicated, %d early; lateness p99 %s, max %s",
				row.Lost, row.Parked, row.Duplicated, row.Early, row.P99.Round(time.Millisecond), row.Max.Round(time.Millisecond))
			if row.Lost > 0 || row.Parked > 0 || row.Early > 0 || row.Duplicated > 0 {
				t.Errorf("%d lost, %d parked, %d early, %d duplicated of %d messages",
					row.Lost, row.Parked, row.Early, row.Duplicated, row.Messages)
			}
		},
		Config: config(topology.AtMostOnce, "30s"),
		Check: func(*terraform.State) error {
			actual, err := client.ReadSet(t.Context(), "/", name)
			if err != nil {
				return err
			}
			if _, draining, err := topology.InferGenerations(name, actual); err != nil || len(draining) > 0 {
				return fmt.Errorf("after every message arrived, the apply kept %d draining generations (%v)", len(draining), err)
			}
			return nil
		},
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             func(*terraform.State) error { return checkSetGone(client, name) },
		Steps:                    steps,
	})
}

func checksScenarioName(conf string) string {
	if conf == "" {
		return "25+ checks of a draining generation (1 node, at-least-once) → quorum queue"
	}
	return "25+ checks of a draining generation, no management metrics (1 node, at-least-once) → quorum queue"
}

// requireNoStatistics fails the test unless the node answers queue without
// any message count, as a broker that collects no management metrics does.
func requireNoStatistics(t *testing.T, endpoint, queue string) {
	t.Helper()
	info := queueAnswer(t, endpoint, queue, nil)
	for _, field := range []string{"messages", "messages_ready"} {
		if value, ok := info[field]; ok && value != nil {
			t.Fatalf("the node counts %s = %v in %s: its management metrics are on, and the test proves nothing", field, value, queue)
		}
	}
}

// queueAnswer is the management API's answer about queue of vhost "/" at
// endpoint, to a GET with query, as guest.
func queueAnswer(t *testing.T, endpoint, queue string, query url.Values) map[string]any {
	t.Helper()
	target := endpoint + "/api/queues/%2F/" + url.PathEscape(queue)
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	return info
}
