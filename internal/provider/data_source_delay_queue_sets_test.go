package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// adoptionRecipe is the guide's recipe, the example's main.tf: every set
// the data source finds, adopted by one resource with for_each and one
// import block with the same for_each (Terraform 1.7 and later), after
// provider, with the example's vhost variable null: every vhost the user
// sees.
func adoptionRecipe(t *testing.T, provider string) string {
	t.Helper()
	recipe, err := os.ReadFile("../../examples/scenarios/adopt-every-set/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	return provider + "variable \"vhost\" {\n  type    = string\n  default = null\n}\n" + string(recipe)
}

// testProviderAs is a provider block that logs in as user.
func testProviderAs(user, password string) string {
	return fmt.Sprintf("provider \"rabbitmq\" {\n  username = %q\n  password = %q\n}\n", user, password)
}

// testDeclareSet declares the set of spec outside Terraform, as an earlier
// deployment whose state is lost left it: every object its plan lists,
// through the broker layer.
func testDeclareSet(t *testing.T, client *broker.Client, spec topology.Spec) {
	t.Helper()
	plan, err := topology.Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Apply(context.Background(), spec.VHost, topology.Diff(plan, topology.Topology{VHost: spec.VHost}), broker.ApplyOptions{}); err != nil {
		t.Fatalf("declaring the set %q in vhost %q: %v", spec.Name, spec.VHost, err)
	}
}

// testHandBuiltChain declares, as an operator does by hand through the
// management API, a binary chain in the default layout's names: classic
// queues declared without x-queue-type, exchanges and bindings one by one,
// and the queue route that the chain delivers to on its key. The layout
// says which objects a chain the inference accepts has; the arguments are
// the hand's.
func testHandBuiltChain(t *testing.T, vhost, name string, levels int, resolution time.Duration, route string) {
	t.Helper()
	admin, err := testAdmin()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := topology.Plan(topology.Spec{Name: name, VHost: vhost, Levels: levels, Resolution: resolution,
		QueueType: topology.QueueTypeClassic, Routes: []topology.Route{{Destination: route, Key: route}}})
	if err != nil {
		t.Fatal(err)
	}
	plan.Queues = append(plan.Queues, topology.Queue{Name: route})
	for _, e := range plan.Exchanges {
		settings := rabbithole.ExchangeSettings{Type: e.Type, Durable: true}
		if ae := e.Arguments.AlternateExchange; ae != "" {
			settings.Arguments = map[string]any{"alternate-exchange": ae}
		}
		if _, err := admin.DeclareExchange(vhost, e.Name, settings); err != nil {
			t.Fatalf("declaring exchange %s: %v", e.Name, err)
		}
	}
	for _, q := range plan.Queues {
		arguments := map[string]any{}
		if q.Arguments.MessageTTL != 0 {
			arguments["x-message-ttl"], arguments["x-dead-letter-exchange"] = q.Arguments.MessageTTL, q.Arguments.DeadLetterExchange
		}
		if _, err := admin.DeclareQueue(vhost, q.Name, rabbithole.QueueSettings{Durable: true, Arguments: arguments}); err != nil {
			t.Fatalf("declaring queue %s: %v", q.Name, err)
		}
	}
	for _, b := range plan.Bindings {
		info := rabbithole.BindingInfo{Source: b.Source, Destination: b.Destination, DestinationType: string(b.DestinationType), RoutingKey: b.RoutingKey}
		if _, err := admin.DeclareBinding(vhost, info); err != nil {
			t.Fatalf("binding %s: %v", b, err)
		}
	}
}

// testDefinitions is what GET /api/definitions/{vhost} exports of each
// vhost's exchanges, queues, bindings and policies, one JSON text per
// object, sorted: an apply that changes nothing on the broker leaves it
// the same.
func testDefinitions(t *testing.T, vhosts ...string) []string {
	t.Helper()
	admin, err := testAdmin()
	if err != nil {
		t.Fatal(err)
	}
	var objects []string
	add := func(vhost, kind string, items any) {
		var list []json.RawMessage
		encoded, _ := json.Marshal(items)
		if err := json.Unmarshal(encoded, &list); err != nil {
			t.Fatal(err)
		}
		for _, item := range list {
			objects = append(objects, vhost+" "+kind+" "+string(item))
		}
	}
	for _, vhost := range vhosts {
		d, err := admin.ListVhostDefinitions(vhost)
		if err != nil {
			t.Fatalf("exporting the definitions of vhost %q: %v", vhost, err)
		}
		add(vhost, "exchange", d.Exchanges)
		add(vhost, "queue", d.Queues)
		add(vhost, "binding", d.Bindings)
		add(vhost, "policy", d.Policies)
	}
	slices.Sort(objects)
	return objects
}

// brokerCheck is a state check that asks the broker, not the state: a
// legacy Check cannot run on a state that holds for_each instances keyed
// by strings (terraform-plugin-testing's state shim refuses them).
type brokerCheck func() error

func (f brokerCheck) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = f()
}

