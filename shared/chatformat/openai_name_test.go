package chatformat

import (
	"regexp"
	"strings"
	"testing"
)

var openAINamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestOpenAIName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want string // "" means omitted
	}{
		{"ada", "ada"},
		{"ok_name-1", "ok_name-1"},
		{"Ada Lovelace", "Ada_Lovelace"},
		{"  Ada   Lovelace!  ", "Ada_Lovelace"},
		{"a.b@c", "a_b_c"},
		{"José", "Jos"},
		{"Zoë Smith", "Zo_Smith"},
		{"李雷", ""},
		{"!!!", ""},
		{"__--", "__--"},
		{"_ _", ""},
		{"x\u0085y", "x_y"},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), strings.Repeat("a", 64)},
		{strings.Repeat("ab ", 40), strings.Repeat("ab_", 21) + "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := openAIName(tt.name)
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("openAIName(%q) = %q, want omitted", tt.name, *got)
			case tt.want != "" && (got == nil || *got != tt.want):
				t.Errorf("openAIName(%q) = %v, want %q", tt.name, got, tt.want)
			case got != nil && !openAINamePattern.MatchString(*got):
				t.Errorf("openAIName(%q) = %q, which the API refuses", tt.name, *got)
			}
		})
	}
}

// FuzzOpenAIName: whatever a stored name is, the openai format gives one the API takes, or none.
func FuzzOpenAIName(f *testing.F) {
	for _, s := range []string{"ada", "Ada Lovelace", "李雷", "", strings.Repeat("ab ", 40), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := openAIName(name)
		if got != nil && !openAINamePattern.MatchString(*got) {
			t.Fatalf("openAIName(%q) = %q, which the API refuses", name, *got)
		}
		if openAINamePattern.MatchString(name) && (got == nil || *got != name) {
			t.Fatalf("openAIName(%q) changed a name the API takes", name)
		}
	})
}
