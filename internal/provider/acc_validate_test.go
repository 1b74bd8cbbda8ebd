package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// TestDelayQueueSet_invalidConfigs checks that bad input fails at plan time,
// with no broker, in one diagnostic whose message starts with the attribute's
// path and says what the attribute allows. Each want is a literal phrase of
// that message; Terraform may wrap it at any space.
func TestDelayQueueSet_invalidConfigs(t *testing.T) {
	// No endpoint anywhere: a plan that reached the broker would fail for another reason.
	t.Setenv("RABBITMQ_ENDPOINT", "")
	const name = "valid-name"
	route := func(lines ...string) string {
		return "\n  route {\n    " + strings.Join(lines, "\n    ") + "\n  }"
	}
	tests := map[string]struct {
		name       string // the set's name; "valid-name" when empty
		attributes string
		want       []string
	}{
		// levels and max_delay
		"no levels nor max_delay": {attributes: ``,
			want: []string{`levels: set exactly one of levels (1 to 32) and max_delay`}},
		"both levels and max_delay": {attributes: "levels = 3\n  max_delay = \"7s\"",
			want: []string{`max_delay: conflicts with levels: set exactly one of levels and max_delay`}},
		"zero levels": {attributes: `levels = 0`,
			want: []string{`levels: must be between 1 and 32, got 0`}},
		"negative levels": {attributes: `levels = -1`,
			want: []string{`levels: must be between 1 and 32, got -1`}},
		"33 levels": {attributes: `levels = 33`,
			want: []string{`levels: must be between 1 and 32, got 33`}},
		// 2^32 + 2 would be 2 as a 32-bit int (386 and arm builds).
		"huge levels": {attributes: `levels = 4294967298`,
			want: []string{`levels: must be at most 2147483647, got 4294967298`}},
		"hugely negative levels": {attributes: `levels = -4294967294`,
			want: []string{`levels: must be at least -2147483648, got -4294967294`}},
		"huge radix": {attributes: "levels = 3\n  radix = 4294967312",
			want: []string{`radix: must be at most 2147483647, got 4294967312`}},
		"top level TTL over 10 years": {attributes: "levels = 32\n  resolution = \"1s\"",
			want: []string{`levels: 32 levels at resolution 1s give the top level a TTL`, `at most 29 levels fit at this resolution`}},
		"max_delay needs more than 32 levels": {attributes: "max_delay = \"100000h\"\n  resolution = \"1ms\"",
			want: []string{`max_delay: 100000h0m0s needs more levels than fit at resolution 1ms (at most 32,`,
				`the largest max_delay at this resolution is 1193h2m47.295s`}},
		"max_delay is no duration": {attributes: `max_delay = "2 days"`,
			want: []string{`max_delay: "2 days" is not a duration; write it like "500ms", "30s", "15m" or "36h"`}},
		"empty max_delay": {attributes: `max_delay = ""`,
			want: []string{`max_delay: "" is not a duration; write it like "500ms"`}},
		"negative max_delay": {attributes: `max_delay = "-5s"`,
			want: []string{`max_delay: must be positive, got -5s`}},
		"zero max_delay": {attributes: `max_delay = "0s"`,
			want: []string{`max_delay: must be positive, got 0s`}},

		// quorum_initial_group_size
		"zero group size": {attributes: "levels = 3\n  quorum_initial_group_size = 0",
			want: []string{`quorum_initial_group_size: must be at least 1 (the nodes that hold a replica of each quorum queue), got 0`}},
		"negative group size": {attributes: "levels = 3\n  quorum_initial_group_size = -3",
			want: []string{`quorum_initial_group_size: must be at least 1 (the nodes that hold a replica of each quorum queue), got -3`}},
		"huge group size": {attributes: "levels = 3\n  quorum_initial_group_size = 4294967297",
			want: []string{`quorum_initial_group_size: must be at most 2147483647, got 4294967297`}},
		"group size of classic queues": {attributes: "levels = 3\n  queue_type = \"classic\"\n  quorum_initial_group_size = 2",
			want: []string{`quorum_initial_group_size: applies to quorum queues only: a classic queue lives on one node and has no replicas`}},
		"group size in a library's layout": {attributes: "layout = \"nservicebus\"\n  quorum_initial_group_size = 3",
			want: []string{`quorum_initial_group_size: must be unset in the nservicebus layout: NServiceBus declares its queues without x-quorum-initial-group-size`,
				`set the broker's quorum_queue.initial_cluster_size`}},

		// resolution
		"sub-millisecond resolution": {attributes: "levels = 3\n  resolution = \"500us\"",
			want: []string{`resolution: must be at least 1ms, got 500µs`}},
		"resolution of no whole milliseconds": {attributes: "levels = 3\n  resolution = \"1500us\"",
			want: []string{`resolution: must be a whole number of milliseconds (message TTLs are integer milliseconds), got 1.5ms`}},
		"negative resolution": {attributes: "levels = 3\n  resolution = \"-1s\"",
			want: []string{`resolution: must be at least 1ms, got -1s`}},
		"zero resolution": {attributes: "levels = 3\n  resolution = \"0s\"",
			want: []string{`resolution: must be at least 1ms, got 0s`}},
		"resolution over 10 years": {attributes: "levels = 1\n  resolution = \"87601h\"",
			want: []string{`resolution: must be at most the broker's largest message TTL, 315360000000ms (10 years), got 87601h0m0s`}},
		"resolution is no duration": {attributes: "levels = 3\n  resolution = \"fast\"",
			want: []string{`resolution: "fast" is not a duration; write it like "500ms"`}},

		// radix: the snippet Terraform shows is the attribute's line, so the
		// diagnostic's path is radix
		"radix 3": {attributes: "levels = 3\n  radix = 3",
			want: []string{`radix = 3`, `radix: must be one of 2, 4, 8, 16, 256, got 3`}},
		"radix 0": {attributes: "levels = 3\n  radix = 0",
			want: []string{`radix = 0`, `radix: must be one of 2, 4, 8, 16, 256, got 0`}},
		"negative radix": {attributes: "max_delay = \"1m\"\n  radix = -16",
			want: []string{`radix = -16`, `radix: must be one of 2, 4, 8, 16, 256, got -16`}},
		"top queue TTL over 10 years in radix 16": {attributes: "levels = 8\n  resolution = \"1s\"\n  radix = 16",
			want: []string{`levels: 8 levels of radix 16 at resolution 1s give the top queue a TTL of 1000ms·15·16^7`,
				`at most 7 levels fit at this resolution and radix`}},
		"max_delay needs more levels than fit in radix 16": {attributes: "max_delay = \"100000h\"\n  resolution = \"1s\"\n  radix = 16",
			want: []string{`max_delay: 100000h0m0s needs more levels than fit at resolution 1s`}},
		"route key too long for radix-16 digits": {attributes: "levels = 5\n  radix = 16" + route(`destination = "q"`, `key = "`+strings.Repeat("k", 241)+`"`),
			want: []string{`route[0].key: must be at most 240 bytes with 5 levels: the routing key adds 5 delay digits`}}, // 245 in radix 2

		// queue type and dead-letter strategy
		"unknown queue type": {attributes: "levels = 3\n  queue_type = \"stream\"",
			want: []string{`queue_type: must be one of "quorum", "classic", got "stream"`}},
		"unknown dead-letter strategy": {attributes: "levels = 3\n  dead_letter_strategy = \"exactly-once\"",
			want: []string{`dead_letter_strategy: must be one of "at-least-once", "at-most-once", got "exactly-once"`}},
		"at-least-once on classic": {attributes: "levels = 3\n  queue_type = \"classic\"\n  dead_letter_strategy = \"at-least-once\"",
			want: []string{`dead_letter_strategy: "at-least-once" needs queue_type "quorum": classic queues can only dead-letter at-most-once`}},

		// routes
		"route key with a '*' wildcard": {attributes: "levels = 3" + route(`destination = "q"`, `key = "orders.*"`),
			want: []string{`route[0].key: must not contain '#' or '*'`, `got "orders.*"`}},
		"route key with a '#' wildcard": {attributes: "levels = 3" + route(`destination = "q"`, `key = "a"`) + route(`destination = "q"`, `key = "#"`),
			want: []string{`route[1].key: must not contain '#' or '*'`, `got "#"`}},
		"route key too long for its delay digits": {attributes: "levels = 5" + route(`destination = "q"`, `key = "`+strings.Repeat("k", 246)+`"`),
			want: []string{`route[0].key: must be at most 245 bytes with 5 levels: the routing key adds 5 delay digits and must fit AMQP's 255 bytes; got 246`}},
		"route key with an empty word": {attributes: "levels = 3" + route(`destination = "q"`, `key = "a..b"`),
			want: []string{`route[0].key: must not start or end with '.' nor contain an empty word ("..")`}},
		"duplicate routes": {attributes: "levels = 3" + route(`destination = "q"`) + route(`destination = "q"`, `destination_type = "queue"`),
			want: []string{`route[1]: duplicates route[0]: same destination_type "queue", destination "q" and key ""`}},
		"unknown destination type": {attributes: "levels = 3" + route(`destination = "q"`, `destination_type = "topic"`),
			want: []string{`route[0].destination_type: must be one of "queue", "exchange", got "topic"`}},
		"empty route destination": {attributes: "levels = 3" + route(`destination = ""`),
			want: []string{`route[0].destination: must not be empty (a queue or exchange name up to 255 bytes without control characters)`}},
		"route destination over 255 bytes": {attributes: "levels = 3" + route(`destination = "`+strings.Repeat("d", 256)+`"`),
			want: []string{`route[0].destination: must be at most 255 bytes, got 256 (a queue or exchange name up to 255 bytes`}},
		"route back into the set": {attributes: "levels = 3" + route(`destination = "`+name+`.ingest"`, `destination_type = "exchange"`),
			want: []string{`route[0].destination: "valid-name.ingest" is one of the set's own objects`}},

		// layout: a library's layout fixes what it fixes, each refused with the planner's reason
		"unknown layout": {attributes: "levels = 3\n  layout = \"sidekiq\"",
			want: []string{`layout: must be one of "default", "nservicebus", "celery", got "sidekiq"`}},
		"levels in the nservicebus layout": {attributes: "layout = \"nservicebus\"\n  levels = 5",
			want: []string{`levels: is fixed at 28 in the nservicebus layout, one level per bit of a delay in seconds; leave it unset, got 5`}},
		"resolution in the celery layout": {attributes: "layout = \"celery\"\n  resolution = \"100ms\"",
			want: []string{`resolution: is fixed at 1s in the celery layout: Celery counts delays in whole seconds; leave it unset, got 100ms`}},
		"radix in the celery layout": {attributes: "layout = \"celery\"\n  radix = 4",
			want: []string{`radix: is fixed at 2 in the celery layout: Celery writes delays in binary; leave it unset, got 4`}},
		"classic queues in the nservicebus layout": {attributes: "layout = \"nservicebus\"\n  queue_type = \"classic\"",
			want: []string{`queue_type: must be "quorum" in the nservicebus layout: NServiceBus declares its delay queues so; got "classic"`}},
		"max_delay in the nservicebus layout": {attributes: "layout = \"nservicebus\"\n  max_delay = \"1h\"",
			want: []string{`max_delay: is fixed at`, `in the nservicebus layout; leave it unset, got 1h0m0s`}},

		// name and vhost
		"name with a slash": {name: "a/b", attributes: "levels = 3",
			want: []string{`name: has the character '/' at byte 1; only ASCII letters, digits, '.', '_', '-' and ':' are allowed`}},
		"name with a space": {name: "my set", attributes: "levels = 3",
			want: []string{`name: has the character ' ' at byte 2; only ASCII letters, digits, '.', '_', '-' and ':' are allowed`}},
		"name with a non-ASCII letter": {name: "délai", attributes: "levels = 3",
			want: []string{`name: has the character`, `at byte 1; only ASCII letters, digits, '.', '_', '-' and ':' are allowed`}},
		"empty name": {name: "-", attributes: "levels = 3",
			want: []string{`name: must not be empty; use ASCII letters, digits, '.', '_', '-' and ':'`}},
		"name reserved amq.": {name: "amq.delay", attributes: "levels = 3",
			want: []string{`name: must not start with "amq.": the broker reserves those names`}},
		"name over 241 bytes": {name: strings.Repeat("n", 242), attributes: "levels = 3",
			want: []string{`name: must be at most 241 bytes so that every object name (the longest is "<name>.level.00.done") fits AMQP's 255 bytes, got 242`}},
		"name ending in a dot": {name: "delay.", attributes: "levels = 3",
			want: []string{`name: must not start or end with '.' nor contain "..", got "delay."`}},
		"empty vhost": {attributes: "levels = 3\n  vhost = \"\"",
			want: []string{`vhost: must not be empty (any UTF-8 text up to 255 bytes without control characters)`}},
		"vhost over 255 bytes": {attributes: "levels = 3\n  vhost = \"" + strings.Repeat("v", 256) + "\"",
			want: []string{`vhost: must be at most 255 bytes, got 256 (any UTF-8 text up to 255 bytes without control characters)`}},
		"vhost with a control character": {attributes: "levels = 3\n  vhost = \"a\\tb\"",
			want: []string{`vhost: must not contain control characters, got "a\tb" (any UTF-8 text up to 255 bytes`}},
	}
	for caseName, tc := range tests {
		t.Run(caseName, func(t *testing.T) {
			t.Parallel()
			setName := tc.name
			switch setName {
			case "":
				setName = name
			case "-":
				setName = ""
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      testSetConfig(setName, "  "+tc.attributes),
					PlanOnly:    true,
					ExpectError: testPlanError(tc.want...),
				}},
			})
		})
	}
}

