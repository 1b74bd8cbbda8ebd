package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
)

// The checks of a text of lines: the exchanges, queues and bindings
// attributes (topology.Lines).

// knownLineCount checks that a text has n lines (none when empty, as lines
// reads it).
func knownLineCount(n int) knownvalue.Check {
	return knownvalue.StringFunc(func(text string) error {
		if got := len(lines(types.StringValue(text))); got != n {
			return fmt.Errorf("%d lines, want %d:\n%s", got, n, text)
		}
		return nil
	})
}

// knownLine checks line index (from 0) of a text with line.
func knownLine(index int, line knownvalue.Check) knownvalue.Check {
	return lineCheck{index: index, line: line}
}

type lineCheck struct {
	index int
	line  knownvalue.Check
}

func (c lineCheck) CheckValue(v any) error {
	text, ok := v.(string)
	if !ok {
		return fmt.Errorf("expected a text of lines, got %T", v)
	}
	lines := strings.Split(text, "\n")
	if c.index >= len(lines) {
		return fmt.Errorf("no line %d in a text of %d lines:\n%s", c.index, len(lines), text)
	}
	if err := c.line.CheckValue(lines[c.index]); err != nil {
		return fmt.Errorf("line %d: %w", c.index, err)
	}
	return nil
}

func (c lineCheck) String() string { return fmt.Sprintf("line %d: %s", c.index, c.line) }