// testDefinitionsUnchanged compares the vhosts' definitions with before,
// which the step's PreConfig took.
func testDefinitionsUnchanged(t *testing.T, before *[]string, vhosts ...string) brokerCheck {
	return func() error {
		after := testDefinitions(t, vhosts...)
		if d := cmp.Diff(*before, after); d != "" {
			return fmt.Errorf("the broker's definitions changed (-before +after):\n%s", d)
		}
		t.Logf("definitions of %d objects in vhosts %s unchanged", len(after), strings.Join(vhosts, ", "))
		return nil
	}
}

// testCheckFound checks the data source's sets, by import ID, and its
// unreadable entries, each as "<vhost> <name>: <reason>" matched by a
// regular expression (an unread vhost's name is empty).
func testCheckFound(address string, sets []string, unreadable []string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[address]
		if !ok {
			return fmt.Errorf("no %s in state", address)
		}
		var got []string
		for i := range len(sets) + 10 {
			if id, ok := rs.Primary.Attributes[fmt.Sprintf("sets.%d.import_id", i)]; ok {
				got = append(got, id)
			}
		}
		if n := rs.Primary.Attributes["sets.#"]; n != fmt.Sprint(len(sets)) || !slices.Equal(got, sets) {
			return fmt.Errorf("found %s sets %q, want %q", n, got, sets)
		}
		if n := rs.Primary.Attributes["unreadable.#"]; n != fmt.Sprint(len(unreadable)) {
			return fmt.Errorf("found %s unreadable, want %d: %v", n, len(unreadable), rs.Primary.Attributes)
		}
		for i, want := range unreadable {
			prefix := fmt.Sprintf("unreadable.%d.", i)
			line := rs.Primary.Attributes[prefix+"vhost"] + " " + rs.Primary.Attributes[prefix+"name"] + ": " + rs.Primary.Attributes[prefix+"reason"]
			if !regexp.MustCompile(want).MatchString(line) {
				return fmt.Errorf("unreadable %d is %q, want a match of %q", i, line, want)
			}
		}
		return nil
	}
}

// adoptionScenario is the broker of issue 37's scenario, made outside
// Terraform: in vhost, the sets orders.retry (radix 2, quorum) and
// reminders (radix 16, classic) and the hand-built chain legacy.backoff;
// in nsbVHost, the set billing (radix 16, routing to the NServiceBus
// endpoint's exchange) and NServiceBus's delay infrastructure, replayed as
// the transport declares it; and a management user with every permission in
// those two vhosts, and none elsewhere.
type adoptionScenario struct {
	vhost, nsbVHost, user, password string
	lc                              libraryCase
}

// adoptionBroker makes the scenario's objects and user, deleted when the
// test ends.
func adoptionBroker(t *testing.T, client *broker.Client) adoptionScenario {
	t.Helper()
	_, nsbVHost, lc, conn := librarySetUp(t, "nservicebus")
	if err := onChannel(conn, lc.replay); err != nil {
		t.Fatal(err)
	}
	vhost := testVhost(t)
	testDeclareSet(t, client, topology.Spec{Name: "orders.retry", VHost: vhost, Levels: 4, Resolution: 500 * time.Millisecond})
	testDeclareSet(t, client, topology.Spec{Name: "reminders", VHost: vhost, Levels: 2, Radix: 16, QueueType: topology.QueueTypeClassic})
	testDeclareSet(t, client, topology.Spec{Name: "billing", VHost: nsbVHost, Levels: 2, Radix: 16,
		Routes: []topology.Route{{Destination: lc.destination, DestinationType: topology.DestinationExchange, Key: "invoices"}}})
	testHandBuiltChain(t, vhost, "legacy.backoff", 3, 5*time.Second, "legacy.work")
	const password = "adopt-every-set"
	all := rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"}
	user := testBrokerUser(t, password, "management", vhost, all)
	testSetBrokerUser(t, user, password, "management", nsbVHost, all)
	return adoptionScenario{vhost: vhost, nsbVHost: nsbVHost, user: user, password: password, lc: lc}
}

