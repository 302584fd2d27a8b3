package memory

import (
	"errors"
	"strings"
	"testing"
)

func TestParseHeading(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line  string
		level int
		text  string
		ok    bool
	}{
		{"# Title", 1, "Title", true},
		{"###### Six", 6, "Six", true},
		{"####### Seven", 0, "", false},
		{"#hashtag", 0, "", false},
		{"#5 bolt", 0, "", false},
		{"#", 1, "", true},
		{"## ", 2, "", true},
		{"   ## Indented three", 2, "Indented three", true},
		{"    ## Indented four is code", 0, "", false},
		{"\t# Tab is code", 0, "", false},
		{"## Closed ##", 2, "Closed", true},
		{"## Closed ###   ", 2, "Closed", true},
		{"## Not closed#", 2, "Not closed#", true},
		{"# #", 1, "", true},
		{"##\tTabbed", 2, "Tabbed", true},
		{"## Windows\r\n", 2, "Windows", true},
		{"## Spaced   words  ", 2, "Spaced   words", true},
		{"> # quoted", 0, "", false},
		{"- # listed", 0, "", false},
		{"plain text", 0, "", false},
		{"", 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			level, text, ok := ParseHeading(tt.line)
			if level != tt.level || text != tt.text || ok != tt.ok {
				t.Errorf("ParseHeading(%q) = %d, %q, %v; want %d, %q, %v", tt.line, level, text, ok, tt.level, tt.text, tt.ok)
			}
		})
	}
}

func TestHeadingsIgnoreFencedCode(t *testing.T) {
	t.Parallel()
	doc := "# A\n```bash\n# not a heading\n```\n## B\n~~~~\n# no\n~~~\n# still code\n~~~~\n### C\n" +
		"````\n```\n# inside a longer fence\n````\n#### D\n``` info `with` backticks is no fence\n# E\n"
	var got []string
	for _, h := range Headings(doc) {
		got = append(got, strings.Repeat("#", h.Level)+" "+h.Text)
		if line := strings.TrimRight(doc[h.Start:h.LineEnd], "\n"); !strings.HasPrefix(line, "#") {
			t.Errorf("heading %q at offset %d is not at a heading line: %q", h.Text, h.Start, line)
		}
	}
	want := []string{"# A", "## B", "### C", "#### D", "# E"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings %q, want %q", got, want)
	}
	// An unclosed fence runs to the end of the text.
	if hs := Headings("# A\n```\n# B\n"); len(hs) != 1 {
		t.Errorf("unclosed fence: got %d headings, want 1", len(hs))
	}
}

const notesDoc = "# About Ada\n" +
	"Intro line.\n" +
	"\n" +
	"## Preferences\n" +
	"- metric units\n" +
	"### Food\n" +
	"- tea\n" +
	"\n" +
	"## Goals ##\n" +
	"```md\n" +
	"## Not a heading\n" +
	"```\n" +
	"- learn Go\n" +
	"\n" +
	"## Preferences\n" +
	"- duplicate heading\n"

func TestFindSection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		section  string
		found    bool
		wantText string // doc[Start:End]
		wantBody string // doc[Start:BodyEnd]
	}{
		{"by text takes the first match", "Preferences", true,
			"## Preferences\n- metric units\n### Food\n- tea\n\n",
			"## Preferences\n- metric units\n### Food\n- tea\n"},
		{"by heading line", "## Preferences", true,
			"## Preferences\n- metric units\n### Food\n- tea\n\n",
			"## Preferences\n- metric units\n### Food\n- tea\n"},
		{"trimmed", "  Preferences \n", true,
			"## Preferences\n- metric units\n### Food\n- tea\n\n",
			"## Preferences\n- metric units\n### Food\n- tea\n"},
		{"heading line with the wrong level", "### Preferences", false, "", ""},
		{"subsection ends at the next heading of a higher level", "Food", true,
			"### Food\n- tea\n\n", "### Food\n- tea\n"},
		{"closing hashes are not part of the text", "Goals", true,
			"## Goals ##\n```md\n## Not a heading\n```\n- learn Go\n\n",
			"## Goals ##\n```md\n## Not a heading\n```\n- learn Go\n"},
		{"closing hashes in the name", "## Goals ##", true,
			"## Goals ##\n```md\n## Not a heading\n```\n- learn Go\n\n",
			"## Goals ##\n```md\n## Not a heading\n```\n- learn Go\n"},
		{"a level-1 section holds everything after it", "# About Ada", true, notesDoc, notesDoc},
		{"headings in code are not sections", "Not a heading", false, "", ""},
		{"case-sensitive", "preferences", false, "", ""},
		{"no partial match", "Pref", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sec, ok := FindSection(notesDoc, tt.section)
			if ok != tt.found {
				t.Fatalf("found %v, want %v", ok, tt.found)
			}
			if !ok {
				return
			}
			if got := notesDoc[sec.Start:sec.End]; got != tt.wantText {
				t.Errorf("section %q, want %q", got, tt.wantText)
			}
			if got := notesDoc[sec.Start:sec.BodyEnd]; got != tt.wantBody {
				t.Errorf("body %q, want %q", got, tt.wantBody)
			}
		})
	}
}

