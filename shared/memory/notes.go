package memory

import (
	"errors"
	"log/slog"
	"strings"
)

// DefaultNotesMaxChars is the size limit of one notes text, in characters, when none is
// configured.
const DefaultNotesMaxChars = 20_000

// The edits of a notes text.
const (
	NotesOverwrite      = "overwrite"
	NotesAppend         = "append"
	NotesPrepend        = "prepend"
	NotesReplaceSection = "replace_section"
	NotesDeleteSection  = "delete_section"
)

// ErrSectionNotFound reports that no heading of a notes text matches the section named.
var ErrSectionNotFound = errors.New("section not found")

// NotesEdit is one change to an agent's Markdown notes about a user. Apply computes it; the
// store reads, applies and writes back in one transaction, so edits never lose one another.
//
// The rules, chosen so that an agent editing its notes never has a surprise:
//
//   - append and prepend join on a line break: when the existing text and the new text would
//     meet inside a line, a "\n" is put between them; no blank lines are added.
//   - A section is an ATX heading (`#` to `######`) and everything up to the next heading of
//     the same or a higher level (fewer `#`), so a section holds its subsections. Lines inside
//     fenced code blocks (``` or ~~~) are never headings; setext headings (underlined with
//     === or ---) are not recognised as sections.
//   - Section names either the whole heading line ("## Preferences", which must then match
//     the level too) or the heading's text ("Preferences", any level). Both are compared
//     exactly (case-sensitive) after trimming surrounding whitespace and a closing sequence of
//     `#`. When several headings match, the first one in the text is used.
//   - replace_section replaces the section's body, keeping its heading line, unless Content
//     starts with a heading of the same or a higher level, which then replaces the heading too
//     (a way to rename a section). Content starting with a deeper heading is body: it becomes
//     a subsection. Blank lines that separated the section from the next heading are kept.
//     Content is stored ending with a line break.
//   - replace_section of a section that does not exist appends it at the end of the text,
//     after a blank line: under Content's own heading when Content starts with one, else
//     under Section when it is a heading line, else under "## <Section>". Apply then reports
//     sectionCreated. An agent can thus keep "the Preferences section" up to date without
//     first checking whether it exists.
//   - delete_section of a section that does not exist is ErrSectionNotFound.
//   - Every byte outside the section edited stays as it was.
type NotesEdit struct {
	// Op is one of NotesOverwrite, NotesAppend, NotesPrepend, NotesReplaceSection and
	// NotesDeleteSection.
	Op      string
	Content string
	// Section names the section of NotesReplaceSection and NotesDeleteSection.
	Section string
}

// LogValue keeps notes content out of logs.
func (e NotesEdit) LogValue() slog.Value {
	return slog.GroupValue(slog.String("op", e.Op), slog.Int("content_len", len(e.Content)),
		slog.Int("section_len", len(e.Section)))
}

// Apply returns doc changed by e. sectionCreated reports that replace_section added a section
// that did not exist.
func (e NotesEdit) Apply(doc string) (out string, sectionCreated bool, err error) {
	switch e.Op {
	case NotesOverwrite:
		return e.Content, false, nil
	case NotesAppend:
		return AppendNotes(doc, e.Content), false, nil
	case NotesPrepend:
		return PrependNotes(doc, e.Content), false, nil
	case NotesReplaceSection:
		out, created := ReplaceSection(doc, e.Section, e.Content)
		return out, created, nil
	case NotesDeleteSection:
		out, err := DeleteSection(doc, e.Section)
		return out, false, err
	}
	return doc, false, errors.New("unknown notes edit " + e.Op)
}

// AppendNotes adds text at the end of doc, on a line of its own.
func AppendNotes(doc, text string) string {
	if doc != "" && text != "" && !strings.HasSuffix(doc, "\n") {
		return doc + "\n" + text
	}
	return doc + text
}

// PrependNotes adds text at the start of doc, doc starting on a line of its own.
func PrependNotes(doc, text string) string {
	if doc != "" && text != "" && !strings.HasSuffix(text, "\n") {
		return text + "\n" + doc
	}
	return text + doc
}

// Heading is an ATX heading of a Markdown text.
type Heading struct {
	// Level is the number of `#`, 1 to 6.
	Level int
	// Text is the heading's text without the `#` marks and surrounding whitespace.
	Text string
	// Start is the byte offset of the heading line; LineEnd that just after its line break
	// (or the end of the text).
	Start, LineEnd int
}

// Section is a heading and its body: doc[Start:End]. BodyEnd is End without the blank lines
// that separate the section from the next heading.
type Section struct {
	Heading
	End, BodyEnd int
}

