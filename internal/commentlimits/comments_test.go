package commentlimits

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	// maxDocLines is the length of a doc.go: what the package is for, its
	// invariants and its entry points.
	maxDocLines = 40
	// maxCommentBlock is the longest run of // lines elsewhere: a comment
	// says why in a sentence or two.
	maxCommentBlock = 12
)

// checkedDirs are checked with everything below them, relative to the
// repository's root.
var checkedDirs = []string{
	"internal/broker",
	"internal/commentlimits",
	"internal/delayset",
	"internal/delaykeycheck",
	"internal/faults",
	"internal/machine",
	"internal/messaging",
	"internal/provider",
	"internal/topology",
	"benchmarks",
}

func TestCommentLimits(t *testing.T) {
	t.Parallel()
	for _, dir := range checkedDirs {
		problems, err := commentProblems(filepath.Join("..", "..", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
}

// commentProblems lists every Go file under root that passes a limit.
func commentProblems(root string) ([]string, error) {
	var problems []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		lines, err := readLines(path)
		if err != nil {
			return err
		}
		if d.Name() == "doc.go" {
			if len(lines) > maxDocLines {
				problems = append(problems, fmt.Sprintf("%s: %d lines, more than %d", path, len(lines), maxDocLines))
			}
			return nil
		}
		for _, b := range longBlocks(lines) {
			problems = append(problems, fmt.Sprintf("%s:%d: a comment of %d lines, more than %d", path, b.start, b.length, maxCommentBlock))
		}
		return nil
	})
	return problems, err
}

type block struct{ start, length int }

// longBlocks are the runs of consecutive // lines over maxCommentBlock,
// their first line counted from 1.
func longBlocks(lines []string) []block {
	var long []block
	run := 0
	for i := 0; i <= len(lines); i++ {
		if i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "//") {
			run++
			continue
		}
		if run > maxCommentBlock {
			long = append(long, block{start: i - run + 1, length: run})
		}
		run = 0
	}
	return long
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for scanner.Scan() {
		lines = append(lines, scanner.Text())
	}
	return lines, scanner.Err()
}

func TestLongBlocks(t *testing.T) {
	t.Parallel()
	comment := func(n int) []string {
		lines := make([]string, n)
		for i := range lines {
			lines[i] = "\t// why"
		}
		return lines
	}
	tests := map[string]struct {
		lines []string
		want  []block
	}{
		"at the limit":        {lines: comment(maxCommentBlock)},
		"one over":            {lines: comment(maxCommentBlock + 1), want: []block{{1, maxCommentBlock + 1}}},
		"split by code":       {lines: append(append(comment(8), "x := 1"), comment(8)...)},
		"after code, at end":  {lines: append([]string{"x := 1"}, comment(13)...), want: []block{{2, 13}}},
		"a blank line breaks": {lines: append(append(comment(7), ""), comment(7)...)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := longBlocks(tc.lines)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("longBlocks = %v, want %v", got, tc.want)
			}
		})
	}
}