// checkGone asks the broker that nothing of the scenario's sets remains.
func (b adoptionScenario) checkGone(client *broker.Client) resource.TestCheckFunc {
	return resource.ComposeTestCheckFunc(
		testCheckSetGoneIn(client, b.vhost, "orders.retry"), testCheckSetGoneIn(client, b.vhost, "reminders"),
		testCheckSetGoneIn(client, b.vhost, "legacy.backoff"),
		testCheckSetGoneIn(client, b.nsbVHost, "billing"), libraryCheckGone(client, b.lc, b.nsbVHost))
}

// expectAdopted expects action for each adopted set, by import ID.
func expectAdopted(ids []string, action plancheck.ResourceActionType) []plancheck.PlanCheck {
	checks := make([]plancheck.PlanCheck, len(ids))
	for i, id := range ids {
		checks[i] = plancheck.ExpectResourceAction(fmt.Sprintf("rabbitmq_delay_queue_set.adopted[%q]", id), action)
	}
	return checks
}

// TestAccDelayQueueSets_adoptEverySet is issue 37's scenario: a broker with
// three sets of this provider's layout (radix 2 and 16), a binary chain
// built by hand and an NServiceBus layout, over two vhosts, made outside
// Terraform. A user that sees those two vhosts alone looks in every vhost
// it sees: the data source lists exactly those five, in one listing of the
// vhosts and three per vhost, however many sets they hold; one apply of
// the recipe adopts them all, changing no object on the broker; the next
// plan is empty.
func TestAccDelayQueueSets_adoptEverySet(t *testing.T) {
	client := testBrokerClient(t)
	b := adoptionBroker(t, client)
	vhost, nsbVHost := b.vhost, b.nsbVHost
	provider := testProviderAs(b.user, b.password)
	counter := &requestCounter{}
	want := []string{vhost + "/legacy.backoff", vhost + "/orders.retry", vhost + "/reminders", nsbVHost + "/billing", nsbVHost + "/nservicebus/nservicebus"}
	slices.Sort(want) // the vhosts' order is their names'
	var before []string
	expect := func(action plancheck.ResourceActionType) []plancheck.PlanCheck { return expectAdopted(want, action) }
	dataSourceOnly := provider + "data \"rabbitmq_delay_queue_sets\" \"existing\" {}\n"

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_7_0)},
		ProtoV6ProviderFactories: counter.factories(),
		CheckDestroy:             b.checkGone(client),
		Steps: []resource.TestStep{
			{
				Config: dataSourceOnly,
				Check:  testCheckFound("data.rabbitmq_delay_queue_sets.existing", want, nil),
			},
			{
				PreConfig:    counter.reset,
				RefreshState: true,
				Check:        testCheckRequests(t, counter, "the data source in 2 vhosts", 1+3*2),
			},
			{
				// More sets, the same requests.
				PreConfig: func() {
					for i := range 5 {
						testDeclareSet(t, client, topology.Spec{Name: fmt.Sprintf("more-%d", i), VHost: vhost, Levels: 3})
					}
					counter.reset()
				},
				RefreshState: true,
				Check:        testCheckRequests(t, counter, "the data source in 2 vhosts with 5 sets more", 1+3*2),
			},
			{
				PreConfig: func() {
					for i := range 5 {
						testTeardownSet(t, client, vhost, fmt.Sprintf("more-%d", i))
					}
					before = testDefinitions(t, vhost, nsbVHost)
				},
				Config: adoptionRecipe(t, provider),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             expect(plancheck.ResourceActionNoop),
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{testDefinitionsUnchanged(t, &before, vhost, nsbVHost)},
			},
			{
				Config:   adoptionRecipe(t, provider),
				PlanOnly: true,
			},
			{
				// The adopted sets leave the configuration, and are destroyed: the test
				// ends without for_each instances, which its state shim cannot read.
				Config:           dataSourceOnly,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: expect(plancheck.ResourceActionDestroy)},
			},
		},
	})
}