// Headings lists the ATX headings of doc, outside fenced code blocks, in order.
func Headings(doc string) []Heading {
	var out []Heading
	var fence byte // the fence character of the open code block, 0 when none
	fenceLen := 0
	for start := 0; start < len(doc); {
		end := strings.IndexByte(doc[start:], '\n')
		if end < 0 {
			end = len(doc)
		} else {
			end += start + 1
		}
		line := strings.TrimRight(doc[start:end], "\r\n")
		if fence != 0 {
			if c, n, rest, ok := fenceMark(line); ok && c == fence && n >= fenceLen && strings.Trim(rest, " \t") == "" {
				fence = 0
			}
		} else if c, n, rest, ok := fenceMark(line); ok && !(c == '`' && strings.IndexByte(rest, '`') >= 0) {
			fence, fenceLen = c, n
		} else if level, text, ok := ParseHeading(line); ok {
			out = append(out, Heading{Level: level, Text: text, Start: start, LineEnd: end})
		}
		start = end
	}
	return out
}

// fenceMark recognises a code fence line: up to three spaces, then three or more backticks or
// tildes. rest is what follows the marks (the info string of an opening fence).
func fenceMark(line string) (c byte, n int, rest string, ok bool) {
	i := indent(line)
	if i > 3 || i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0, "", false
	}
	c = line[i]
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	if j-i < 3 {
		return 0, 0, "", false
	}
	return c, j - i, line[j:], true
}

func indent(line string) int {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	return i
}

// ParseHeading recognises one line as an ATX heading: up to three spaces, one to six `#`, then
// a space, a tab or the end of the line. text drops an optional closing sequence of `#`.
func ParseHeading(line string) (level int, text string, ok bool) {
	line = strings.TrimRight(line, "\r\n")
	i := indent(line)
	if i > 3 {
		return 0, "", false
	}
	j := i
	for j < len(line) && line[j] == '#' {
		j++
	}
	level = j - i
	if level < 1 || level > 6 || (j < len(line) && line[j] != ' ' && line[j] != '\t') {
		return 0, "", false
	}
	text = strings.Trim(line[j:], " \t")
	if closed := strings.TrimRight(text, "#"); closed != text {
		switch {
		case closed == "":
			text = ""
		case strings.HasSuffix(closed, " ") || strings.HasSuffix(closed, "\t"):
			text = strings.TrimRight(closed, " \t")
		}
	}
	return level, text, true
}

// FindSection finds the first section of doc that name designates: a heading line ("## Goals",
// level and text must match) or a heading's text ("Goals", any level).
func FindSection(doc, name string) (Section, bool) {
	name = strings.TrimSpace(name)
	wantLevel, wantText, byLine := ParseHeading(name)
	if !byLine {
		wantText = name
	}
	hs := Headings(doc)
	for i, h := range hs {
		if h.Text != wantText || (byLine && h.Level != wantLevel) {
			continue
		}
		sec := Section{Heading: h, End: len(doc)}
		for _, next := range hs[i+1:] {
			if next.Level <= h.Level {
				sec.End = next.Start
				break
			}
		}
		sec.BodyEnd = h.LineEnd
		for start := h.LineEnd; start < sec.End; {
			end := strings.IndexByte(doc[start:sec.End], '\n')
			if end < 0 {
				end = sec.End
			} else {
				end += start + 1
			}
			if strings.TrimSpace(doc[start:end]) != "" {
				sec.BodyEnd = end
			}
			start = end
		}
		return sec, true
	}
	return Section{}, false
}

// ReplaceSection replaces the section name designates with content, or appends it as a new
// section when there is none (created). See NotesEdit for the rules.
func ReplaceSection(doc, name, content string) (out string, created bool) {
	first, _, _ := strings.Cut(content, "\n")
	firstLevel, _, startsWithHeading := ParseHeading(first)
	sec, ok := FindSection(doc, name)
	if !ok {
		var b strings.Builder
		b.WriteString(doc)
		switch {
		case doc == "":
		case strings.HasSuffix(doc, "\n\n") || strings.HasSuffix(doc, "\n\r\n"):
		case strings.HasSuffix(doc, "\n"):
			b.WriteString("\n")
		default:
			b.WriteString("\n\n")
		}
		if !startsWithHeading {
			b.WriteString(headingLine(name))
			b.WriteString("\n")
		}
		b.WriteString(withLineBreak(content))
		return b.String(), true
	}
	var b strings.Builder
	b.WriteString(doc[:sec.Start])
	if !startsWithHeading || firstLevel > sec.Level {
		head := doc[sec.Start:sec.LineEnd]
		b.WriteString(head)
		if !strings.HasSuffix(head, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString(withLineBreak(content))
	b.WriteString(doc[sec.BodyEnd:])
	return b.String(), false
}

// DeleteSection removes the section name designates, subsections included, or answers
// ErrSectionNotFound.
func DeleteSection(doc, name string) (string, error) {
	sec, ok := FindSection(doc, name)
	if !ok {
		return doc, ErrSectionNotFound
	}
	return doc[:sec.Start] + doc[sec.End:], nil
}

// headingLine is the heading a new section named name gets.
func headingLine(name string) string {
	name = strings.TrimSpace(name)
	if level, text, ok := ParseHeading(name); ok {
		return strings.Repeat("#", level) + " " + text
	}
	return "## " + name
}

func withLineBreak(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