func TestReplaceSection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc, section, content, want string
		created                           bool
	}{
		{"keeps the heading when content has none",
			"# T\n\n## A\nold\n\n## B\nb\n", "A", "new",
			"# T\n\n## A\nnew\n\n## B\nb\n", false},
		{"content with its own heading replaces the heading (rename)",
			"# T\n\n## A\nold\n\n## B\nb\n", "## A", "## A2\nnew\n",
			"# T\n\n## A2\nnew\n\n## B\nb\n", false},
		{"a deeper heading in content is a subsection",
			"## A\nold\n## B\n", "A", "### Sub\nx",
			"## A\n### Sub\nx\n## B\n", false},
		{"replaces subsections too",
			"## A\nold\n### A1\nx\n## B\n", "A", "new\n",
			"## A\nnew\n## B\n", false},
		{"empty content empties the body",
			"## A\nold\n\n## B\n", "A", "",
			"## A\n\n## B\n", false},
		{"last section without a final line break",
			"# T\n## A\nold", "A", "new",
			"# T\n## A\nnew\n", false},
		{"heading at the very end",
			"# T\n## A", "A", "new",
			"# T\n## A\nnew\n", false},
		{"the first of duplicate headings",
			"## A\n1\n## A\n2\n", "A", "x",
			"## A\nx\n## A\n2\n", false},
		{"missing: appended under ## and a blank line",
			"# T\nintro\n", "Goals", "- ship",
			"# T\nintro\n\n## Goals\n- ship\n", true},
		{"missing, named by heading line: that heading",
			"# T\nintro", "### Goals ###", "- ship",
			"# T\nintro\n\n### Goals\n- ship\n", true},
		{"missing, content with its own heading",
			"# T\n\n", "Goals", "# Goals\n- ship\n",
			"# T\n\n# Goals\n- ship\n", true},
		{"missing in empty notes",
			"", "Goals", "- ship",
			"## Goals\n- ship\n", true},
		{"a heading inside code is not the section",
			"```\n## A\n```\n", "A", "x",
			"```\n## A\n```\n\n## A\nx\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, created := ReplaceSection(tt.doc, tt.section, tt.content)
			if got != tt.want || created != tt.created {
				t.Errorf("ReplaceSection(%q, %q, %q) = %q, %v; want %q, %v", tt.doc, tt.section, tt.content, got, created, tt.want, tt.created)
			}
		})
	}
}

func TestDeleteSection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc, section, want string
		err                      error
	}{
		{"middle section with its separator", "# T\n\n## A\nx\n\n## B\ny\n", "A", "# T\n\n## B\ny\n", nil},
		{"with subsections", "## A\nx\n### A1\ny\n## B\n", "## A", "## B\n", nil},
		{"only a subsection", "## A\nx\n### A1\ny\n## B\n", "A1", "## A\nx\n## B\n", nil},
		{"last section", "intro\n## A\nx", "A", "intro\n", nil},
		{"first of duplicates", "## A\n1\n## A\n2\n", "A", "## A\n2\n", nil},
		{"missing", "## A\nx\n", "B", "## A\nx\n", ErrSectionNotFound},
		{"wrong level", "## A\nx\n", "# A", "## A\nx\n", ErrSectionNotFound},
		{"empty notes", "", "A", "", ErrSectionNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DeleteSection(tt.doc, tt.section)
			if got != tt.want || !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Errorf("DeleteSection(%q, %q) = %q, %v; want %q, %v", tt.doc, tt.section, got, err, tt.want, tt.err)
			}
		})
	}
}

