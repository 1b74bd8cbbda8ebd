package provider

import (
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repoFile reads a file of the repository by its path from the root.
func repoFile(t *testing.T, path string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// TestDocsImportID holds the import docs to parseImportID: the examples'
// IDs name the set they import, each "`<id>`: the vhost `<vhost>`" on the
// resource's page reads so, and no page says the vhost follows the last "@".
func TestDocsImportID(t *testing.T) {
	t.Parallel()
	quotedID := regexp.MustCompile(`'([^'\s]+[@/][^'\s]+)'|"([^"\s]+[@/][^"\s]+)"`)
	for path, imported := range map[string]string{
		"examples/resources/rabbitmq_delay_queue_set/import.sh":               "reminders",
		"examples/resources/rabbitmq_delay_queue_set/import-by-string-id.tf":  "reminders",
		"examples/resources/rabbitmq_delayed_exchange/import.sh":              "retries",
		"examples/resources/rabbitmq_delayed_exchange/import-by-string-id.tf": "retries",
	} {
		var ids []string
		for _, match := range quotedID.FindAllStringSubmatch(repoFile(t, path), -1) {
			ids = append(ids, match[1]+match[2])
		}
		if len(ids) < 2 {
			t.Errorf("%s: found the import IDs %q, not one of each form", path, ids)
		}
		for _, id := range ids {
			if vhost, name, _, err := parseImportID(id); err != nil || vhost != "/" || name != imported {
				t.Errorf("%s: the import ID %q reads as %q in the vhost %q (%v), not %s in /", path, id, name, vhost, err, imported)
			}
		}
	}
	example := regexp.MustCompile("`([^`@ ]+@[^` ]+)`: the vhost `([^`]+)`")
	for _, path := range []string{"templates/resources/delay_queue_set.md.tmpl", "docs/resources/delay_queue_set.md"} {
		text := repoFile(t, path)
		matches := example.FindAllStringSubmatch(text, -1)
		if len(matches) == 0 {
			t.Errorf("%s: no example of an ID whose vhost holds \"@\"", path)
		}
		for _, match := range matches {
			if vhost, _, _, err := parseImportID(match[1]); err != nil || vhost != match[2] {
				t.Errorf("%s: the ID %q has the vhost %q (%v), not %q as the page says", path, match[1], vhost, err, match[2])
			}
		}
	}
	lastAt := regexp.MustCompile("last [`\"]@[`\"]")
	for path, text := range docsTexts(t) {
		if lastAt.MatchString(text) {
			t.Errorf("%s says the vhost follows the last \"@\"; parseImportID takes the first", path)
		}
	}
}

// docsTexts are README.md and every page and template of docs/, templates/
// and examples/, by path from the repository's root.
func docsTexts(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..")
	texts := map[string]string{"README.md": repoFile(t, "README.md")}
	for _, dir := range []string{"docs", "templates", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, entry os.DirEntry, err error) error {
			if err != nil || entry.IsDir() || !slices.Contains([]string{".md", ".tmpl", ".tf", ".sh"}, filepath.Ext(path)) {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			texts[filepath.ToSlash(rel)] = repoFile(t, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return texts
}

// TestReadmeDemo holds the README's description of `make demo` to
// examples/demo: each set it names with its digits, and the report lines it
// quotes, which are the radix-16 set's, the report the demo prints last.
func TestReadmeDemo(t *testing.T) {
	t.Parallel()
	readme := repoFile(t, "README.md")
	block := regexp.MustCompile(`(?m)^resource "rabbitmq_delay_queue_set" "[^"]+" \{\n((?:.*\n)*?)\}`)
	attribute := func(body, name string) string {
		match := regexp.MustCompile(`(?m)^\s*` + name + `\s*=\s*"?([^"\n]+)"?$`).FindStringSubmatch(body)
		if match == nil {
			return ""
		}
		return match[1]
	}
	sets := block.FindAllStringSubmatch(repoFile(t, "examples/demo/main.tf"), -1)
	if len(sets) != 2 {
		t.Fatalf("examples/demo/main.tf declares %d sets; the README describes two", len(sets))
	}
	for _, set := range sets {
		name, levels, radix := attribute(set[1], "name"), attribute(set[1], "levels"), attribute(set[1], "radix")
		want := "`" + name + "` (" + levels + " binary digits of " + attribute(set[1], "resolution") + ")"
		if radix != "" {
			want = "`" + name + "` (" + levels + " digits of radix " + radix + ")"
		}
		if !strings.Contains(strings.Join(strings.Fields(readme), " "), want) {
			t.Errorf("README.md does not describe the demo's set as %s", want)
		}
	}
	report := repoFile(t, "benchmarks/demo-radix16.md")
	lines := regexp.MustCompile(`(?m)^  m\d\d .*$`).FindAllString(readme, -1)
	if len(lines) == 0 {
		t.Error("README.md quotes no line of the demo's report")
	}
	for _, line := range lines {
		if !strings.Contains(report, line+"\n") {
			t.Errorf("README.md quotes %q, which is not a line of the radix-16 report, benchmarks/demo-radix16.md", line)
		}
	}
	for _, need := range []string{"sudo", "400 MB", "chroot"} {
		if !strings.Contains(readme, need) {
			t.Errorf("README.md does not say that the demo needs %s", need)
		}
	}
}

// numberWords spell the counts the README writes in words.
var numberWords = map[string]int{"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}

// TestReadmeInventory holds the README's counts and lists to the
// repository: the scenarios, the data sources, and a link to every guide,
// which docs/index.md lists too.
func TestReadmeInventory(t *testing.T) {
	t.Parallel()
	readme := strings.Join(strings.Fields(repoFile(t, "README.md")), " ")
	count := func(dir string) int {
		entries, err := os.ReadDir(filepath.Join("..", "..", dir))
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	for noun, dir := range map[string]string{"scenarios": "examples/scenarios", "data sources": "docs/data-sources"} {
		match := regexp.MustCompile(`\b([a-z]+) ` + noun + `\b`).FindStringSubmatch(readme)
		if match == nil || numberWords[match[1]] != count(dir) {
			t.Errorf("README.md counts the %s as %q; %s holds %d", noun, match, dir, count(dir))
		}
	}
	guides, err := filepath.Glob(filepath.Join("..", "..", "docs", "guides", "*.md"))
	if err != nil || len(guides) == 0 {
		t.Fatalf("no guides under docs/guides (%v)", err)
	}
	index := repoFile(t, "docs/index.md")
	for _, guide := range guides {
		page := strings.TrimSuffix(filepath.Base(guide), ".md")
		if !strings.Contains(readme, "(docs/guides/"+page+".md)") {
			t.Errorf("README.md does not link the guide %s", page)
		}
		if !strings.Contains(index, "(guides/"+page+")") {
			t.Errorf("docs/index.md does not link the guide %s", page)
		}
	}
}

// communitySettings are the settings of the community RabbitMQ provider
// (cyrilgdn/rabbitmq) that this provider shares, with their environment
// variables.
var communitySettings = []string{"endpoint", "username", "password", "insecure", "cacert_file", "clientcert_file", "clientkey_file", "proxy"}

// TestProviderDescriptionSettings holds the provider's description, which
// docs/index.md shows first, to its schema: it names the community
// provider's settings as such and this provider's own as its own.
func TestProviderDescriptionSettings(t *testing.T) {
	t.Parallel()
	schema := providerSchema()
	var own []string
	for name := range schema.Attributes {
		if !slices.Contains(communitySettings, name) {
			own = append(own, name)
		}
	}
	slices.Sort(own)
	description := schema.MarkdownDescription
	list := regexp.MustCompile("((?:`[a-z_]+`,? )+and `[a-z_]+`)")
	lists := list.FindAllString(description, -1)
	names := func(text string) []string {
		var found []string
		for _, match := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(text, -1) {
			found = append(found, match[1])
		}
		return found
	}
	if len(lists) != 2 {
		t.Fatalf("the provider's description has %d lists of settings, not the community's and its own: %q", len(lists), lists)
	}
	if got := names(lists[0]); !slices.Equal(got, communitySettings) {
		t.Errorf("the description names %v as the community provider's settings, not %v", got, communitySettings)
	}
	if got := slices.Sorted(slices.Values(names(lists[1]))); !slices.Equal(got, own) {
		t.Errorf("the description names %v as this provider's own settings; the schema's others are %v", got, own)
	}
	if !strings.Contains(description[strings.Index(description, lists[1]):], "this provider's own") {
		t.Error("the description does not call its second list of settings this provider's own")
	}
	for _, name := range slices.Sorted(maps.Keys(schema.Attributes)) {
		if !strings.Contains(description, "`"+name+"`") {
			t.Errorf("the description does not name the setting %s", name)
		}
	}
}

// TestVersionFloors holds the Terraform floor that the README, the index
// and the module state to the oldest Terraform CI runs, the GNUmakefile's
// TERRAFORM_OLDEST_VERSION; no example asks for less (a scenario may need
// more: for_each in import blocks came with 1.7).
func TestVersionFloors(t *testing.T) {
	t.Parallel()
	match := regexp.MustCompile(`(?m)^TERRAFORM_OLDEST_VERSION \?= v(\S+)$`).FindStringSubmatch(repoFile(t, "GNUmakefile"))
	if match == nil {
		t.Fatal("GNUmakefile sets no TERRAFORM_OLDEST_VERSION")
	}
	oldest := match[1]
	claims := map[string]string{
		"README.md":     "| Terraform | " + oldest + " and later",
		"docs/index.md": "Terraform " + oldest + " and later",
		"examples/modules/delay-with-retries/versions.tf": `required_version = ">= ` + oldest + `"`,
	}
	for path, claim := range claims {
		if !strings.Contains(repoFile(t, path), claim) {
			t.Errorf("%s does not say %q: the oldest Terraform CI runs is %s", path, claim, oldest)
		}
	}
	for path, text := range docsTexts(t) {
		for _, floor := range regexp.MustCompile(`required_version\s*=\s*">=\s*([0-9.]+)"`).FindAllStringSubmatch(text, -1) {
			if versionBelow(floor[1], oldest) {
				t.Errorf("%s requires Terraform >= %s; the provider is tested from %s", path, floor[1], oldest)
			}
		}
	}
}

// TestReadmeMeasuredChanges holds the README's list of the changes measured
// under load to the changes benchmarks/migration.md measured.
func TestReadmeMeasuredChanges(t *testing.T) {
	t.Parallel()
	var measured []string
	for _, match := range regexp.MustCompile("(?m)^\\| [^|]+ \\| `([a-z_]+) = ").FindAllStringSubmatch(repoFile(t, "benchmarks/migration.md"), -1) {
		if !slices.Contains(measured, match[1]) {
			measured = append(measured, match[1])
		}
	}
	if len(measured) == 0 {
		t.Fatal("benchmarks/migration.md measures no change")
	}
	readme := strings.Join(strings.Fields(repoFile(t, "README.md")), " ")
	match := regexp.MustCompile("Changes of ((?:`[a-z_]+`,? )+and `[a-z_]+`) were \\[measured under load\\]").FindStringSubmatch(readme)
	if match == nil {
		t.Fatal("README.md does not say which changes were measured under load")
	}
	var listed []string
	for _, name := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(match[1], -1) {
		listed = append(listed, name[1])
	}
	if !slices.Equal(listed, measured) {
		t.Errorf("README.md says %v were measured under load; benchmarks/migration.md measures %v", listed, measured)
	}
}

// versionBelow reports whether the dotted version a is below b: 1.3 < 1.5.7.
func versionBelow(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// The most words the Registry's pages may have, as wc -w counts them: each
// resource's page, and docs/ in all (grown by 1,500 for the second resource).
const (
	resourcePageWords = 1500
	docsWords         = 13500
)

// TestDocsLength holds docs/ to the length of the Registry's pages it is
// modelled on.
func TestDocsLength(t *testing.T) {
	t.Parallel()
	total := 0
	for path, text := range docsTexts(t) {
		if !strings.HasPrefix(path, "docs/") {
			continue
		}
		words := len(strings.Fields(text))
		total += words
		if strings.HasPrefix(path, "docs/resources/") && words > resourcePageWords {
			t.Errorf("%s has %d words, more than %d", path, words, resourcePageWords)
		}
	}
	if total > docsWords {
		t.Errorf("docs/ has %d words, more than %d", total, docsWords)
	}
}

// maintainersWords are what users' pages leave to DESIGN.md and
// benchmarks/: test names, commit hashes, source lines, make targets, and
// notes about the machines the project runs on.
var maintainersWords = map[string]*regexp.Regexp{
	"a test name":            regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9_]*`),
	"a commit hash":          regexp.MustCompile(`\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b|\b[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b`),
	"a source line":          regexp.MustCompile(`\.(?:erl|go):[0-9]|\bline [0-9]+`),
	"a make target":          regexp.MustCompile("`make [a-z]|\\bmake (?:check|test|testacc|demo|examples|bench|docs|generate|publishers|lint)\\b"),
	"the project's machines": regexp.MustCompile(`(?i)this machine|development machine|shared 2-core|\.ci/run|DESIGN\.md|not run here|measured here`),
}

// TestDocsSpeakToUsers holds every page of docs/ and its template to what a
// user reads: none names a test, a commit, a source line, a make target or
// the project's machines.
func TestDocsSpeakToUsers(t *testing.T) {
	t.Parallel()
	for path, text := range docsTexts(t) {
		if !strings.HasPrefix(path, "docs/") && !strings.HasPrefix(path, "templates/") {
			continue
		}
		for what, pattern := range maintainersWords {
			for _, found := range pattern.FindAllString(text, -1) {
				if what == "a commit hash" && len(found) < 7 {
					continue // a short hex word ("1e3", "add") is no hash
				}
				t.Errorf("%s names %s, %q: that is for DESIGN.md or benchmarks/README.md", path, what, found)
			}
		}
	}
}

// TestExamplesImportPublicPackages holds the examples' Go programs, which
// users copy, to packages a user can import: none under internal/.
func TestExamplesImportPublicPackages(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	programs := 0
	err := filepath.WalkDir(filepath.Join(root, "examples"), func(path string, entry os.DirEntry, err error) error {
		if err != nil || entry.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		programs++
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range file.Imports {
			if strings.Contains(spec.Path.Value, "/internal/") {
				t.Errorf("%s imports %s, which no user can import", path, spec.Path.Value)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if programs == 0 {
		t.Fatal("found no Go program under examples/")
	}
}

// TestMakefileNamesTestsThatExist holds the test names the GNUmakefile's
// comments and targets give to the tests of the repository.
func TestMakefileNamesTestsThatExist(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	defined := map[string]bool{}
	funcTest := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`)
	err := filepath.WalkDir(root, func(path string, entry os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if entry.IsDir() && (entry.Name() == ".git" || entry.Name() == "node_modules" || entry.Name() == ".tools") {
			return filepath.SkipDir
		}
		if entry.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		text, err := os.ReadFile(path)
		for _, match := range funcTest.FindAllStringSubmatch(string(text), -1) {
			defined[match[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9_]*`).FindAllString(repoFile(t, "GNUmakefile"), -1) {
		if !defined[name] {
			t.Errorf("the GNUmakefile names %s, which no test of the repository defines", name)
		}
	}
}
