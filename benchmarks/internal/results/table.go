package results

import (
	"fmt"
	"strings"
)

// Table writes a Markdown table whose columns are padded, so that it reads
// in a terminal too; align has an 'l' or 'r' per column.
func Table(b *strings.Builder, rows [][]string, align string) { table(b, rows, align, true) }

// PlainTable writes a Markdown table without padding: |---|--:|.
func PlainTable(b *strings.Builder, rows [][]string, align string) { table(b, rows, align, false) }

// Cells are values written as fmt.Sprint writes them, a table row.
func Cells(values ...any) []string {
	cells := make([]string, len(values))
	for i, v := range values {
		cells[i] = fmt.Sprint(v)
	}
	return cells
}

func table(b *strings.Builder, rows [][]string, align string, padded bool) {
	widths := make([]int, len(rows[0]))
	for i := range widths {
		widths[i] = 3
		for _, row := range rows {
			if padded {
				widths[i] = max(widths[i], len([]rune(row[i])))
			}
		}
	}
	line := func(cells []string) {
		b.WriteString("|")
		for i, cell := range cells {
			pad := ""
			if padded {
				pad = strings.Repeat(" ", widths[i]-len([]rune(cell)))
			}
			if align[i] == 'r' {
				fmt.Fprintf(b, " %s%s |", pad, cell)
			} else {
				fmt.Fprintf(b, " %s%s |", cell, pad)
			}
		}
		b.WriteString("\n")
	}
	line(rows[0])
	separators := make([]string, len(widths))
	for i, w := range widths {
		separators[i] = strings.Repeat("-", w)
		if align[i] == 'r' {
			separators[i] = strings.Repeat("-", w-1) + ":"
		}
	}
	if padded {
		line(separators)
	} else {
		b.WriteString("|" + strings.Join(separators, "|") + "|\n")
	}
	for _, row := range rows[1:] {
		line(row)
	}
}