// testCheckRequests checks that the requests counted since the last reset
// are want.
func testCheckRequests(t *testing.T, counter *requestCounter, what string, want int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got := counter.sinceReset()
		t.Logf("%s: %d requests", what, got)
		if got != want {
			return fmt.Errorf("%s made %d requests, want %d", what, got, want)
		}
		return nil
	}
}

// testTeardownSet deletes what a test declared of the set name in vhost.
func testTeardownSet(t *testing.T, client *broker.Client, vhost, name string) {
	t.Helper()
	actual, err := client.ReadSet(context.Background(), vhost, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Apply(context.Background(), vhost, topology.Teardown(actual), broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
		t.Fatalf("deleting the set %q: %v", name, err)
	}
}

// notWholeSetsBroker makes, in a vhost of its own, the set whole, the set
// partial without its level 01 queue and its out exchange, the set drifted
// whose level 01 queue was declared again by hand with x-max-length, two
// queues named as the levels of the set lookalike without a TTL, and the
// exchange billing.out.
func notWholeSetsBroker(t *testing.T, client *broker.Client) string {
	t.Helper()
	vhost := testVhost(t)
	admin, err := testAdmin()
	if err != nil {
		t.Fatal(err)
	}
	testDeclareSet(t, client, topology.Spec{Name: "whole", VHost: vhost, Levels: 2, Radix: 4})
	testDeclareSet(t, client, topology.Spec{Name: "partial", VHost: vhost, Levels: 3})
	testDeclareSet(t, client, topology.Spec{Name: "drifted", VHost: vhost, Levels: 2, QueueType: topology.QueueTypeClassic})
	declareQueue := func(name string, arguments map[string]any) func() (*http.Response, error) {
		return func() (*http.Response, error) {
			return admin.DeclareQueue(vhost, name, rabbithole.QueueSettings{Durable: true, Arguments: arguments})
		}
	}
	for _, step := range []func() (*http.Response, error){
		func() (*http.Response, error) { return admin.DeleteQueue(vhost, "partial.level.01") },
		func() (*http.Response, error) { return admin.DeleteExchange(vhost, "partial.out") },
		func() (*http.Response, error) { return admin.DeleteQueue(vhost, "drifted.level.01") },
		declareQueue("drifted.level.01", map[string]any{"x-message-ttl": 2000, "x-dead-letter-exchange": "drifted.level.01.done", "x-max-length": 100}),
		declareQueue("lookalike.level.00", nil),
		declareQueue("lookalike.level.01", nil),
		func() (*http.Response, error) {
			return admin.DeclareExchange(vhost, "billing.out", rabbithole.ExchangeSettings{Type: "topic", Durable: true})
		},
	} {
		if _, err := step(); err != nil {
			t.Fatal(err)
		}
	}
	return vhost
}

// TestAccDelayQueueSets_notWholeSets looks in a vhost that holds a whole
// set, one that exists only in part, objects named as a set's levels
// without a TTL, a set with a drifted queue and exchanges named like a
// set's entry and exit: the data source lists the whole set, reports the
// three others with what is missing or wrong, ignores the exchanges, costs
// three requests, and changes nothing on the broker.
func TestAccDelayQueueSets_notWholeSets(t *testing.T) {
	vhost := notWholeSetsBroker(t, testBrokerClient(t))
	before := testDefinitions(t, vhost)
	counter := &requestCounter{}
	config := fmt.Sprintf("data \"rabbitmq_delay_queue_sets\" \"here\" {\n  vhost = %q\n}\n", vhost)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: counter.factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeTestCheckFunc(
					testCheckFound("data.rabbitmq_delay_queue_sets.here", []string{vhost + "/whole"}, []string{
						`^\S+ drifted: the objects describe a set of 2 levels of radix 2 at 1s, classic queues, at-most-once, but .*: ` +
							`queue drifted.level.01 differs: x-max-length 100 → \(none\): queue arguments cannot change in place; ` +
							`binding drifted.ingest -> queue drifted.level.01, key "#.1.\*" is missing\.`,
						`^\S+ lookalike: the objects named as this set's explain no delay queue set: no level queue has an x-message-ttl ` +
							`\(lookalike.level.00, lookalike.level.01\)`,
						`^\S+ partial: the objects describe a set of 3 levels of radix 2 at 1s, quorum queues, at-least-once, but .*: ` +
							`exchange partial.out is missing; queue partial.level.01 is missing; binding partial.level.00.done -> exchange partial.out, key "#" is missing;`,
					}),
					resource.TestCheckResourceAttr("data.rabbitmq_delay_queue_sets.here", "unreadable.2.import_id", url.PathEscape(vhost)+"/partial"),
					testCheckDefinitionsUnchanged(t, &before, vhost),
				),
			},
			{
				PreConfig:    counter.reset,
				RefreshState: true,
				Check:        testCheckRequests(t, counter, "the data source in one vhost", 3),
			},
		},
	})
}

