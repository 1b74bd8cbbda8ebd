package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// testSwitchConfigs are a quorum set of 6 levels of 1 s at radix 2 and its
// switch to radix 4, a new generation, each with migration_wait as given:
// with none, only an exact count can delete the generation switched from
// in the switch's apply, its statistics being seconds from settled.
func testSwitchConfigs(name, migrationWait string) (before, after string) {
	attributes := func(radix int) string {
		return fmt.Sprintf(`  levels         = 6
  resolution     = "1s"
  radix          = %d
  migration_wait = %q
  force_destroy  = true # the parking lot keeps what arrives`, radix, migrationWait)
	}
	return testSetConfig(name, attributes(2)), testSetConfig(name, attributes(4))
}

// TestAccDelayQueueSet_switchDeletesAnEmptyGenerationAtOnce: a switch of an
// empty set deletes the old generation in the same apply, with no wait,
// where the broker counts it exactly (a peek on 4.3, its leaders' counts
// over AMQP on 4.0). On 4.0–4.2 a leader's 0 of an at-least-once queue
// stands only beside statistics that count no messages_dlx, so the switch
// comes once the old queues have their first statistics.
func TestAccDelayQueueSet_switchDeletesAnEmptyGenerationAtOnce(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	before, after := testSwitchConfigs(name, "0s")
	oldQueues := topology.Generation{Levels: 6, Radix: 2}.Queues(name)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{Config: before},
			{
				PreConfig: func() {
					if err := testWaitFirstStatistics(oldQueues); err != nil {
						t.Fatal(err)
					}
				},
				Config: after,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining"), knownvalue.ListExact(nil)),
				},
				Check: testCheckQueuesGone(client, name, oldQueues),
			},
		},
	})
}

// TestAccDelayQueueSet_switchKeepsAGenerationHoldingAMessage: a message
// published into the old generation just before the switch keeps it
// draining; the message arrives, not early, and a later apply deletes the
// generation once it is empty.
func TestAccDelayQueueSet_switchKeepsAGenerationHoldingAMessage(t *testing.T) {
	t.Parallel()
	client := testBrokerClient(t)
	name := testSetName(t)
	names := topology.Names(name)
	before, after := testSwitchConfigs(name, "0s")
	_, afterWithWait := testSwitchConfigs(name, "30s")
	oldQueues := topology.Generation{Levels: 6, Radix: 2}.Queues(name)
	// Long enough that the message is still in the old generation when the
	// step's refresh comes, on a busy machine too.
	const delay = 45 * time.Second
	var published time.Time
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{Config: before},
			{
				PreConfig: func() {
					key, err := topology.EncodeKey("", delay, 6, time.Second)
					if err == nil {
						published = time.Now()
						err = testPublish(context.Background(), names.Ingest(), key)
					}
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: after,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining").AtSliceIndex(0).AtMapKey("generation"), knownvalue.Int64Exact(0)),
				},
				Check: testCheckQueuesPresent(client, name, oldQueues),
			},
			{
				PreConfig: func() {
					if err := testArrivesOnTime(t, names.Unroutable(), published, delay); err != nil {
						t.Fatal(err)
					}
				},
				// Its wait outlasts statistics that still count the message that left.
				Config: afterWithWait,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining"), knownvalue.ListExact(nil)),
				},
				Check: testCheckQueuesGone(client, name, oldQueues),
			},
		},
	})
}

// testCheckQueuesPresent asks the broker that every one of queues of set
// name is in vhost "/".
func testCheckQueuesPresent(client *broker.Client, name string, queues []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		actual, err := client.ReadSet(context.Background(), "/", name)
		if err != nil {
			return err
		}
		for _, q := range queues {
			if !slices.Contains(actual.QueueNames(), q) {
				return fmt.Errorf("%s is gone from the broker; want its generation draining", q)
			}
		}
		return nil
	}
}

// testWaitFirstStatistics waits until each of queues of vhost "/" has the
// statistics an exact count of it may need: its counts, its policy (which
// on 3.x tells whether it may be peeked at) and messages_dlx. They come
// from tables collected apart, so one may show seconds before another.
func testWaitFirstStatistics(queues []string) error {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(250 * time.Millisecond) {
		var waiting []string
		for _, q := range queues {
			var fields map[string]json.RawMessage
			if err := testGetJSON("queues/%2F/"+url.PathEscape(q), &fields); err != nil {
				return err
			}
			for _, field := range []string{"messages", "effective_policy_definition", "messages_dlx"} {
				if len(fields[field]) == 0 || string(fields[field]) == "null" {
					waiting = append(waiting, q+" ("+field+")")
					break
				}
			}
		}
		switch {
		case len(waiting) == 0:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("no statistics of %v within a minute", waiting)
		}
	}
}

// testGetJSON reads path of the test broker's management API into out.
func testGetJSON(path string, out any) error {
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(os.Getenv("RABBITMQ_ENDPOINT"), "/")+"/api/"+path, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth(os.Getenv("RABBITMQ_USERNAME"), os.Getenv("RABBITMQ_PASSWORD"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /api/%s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
