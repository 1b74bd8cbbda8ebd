package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestGenerationAttributes holds the schema and the docs to
// generationAttributes: exactly the attributes whose description says that
// a change declares a new generation are in it, and every list of them in
// README.md, templates/ and docs/ is the whole list, in its order.
func TestGenerationAttributes(t *testing.T) {
	t.Parallel()

	t.Run("schema", func(t *testing.T) {
		t.Parallel()
		var described []string
		for name, attribute := range sharedAttributes {
			if strings.Contains(attribute.onResource, newGeneration) {
				described = append(described, name)
			}
		}
		slices.Sort(described)
		listed := slices.Sorted(slices.Values(generationAttributes))
		if !slices.Equal(described, listed) {
			t.Errorf("attributes whose change the schema says declares a new generation: %v; generationAttributes: %v",
				described, listed)
		}
	})

	want := generationAttributeList(generationAttributes)
	for path, mustList := range generationAttributeDocs(t) {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lists := generationAttributeLists(string(text))
			for _, list := range lists {
				if list != want {
					t.Errorf("lists the attributes that declare a new generation as\n\t%s\nnot\n\t%s", list, want)
				}
			}
			if mustList && len(lists) == 0 {
				t.Errorf("does not list the attributes that declare a new generation:\n\t%s", want)
			}
		})
	}
}

// generationAttributeDocs are the files TestGenerationAttributes reads, from
// the repository's root: README.md and every template and page of docs/,
// each with whether it must list the attributes (the README, the index and
// the resource's page, and the pages rendered from them).
func generationAttributeDocs(t *testing.T) map[string]bool {
	t.Helper()
	root := filepath.Join("..", "..")
	must := map[string]bool{
		"README.md": true, "templates/index.md.tmpl": true, "templates/resources/delay_queue_set.md.tmpl": true,
		"docs/index.md": true, "docs/resources/delay_queue_set.md": true,
	}
	files := map[string]bool{filepath.Join(root, "README.md"): true}
	for _, dir := range []string{"templates", "docs"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, entry os.DirEntry, err error) error {
			if err == nil && !entry.IsDir() && (strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".tmpl")) {
				rel, _ := filepath.Rel(root, path)
				files[path] = must[filepath.ToSlash(rel)]
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < len(must) {
		t.Fatalf("found %d files under %s, fewer than the %d that must list the attributes", len(files), root, len(must))
	}
	return files
}

// attributeList is a list of attribute names in backticks, written over
// lines or not: "`a`, `b` or `c`".
var attributeList = regexp.MustCompile("`[a-z_]+`(?:,\\s+`[a-z_]+`)*,?\\s+or\\s+`[a-z_]+`")

// generationAttributeLists are the lists in text that name a generation's
// attributes: those that name two of them or more, with their whitespace
// made single spaces. A list of other attributes, or one that names one or
// two of them (`resolution` or `radix`, the key format's), is not one.
func generationAttributeLists(text string) []string {
	var lists []string
	for _, match := range attributeList.FindAllString(text, -1) {
		match = strings.Join(strings.Fields(match), " ")
		named := 0
		for _, name := range generationAttributes {
			if strings.Contains(match, "`"+name+"`") {
				named++
			}
		}
		if named >= 3 {
			lists = append(lists, match)
		}
	}
	return lists
}

func TestGenerationAttributeLists(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		text string
		want []string
	}{
		"whole": {
			text: "a change of `queue_type`, `dead_letter_strategy`, `resolution`, `radix`,\n  `queue_leader_locator` or `quorum_initial_group_size` declares",
			want: []string{generationAttributeList(generationAttributes)},
		},
		"short": {
			text: "A change of `queue_type`, `dead_letter_strategy`, `resolution` or `radix` keeps",
			want: []string{"`queue_type`, `dead_letter_strategy`, `resolution` or `radix`"},
		},
		"other attributes": {text: "set `levels` or `max_delay`", want: nil},
		"one of them":      {text: "set `max_delay` or `resolution`", want: nil},
		"the key format's": {text: "A new `resolution` or `radix` changes the key format", want: nil},
		"and, not or":      {text: "infers `resolution`, `radix`, `queue_type`, `dead_letter_strategy` and the routes", want: nil},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := generationAttributeLists(test.text); !slices.Equal(got, test.want) {
				t.Errorf("got %q, want %q", got, test.want)
			}
		})
	}
}