// testPlanError matches a failed `terraform plan` whose diagnostic holds the
// phrases in order. Terraform wraps long lines at spaces, so any space of a
// phrase matches any run of white space.
func testPlanError(phrases ...string) *regexp.Regexp {
	parts := make([]string, len(phrases))
	for i, phrase := range phrases {
		parts[i] = testPhrase(phrase)
	}
	return regexp.MustCompile(`(?s)Error running non-refresh plan.*Error: Invalid (Delay Queue Set|Duration).*` + strings.Join(parts, ".*"))
}

// testPhrase is a regular expression that matches phrase literally, except
// that each space matches any run of white space: Terraform wraps long lines.
func testPhrase(phrase string) string {
	words := strings.Split(phrase, " ")
	for i, word := range words {
		words[i] = regexp.QuoteMeta(word)
	}
	return strings.Join(words, `\s+`)
}

// TestAccDelayQueueSet_unknownVhost checks the one piece of bad input only the
// broker can judge: the plan succeeds, and the apply fails before declaring
// anything, with a diagnostic that names the vhost and says what to do.
func TestAccDelayQueueSet_unknownVhost(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	vhost := name + "-no-such-vhost"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testSetConfig(name, "  levels = 2\n  vhost  = \""+vhost+"\""),
			ExpectError: regexp.MustCompile(`(?s)Error running apply.*Error: Vhost Not Found.*` +
				testPhrase(`Could not create the delay queue set "`+name+`": the vhost "`+vhost+`" does not exist on the broker. Create the vhost first, or correct the set's vhost.`)),
		}},
		CheckDestroy: func(*terraform.State) error {
			exists, err := client.VHostExists(context.Background(), vhost)
			if err != nil || exists {
				return fmt.Errorf("the vhost %q exists (%t, %v) after an apply that should have failed", vhost, exists, err)
			}
			return nil
		},
	})
}
