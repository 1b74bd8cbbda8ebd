package main

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	docs := fstest.MapFS{
		"index.md": {Data: []byte("See the [guide](guides/publishing) and [its part](guides/publishing.md#go),\n" +
			"the [README](../README.md), the [figures](../../README.md#performance \"title\"),\n" +
			"the [repository](https://github.com/delayqueue/terraform-provider-rabbitmq/blob/main/README.md), [below](#below),\n" +
			"a [missing page](guides/missing) and the [root](/docs/index.md).\n\n" +
			"[benchmarks]: ../benchmarks/faults.md\n" +
			"[registry]: <https://registry.terraform.io>\n")},
		"guides/publishing.md":         {Data: []byte("Back to the [resource](../resources/delay_queue_set#import) and the [index](../index.md).\n")},
		"resources/delay_queue_set.md": {Data: []byte("No links.\n")},
	}
	got, err := check(docs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"index.md: ../README.md leads outside the docs directory",
		"index.md: ../../README.md#performance leads outside the docs directory",
		"index.md: guides/missing leads to no page of the docs directory",
		"index.md: /docs/index.md is relative to the site's root, which differs between GitHub and the Registry",
		"index.md: ../benchmarks/faults.md leads outside the docs directory",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check (-want +got):\n%s", diff)
	}
}