// testCheckDefinitionsUnchanged is testDefinitionsUnchanged as a legacy check.
func testCheckDefinitionsUnchanged(t *testing.T, before *[]string, vhosts ...string) resource.TestCheckFunc {
	return func(*terraform.State) error { return testDefinitionsUnchanged(t, before, vhosts...)() }
}

// TestAccDelayQueueSets_vhostUserCannotRead looks as users that the broker
// refuses a vhost: with vhost set to it, or to one that does not exist, the
// read fails naming it; a monitoring user, which sees every vhost of the
// broker but may read only those it has permissions in, finds the sets of
// its own vhost and reports the other as unreadable.
func TestAccDelayQueueSets_vhostUserCannotRead(t *testing.T) {
	client := testBrokerClient(t)
	readable, refused := testVhost(t), testVhost(t)
	testDeclareSet(t, client, topology.Spec{Name: "mine", VHost: readable, Levels: 2})
	testDeclareSet(t, client, topology.Spec{Name: "theirs", VHost: refused, Levels: 2})
	const password = "cannot-read"
	all := rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"}
	manager := testBrokerUser(t, password, "management", readable, all)
	monitor := testBrokerUser(t, password, "monitoring", readable, all)
	dataSource := func(user, vhost string) string {
		body := ""
		if vhost != "" {
			body = fmt.Sprintf("  vhost = %q\n", vhost)
		}
		return testProviderAs(user, password) + "data \"rabbitmq_delay_queue_sets\" \"here\" {\n" + body + "}\n"
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      dataSource(manager, refused),
				ExpectError: regexp.MustCompile(`(?s)RabbitMQ Refused to List the Vhost.*"` + refused + `"`),
			},
			{
				Config:      dataSource(manager, refused+"-missing"),
				ExpectError: regexp.MustCompile(`(?s)Vhost Not Found.*` + refused + `-missing`),
			},
			{
				Config: dataSource(manager, ""),
				Check:  testCheckFound("data.rabbitmq_delay_queue_sets.here", []string{readable + "/mine"}, nil),
			},
			{
				Config: dataSource(monitor, ""),
				Check:  testCheckFoundAmong("data.rabbitmq_delay_queue_sets.here", readable+"/mine", refused),
			},
		},
	})
}

// testCheckFoundAmong checks a data source that looked in every vhost of
// the shared broker, where other tests' vhosts come and go: the only set
// found is set, and vhost is among the unreadable, refused.
func testCheckFoundAmong(address, set, vhost string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		attributes := s.RootModule().Resources[address].Primary.Attributes
		if attributes["sets.#"] != "1" || attributes["sets.0.import_id"] != set {
			return fmt.Errorf("found %s sets, the first %q; want only %q", attributes["sets.#"], attributes["sets.0.import_id"], set)
		}
		for i := 0; attributes[fmt.Sprintf("unreadable.%d.vhost", i)] != ""; i++ {
			prefix := fmt.Sprintf("unreadable.%d.", i)
			if attributes[prefix+"vhost"] == vhost {
				if reason := attributes[prefix+"reason"]; !strings.Contains(reason, "the broker refuses the user this vhost") {
					return fmt.Errorf("vhost %s is unreadable for the reason %q", vhost, reason)
				}
				return nil
			}
		}
		return fmt.Errorf("vhost %s is not among the unreadable: %v", vhost, attributes)
	}
}