func TestAppendPrependNotes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		op, doc, text, want string
	}{
		{NotesAppend, "", "a", "a"},
		{NotesAppend, "a\n", "b", "a\nb"},
		{NotesAppend, "a", "b", "a\nb"},
		{NotesAppend, "a", "", "a"},
		{NotesAppend, "a\n\n", "b\n", "a\n\nb\n"},
		{NotesPrepend, "", "a", "a"},
		{NotesPrepend, "b", "a", "a\nb"},
		{NotesPrepend, "b", "a\n", "a\nb"},
		{NotesPrepend, "b", "", "b"},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			got, _, err := NotesEdit{Op: tt.op, Content: tt.text}.Apply(tt.doc)
			if err != nil || got != tt.want {
				t.Errorf("%s(%q, %q) = %q, %v; want %q", tt.op, tt.doc, tt.text, got, err, tt.want)
			}
		})
	}
	if got, _, _ := (NotesEdit{Op: NotesOverwrite, Content: "x"}).Apply("old"); got != "x" {
		t.Errorf("overwrite gave %q", got)
	}
	if _, _, err := (NotesEdit{Op: "rewrite"}).Apply("old"); err == nil {
		t.Error("an unknown edit applied")
	}
}

// TestSectionEditsKeepTheRest checks, for every section of a larger document, that an edit
// leaves every byte before and after the section as it was.
func TestSectionEditsKeepTheRest(t *testing.T) {
	t.Parallel()
	doc := "# Notes\r\nWindows line ends stay.\r\n\r\n## Preferences\n- metric\n  trailing spaces  \n\n\n" +
		"## Goals\n~~~\n# code\n~~~\n### Short term\n- a\n\n#### Detail\nd\n### Long term\n- b\n## Ünïcödé 🙂\nz"
	for _, h := range Headings(doc) {
		sec, ok := FindSection(doc, strings.Repeat("#", h.Level)+" "+h.Text)
		if !ok || sec.Start != h.Start {
			t.Fatalf("section %q not found at %d", h.Text, h.Start)
		}
		before, after := doc[:sec.Start], doc[sec.End:]

		del, err := DeleteSection(doc, h.Text)
		if err != nil || del != before+after {
			t.Errorf("delete %q: %q, %v; want %q", h.Text, del, err, before+after)
		}

		out, created := ReplaceSection(doc, strings.Repeat("#", h.Level)+" "+h.Text, "NEW BODY")
		if created {
			t.Errorf("replace %q created a section", h.Text)
		}
		sep := doc[sec.BodyEnd:]
		if !strings.HasPrefix(out, before) || !strings.HasSuffix(out, sep) {
			t.Errorf("replace %q changed bytes outside the section:\n%q", h.Text, out)
			continue
		}
		middle := out[len(before) : len(out)-len(sep)]
		head := doc[sec.Start:sec.LineEnd]
		if !strings.HasSuffix(head, "\n") {
			head += "\n"
		}
		if middle != head+"NEW BODY\n" {
			t.Errorf("replace %q: section became %q", h.Text, middle)
		}
	}
}

func FuzzNotesSections(f *testing.F) {
	f.Add(notesDoc, "Preferences", "new")
	f.Add("# a\n```\n# b\n```\n## c\r\nx", "## c", "## d\ny")
	f.Add("", "#", "")
	f.Add("~~~\n", "x", "# x")
	f.Fuzz(func(t *testing.T, doc, section, content string) {
		for _, h := range Headings(doc) {
			if h.Start < 0 || h.LineEnd > len(doc) || h.Start >= h.LineEnd || h.Level < 1 || h.Level > 6 {
				t.Fatalf("bad heading %+v", h)
			}
		}
		sec, ok := FindSection(doc, section)
		del, err := DeleteSection(doc, section)
		out, created := ReplaceSection(doc, section, content)
		if !ok {
			if err == nil || del != doc || !created || !strings.HasPrefix(out, doc) {
				t.Fatalf("missing section: delete %q %v, replace %q %v", del, err, out, created)
			}
			return
		}
		if !(sec.Start < sec.LineEnd && sec.LineEnd <= sec.BodyEnd && sec.BodyEnd <= sec.End && sec.End <= len(doc)) {
			t.Fatalf("bad section %+v", sec)
		}
		if err != nil || del != doc[:sec.Start]+doc[sec.End:] {
			t.Fatalf("delete: %q, %v", del, err)
		}
		if created || !strings.HasPrefix(out, doc[:sec.Start]) || !strings.HasSuffix(out, doc[sec.BodyEnd:]) {
			t.Fatalf("replace changed the rest: %q", out)
		}
	})
}
