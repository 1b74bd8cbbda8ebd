package main

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// pinned is a link into the repository at the release tag of testRepo.
const pinned = repositoryURL + "blob/v0.1.0/"

// testRepo is a repository of a few pages, each of whose links is a case:
// "ok" in a link's text says it leads somewhere, anything else that it does
// not, and TestCheck wants exactly those reported.
func testRepo() fstest.MapFS {
	page := func(lines ...string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(strings.Join(lines, "\n") + "\n")}
	}
	return fstest.MapFS{
		"CHANGELOG.md": page("# Changelog", "", "## 0.1.0 (Unreleased)", "", "## 0.0.9"),
		"DESIGN.md":    page("# Design", "## The layout (N levels, resolution R)"),
		"docs/index.md": page(
			"# rabbitmq Provider",
			"See the [ok guide](guides/publishing) and [ok: its part](guides/publishing.md#go),",
			"the [README](../README.md), the [figures](../../README.md#performance \"title\"),",
			"a [missing page](guides/missing), the [root](/docs/index.md), [ok](#rabbitmq-provider), [a missing heading](#nowhere),",
			"[ok: a heading of another page](guides/publishing#the-routing-key), [a missing one](guides/publishing#nowhere),",
			"[ok: a nested schema](resources/delay_queue_set#nestedblock--route), [ok: mail](mailto:a@example.com),",
			"[ok: the Registry](https://registry.terraform.io/providers/cyrilgdn/rabbitmq), [ok: an issue]("+repositoryURL+"issues/1),",
			"[ok: a results file]("+pinned+"benchmarks/delays.md), [ok: its section]("+pinned+"benchmarks/README.md#faults-make-test-faults),",
			"[ok: a directory]("+repositoryURL+"tree/v0.1.0/benchmarks/radix), [ok: the root]("+repositoryURL+"tree/v0.1.0),",
			"[on main]("+repositoryURL+"blob/main/benchmarks/delays.md), [an older release]("+repositoryURL+"blob/v0.0.9/README.md),",
			"[a missing file]("+pinned+"benchmarks/nothing.md), [a missing section]("+pinned+"benchmarks/README.md#performance-2),",
			"[a directory as blob]("+pinned+"benchmarks/radix), [a file as tree]("+repositoryURL+"tree/v0.1.0/README.md),",
			"[out of the repository]("+pinned+"../other/README.md).",
			"",
			"[benchmarks]: ../benchmarks/faults.md",
			"[ok: reference]: <https://registry.terraform.io>",
			"",
			"```go",
			"handlers[0](../../not/a/link.md)",
			"```",
			"   ```shell",
			"   curl [x](/not/a/link/either)",
			"   ```",
			"Code is no link: `[x](../nowhere.md)`.",
		),
		"docs/guides/publishing.md": page(
			"# Publishing", "## The routing key", "### Go",
			"Back to the [ok resource](../resources/delay_queue_set#import) and the [ok index](../index.md).",
		),
		"docs/resources/delay_queue_set.md": page("# delay_queue_set", "## Import", `<a id="nestedblock--route"></a>`),
		"README.md": page(
			"# terraform-provider-rabbitmq",
			"## Usage", "## Usage",
			"[ok](docs/index.md), [ok](docs/guides/publishing.md#go), [ok](benchmarks/), [ok](benchmarks/README.md#performance),",
			"[ok](benchmarks/README.md#faults-make-test-faults), [ok](#usage-1), [ok](DESIGN.md#the-layout-n-levels-resolution-r),",
			"[ok](LICENSE), [no such page](docs/index), [no such section](#usage-2), [out](../README.md),",
			"[a section of a file that is not Markdown](LICENSE#section), [the layout, no longer here](#the-layout).",
		),
		"LICENSE": page("Mozilla Public License Version 2.0"),
		"benchmarks/README.md": page(
			"# Benchmarks", "## Performance", "### Faults: `make test-faults`", "### Performance",
			"[ok](delays.md), [ok](radix/delays.md), [ok](../DESIGN.md), [ok](../docs/guides/publishing.md),",
			"[ok](./), [ok](#faults-make-test-faults), [ok](#performance-1),",
			"[a path from the root, as in README](benchmarks/delays.md), [an image from the root](benchmarks/delays.svg).",
		),
		"benchmarks/delays.md":       page("# Data path"),
		"benchmarks/radix/delays.md": page("# Data path, radix"),
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	got, err := check(testRepo(), "v0.1.0", []string{"docs", "README.md", "benchmarks/README.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"docs/index.md: ../README.md leads outside the docs directory, which the Registry serves alone; link to " + pinned + "… instead",
		"docs/index.md: ../../README.md#performance leads outside the docs directory, which the Registry serves alone; link to " + pinned + "… instead",
		"docs/index.md: guides/missing leads to no page of the docs directory",
		"docs/index.md: /docs/index.md is relative to the site's root, which differs between GitHub and the Registry",
		`docs/index.md: #nowhere: docs/index.md has no heading or anchor "nowhere"`,
		`docs/index.md: guides/publishing#nowhere: docs/guides/publishing.md has no heading or anchor "nowhere"`,
		`docs/index.md: ` + repositoryURL + `blob/main/benchmarks/delays.md is pinned to "main", not to the release tag "v0.1.0" (the first version of CHANGELOG.md)`,
		`docs/index.md: ` + repositoryURL + `blob/v0.0.9/README.md is pinned to "v0.0.9", not to the release tag "v0.1.0" (the first version of CHANGELOG.md)`,
		"docs/index.md: " + pinned + "benchmarks/nothing.md leads to benchmarks/nothing.md, which the repository does not hold",
		`docs/index.md: ` + pinned + `benchmarks/README.md#performance-2: benchmarks/README.md has no heading or anchor "performance-2"`,
		"docs/index.md: " + pinned + "benchmarks/radix names the directory benchmarks/radix: link to it with tree/, not blob/",
		"docs/index.md: " + repositoryURL + "tree/v0.1.0/README.md names the file README.md: link to it with blob/, not tree/",
		"docs/index.md: " + pinned + "../other/README.md leads outside the repository",
		"docs/index.md: ../benchmarks/faults.md leads outside the docs directory, which the Registry serves alone; link to " + pinned + "… instead",
		"README.md: docs/index leads to docs/index, which the repository does not hold",
		`README.md: #usage-2: README.md has no heading or anchor "usage-2"`,
		"README.md: ../README.md leads outside the repository",
		`README.md: #the-layout: README.md has no heading or anchor "the-layout"`,
		"benchmarks/README.md: benchmarks/delays.md leads to benchmarks/benchmarks/delays.md, which the repository does not hold",
		"benchmarks/README.md: benchmarks/delays.svg leads to benchmarks/benchmarks/delays.svg, which the repository does not hold",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check (-want +got):\n%s", diff)
	}
}

// TestCheckRepository: the release tag comes from the changelog, so a new
// version heading makes every link pinned to the last release a problem.
func TestCheckRepository(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		changelog string
		want      []string
	}{
		"the release": {changelog: "## 0.1.0 (Unreleased)\n"},
		"a new version": {changelog: "## 0.2.0 (Unreleased)\n\n## 0.1.0\n", want: []string{
			`docs/index.md: ` + pinned + `benchmarks/delays.md is pinned to "v0.1.0", not to the release tag "v0.2.0" (the first version of CHANGELOG.md)`,
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			repo := fstest.MapFS{
				"CHANGELOG.md":         {Data: []byte(tc.changelog)},
				"benchmarks/delays.md": {Data: []byte("# Data path\n")},
				"docs/index.md":        {Data: []byte("The [figures](" + pinned + "benchmarks/delays.md).\n")},
			}
			got, err := checkRepository(repo, []string{"docs"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checkRepository (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := checkRepository(fstest.MapFS{"docs/index.md": {}}, []string{"docs"}); err == nil {
		t.Error("checkRepository without a changelog: no error")
	}
	if _, err := checkRepository(fstest.MapFS{"CHANGELOG.md": {}}, []string{"docs"}); err == nil {
		t.Error("checkRepository of a path the repository does not hold: no error")
	}
}

func TestReleaseTag(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		changelog, want string
	}{
		"unreleased":           {changelog: "## 0.1.0 (Unreleased)\n\nFEATURES:\n", want: "v0.1.0"},
		"the first of several": {changelog: "# Changelog\n\n## 1.2.3 (May 1, 2027)\n\n## 0.1.0\n", want: "v1.2.3"},
		"with a v":             {changelog: "## v2.0.0\n", want: "v2.0.0"},
		"a deeper heading":     {changelog: "### 0.1.0\n"},
		"two numbers":          {changelog: "## 0.1\n"},
		"none":                 {changelog: "# Changelog\n"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := releaseTag([]byte(tc.changelog))
			if tc.want == "" {
				if err == nil {
					t.Fatalf("releaseTag = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("releaseTag = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestSlugify(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"Performance":                                                    "performance",
		"Faults: `make test-faults`":                                     "faults-make-test-faults",
		"The layout (N = 4, resolution 1 s)":                             "the-layout-n--4-resolution-1-s",
		"A set on a 3-node cluster: `make bench-cluster`":                "a-set-on-a-3-node-cluster-make-bench-cluster",
		"RabbitMQ 4.3.6: the highest rate, and most messages in one hop": "rabbitmq-436-the-highest-rate-and-most-messages-in-one-hop",
		"Radix 16 against radix 2 — ÷ baseline":                          "radix-16-against-radix-2---baseline",
		"Nested Schema for `route`":                                      "nested-schema-for-route",
		"See [the guide](guides/x.md)":                                   "see-the-guide",
		"queue_leader_locator":                                           "queue_leader_locator",
	} {
		if got := slugify(text); got != want {
			t.Errorf("slugify(%q) = %q, want %q", text, got, want)
		}
	}
}
