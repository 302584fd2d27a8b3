package agentmem

import (
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/service"
)

// samTemplate is what TestTemplate reads of template.yaml.
type samTemplate struct {
	Parameters map[string]struct {
		Type        string `yaml:"Type"`
		Description string `yaml:"Description"`
	} `yaml:"Parameters"`
	Conditions map[string]any `yaml:"Conditions"`
	Globals    struct {
		Function struct {
			Runtime       string   `yaml:"Runtime"`
			Architectures []string `yaml:"Architectures"`
			Handler       string   `yaml:"Handler"`
			CodeURI       string   `yaml:"CodeUri"`
			Environment   struct {
				Variables map[string]any `yaml:"Variables"`
			} `yaml:"Environment"`
		} `yaml:"Function"`
	} `yaml:"Globals"`
	Resources map[string]struct {
		Type     string         `yaml:"Type"`
		Metadata map[string]any `yaml:"Metadata"`
		Props    struct {
			CodeURI string `yaml:"CodeUri"`
			Events  map[string]struct {
				Type  string         `yaml:"Type"`
				Props map[string]any `yaml:"Properties"`
			} `yaml:"Events"`
		} `yaml:"Properties"`
	} `yaml:"Resources"`
	Outputs map[string]any `yaml:"Outputs"`
}

// logicalID is the template's name of a function's resource: recall -> RecallFunction.
func logicalID(fn string) string {
	var b strings.Builder
	for _, part := range strings.Split(fn, "-") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String() + "Function"
}

// template.yaml builds every function with SAM itself (sam build runs the Makefile's
// build-<LogicalId>), for arm64 on provided.al2023, routes each at /v1/<name>, and documents
// every parameter (in the template and docs/deploy.md) and every setting it passes (README).
func TestTemplate(t *testing.T) {
	raw, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl samTemplate
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	g := tpl.Globals.Function
	if g.Runtime != "provided.al2023" || !slices.Equal(g.Architectures, []string{"arm64"}) || g.Handler != "bootstrap" || g.CodeURI != "." {
		t.Errorf("Globals.Function: runtime %q, architectures %v, handler %q, CodeUri %q", g.Runtime, g.Architectures, g.Handler, g.CodeURI)
	}

	fns := map[string]bool{}
	for _, fn := range functionNames(t) {
		fns[fn] = true
	}
	for fn := range fns {
		t.Run(fn, func(t *testing.T) {
			id := logicalID(fn)
			r, ok := tpl.Resources[id]
			if !ok {
				t.Fatalf("no resource %s for functions/%s", id, fn)
			}
			if r.Metadata["BuildMethod"] != "makefile" {
				t.Errorf("%s: Metadata.BuildMethod %v, want makefile", id, r.Metadata["BuildMethod"])
			}
			if r.Props.CodeURI != "" {
				t.Errorf("%s: CodeUri %q; the Globals' . (the Makefile's folder) is the only one", id, r.Props.CodeURI)
			}
			if api := r.Props.Events["Api"]; api.Type != "HttpApi" || api.Props["Path"] != "/v1/"+fn {
				t.Errorf("%s: Api event %+v, want HttpApi at /v1/%s", id, api, fn)
			}
			out := strings.TrimSuffix(id, "Function") + "Url"
			if _, ok := tpl.Outputs[out]; !ok {
				t.Errorf("no output %s", out)
			}
		})
	}
	camel := regexp.MustCompile(`([a-z0-9])([A-Z])`)
	for id, r := range tpl.Resources {
		if r.Type != "AWS::Serverless::Function" {
			continue
		}
		if name := strings.ToLower(camel.ReplaceAllString(strings.TrimSuffix(id, "Function"), "$1-$2")); !fns[name] {
			t.Errorf("resource %s has no functions/%s", id, name)
		}
	}

	deploy, err := os.ReadFile("docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range tpl.Parameters {
		if strings.TrimSpace(p.Description) == "" {
			t.Errorf("parameter %s has no Description", name)
		}
		if !strings.Contains(string(deploy), "| `"+name+"` |") {
			t.Errorf("docs/deploy.md's parameter table lacks %s", name)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for v := range g.Environment.Variables {
		if !strings.Contains(string(readme), "`"+v+"`") {
			t.Errorf("README.md's configuration table lacks %s, which the template sets", v)
		}
	}

	// Every !Ref names a parameter, a resource, or a pseudo parameter; every condition used exists.
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Tag == "!Ref" && n.Kind == yaml.ScalarNode {
			_, isParam := tpl.Parameters[n.Value]
			_, isRes := tpl.Resources[n.Value]
			if !isParam && !isRes && !strings.HasPrefix(n.Value, "AWS::") {
				t.Errorf("line %d: !Ref %s names nothing", n.Line, n.Value)
			}
		}
		if n.Tag == "!If" && len(n.Content) > 0 {
			if _, ok := tpl.Conditions[n.Content[0].Value]; !ok {
				t.Errorf("line %d: !If on unknown condition %s", n.Line, n.Content[0].Value)
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
}

// `make build-<LogicalId>`, what sam build runs, builds that function for Lambda: a static
// linux/arm64 executable named bootstrap in ARTIFACTS_DIR.
func TestSamBuildTarget(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	out := t.TempDir()
	cmd := exec.Command("make", "-s", "build-ActiveSessionFunction", "ARTIFACTS_DIR="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build-ActiveSessionFunction: %v\n%s", err, b)
	}
	f, err := elf.Open(filepath.Join(out, "bootstrap"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		t.Errorf("bootstrap is for %v, want arm64", f.Machine)
	}
	if interp := f.Section(".interp"); interp != nil {
		t.Error("bootstrap is dynamically linked; want static (CGO_ENABLED=0)")
	}
	info, err := buildinfo.ReadFile(filepath.Join(out, "bootstrap"))
	if err != nil {
		t.Fatal(err)
	}
	var tags string
	for _, s := range info.Settings {
		if s.Key == "-tags" {
			tags = s.Value
		}
	}
	if want := buildTags(t); tags != want {
		t.Errorf("bootstrap was built with -tags %q, want %q", tags, want)
	}
	if b, err := exec.Command("make", "-s", "build-NoSuchThingFunction", "ARTIFACTS_DIR="+out).CombinedOutput(); err == nil {
		t.Errorf("make build-NoSuchThingFunction succeeded: %s", b)
	}
}

// docs/deploy.md's count of the functions `sam build` builds is the number of functions/ and of
// template.yaml's functions, and samconfig.toml asks SAM for no build cache, which it never
// applies to makefile builds.
func TestDeployDocFigures(t *testing.T) {
	dirs := functionNames(t)
	tmpl, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(tmpl), "Type: AWS::Serverless::Function"); n != len(dirs) {
		t.Errorf("template.yaml has %d functions, functions/ %d", n, len(dirs))
	}
	doc, err := os.ReadFile("docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`sam build +# builds all (\S+) functions`).FindSubmatch(doc)
	if m == nil || string(m[1]) != strconv.Itoa(len(dirs)) {
		t.Errorf("docs/deploy.md: %q functions, want %d (functions/)", m, len(dirs))
	}
	sam, err := os.ReadFile("samconfig.toml")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^\s*cached\s*=\s*true`).Match(sam) {
		t.Error("samconfig.toml sets cached = true, which SAM never applies to makefile builds")
	}
}

// buildTags is TAGS of scripts/build-function.sh: the build tags of every Lambda binary.
func buildTags(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("scripts/build-function.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^TAGS=(\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("scripts/build-function.sh sets no TAGS=")
	}
	return string(m[1])
}

// The container image and the bench's start-up workload build with the tags of the Lambda
// binaries, so that all of them leave out what grpcnotrace leaves out and measure what is
// deployed.
func TestBuildTags(t *testing.T) {
	tags := buildTags(t)
	if !slices.Contains(strings.Split(tags, ","), "grpcnotrace") {
		t.Errorf("scripts/build-function.sh TAGS=%s: want grpcnotrace among them", tags)
	}
	for _, f := range []string{"cmd/agentmem-image/main.go", "cmd/agentmem-bench/startup.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if want := `const buildTags = "` + tags + `"`; !strings.Contains(string(b), want) {
			t.Errorf("%s does not say %s", f, want)
		}
	}
}

// notOnLambda are the settings of the configuration tables that the template does not set, and
// why: each is for another way of running agentmem, or set by Lambda itself.
var notOnLambda = map[string]string{
	"ADDR":               "where agentmem serve listens",
	"PORT":               "agentmem serve's port in a container",
	"AGENTMEM_FUNCTION":  "the function the container image serves on Lambda",
	"AWS_REGION":         "set by Lambda",
	"JOBS_POLL_INTERVAL": "agentmem serve's own delivery loop; on Lambda a schedule runs process-jobs",
}

// Every setting in the README's configuration tables is a parameter of the template (or says
// in notOnLambda why not), so a deployment can set each without editing the template; every
// parameter left at its default (empty: the setting's own default) loads as if unset; and the
// functions' environment with every default leaves more than half of Lambda's 4 KB for the
// URLs, keys and secrets a deployment fills in.
func TestTemplateSetsEverySetting(t *testing.T) {
	raw, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Parameters map[string]struct {
			Default string `yaml:"Default"`
		} `yaml:"Parameters"`
		Globals struct {
			Function struct {
				Environment struct {
					Variables map[string]yaml.Node `yaml:"Variables"`
				} `yaml:"Environment"`
			} `yaml:"Function"`
		} `yaml:"Globals"`
		Resources map[string]struct {
			Properties struct {
				Environment struct {
					Variables map[string]yaml.Node `yaml:"Variables"`
				} `yaml:"Environment"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	size := 0
	for name, v := range tpl.Globals.Function.Environment.Variables {
		if v.Tag != "!Ref" {
			t.Errorf("%s: %s, want a !Ref of a parameter", name, v.Value)
			continue
		}
		p, ok := tpl.Parameters[v.Value]
		if !ok {
			t.Errorf("%s: !Ref %s is no parameter", name, v.Value)
		}
		env[name] = p.Default
		size += len(name) + len(p.Default)
	}
	if size > 2048 {
		t.Errorf("the functions' environment takes %d bytes with every default; Lambda allows 4096 in all", size)
	}
	perFunction := map[string]bool{}
	for _, r := range tpl.Resources {
		for name := range r.Properties.Environment.Variables {
			perFunction[name] = true
		}
	}

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_]+)` \\|").FindAllStringSubmatch(string(readme), -1)
	if len(rows) < 50 {
		t.Fatalf("%d settings in the README's tables: the pattern no longer finds them", len(rows))
	}
	for _, m := range rows {
		name := m[1]
		if _, ok := env[name]; !ok && !perFunction[name] && notOnLambda[name] == "" {
			t.Errorf("README.md documents %s, which template.yaml does not set (add a parameter, or say in notOnLambda why not)", name)
		}
	}
	for name := range notOnLambda {
		if _, ok := env[name]; ok || perFunction[name] {
			t.Errorf("%s is in notOnLambda, yet the template sets it", name)
		}
	}

	// An empty parameter means the setting's own default: the template's defaults load as its
	// non-empty ones alone (the values it chooses for Lambda, such as MESSAGE_EMBEDDING commit).
	required := map[string]string{"DATABASE_URL": "postgresql://u:p@db.example:6543/postgres", "SUPABASE_JWT_SECRET": strings.Repeat("s", 32)}
	getenv := func(vars map[string]string) func(string) string {
		return func(name string) string {
			if v, ok := required[name]; ok {
				return v
			}
			return vars[name]
		}
	}
	fromTemplate, err := config.Load(getenv(env))
	if err != nil {
		t.Fatalf("the template's defaults do not load: %v", err)
	}
	chosen := map[string]string{}
	for name, v := range env {
		if v != "" {
			chosen[name] = v
		}
	}
	unset, err := config.Load(getenv(chosen))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromTemplate, unset) {
		t.Errorf("the template's defaults load as\n%+v\nwant, as with its empty ones unset,\n%+v", fromTemplate, unset)
	}
}

// The README's list of functions ("### The functions") has one entry per functions/<name>,
// and nothing else.
func TestReadmeListsEveryFunction(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "\n### The functions\n")
	if start < 0 {
		t.Fatal(`README.md has no "### The functions" section`)
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^- \*\*([a-z-]+)\*\*`).FindAllStringSubmatch(section, -1) {
		listed = append(listed, m[1])
	}
	fns := functionNames(t)
	slices.Sort(listed)
	if !slices.Equal(listed, fns) {
		t.Errorf("README.md's functions %v, functions/ %v", listed, fns)
	}
}

// A function takes a scheduled event in its own binary (functions/<name>/main.go sets
// Scheduled), in the container image (service.ScheduledFunctions) and in template.yaml (a
// Schedule event) alike, or in none of them.
func TestScheduledEntries(t *testing.T) {
	raw, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl samTemplate
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	var binaries, template []string
	for _, fn := range functionNames(t) {
		src, err := os.ReadFile(filepath.Join("functions", fn, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "Scheduled:") {
			binaries = append(binaries, fn)
		}
		for _, ev := range tpl.Resources[logicalID(fn)].Props.Events {
			if ev.Type == "Schedule" || ev.Type == "ScheduleV2" {
				template = append(template, fn)
				break
			}
		}
	}
	image := service.ScheduledFunctions()
	if len(image) == 0 || !slices.Equal(binaries, image) || !slices.Equal(template, image) {
		t.Errorf("functions with a scheduled entry: binaries %v, container image %v, template.yaml %v", binaries, image, template)
	}
}

// functionNames are the functions of functions/<name>/main.go, in name order; none fails t.
func functionNames(t *testing.T) []string {
	t.Helper()
	mains, err := filepath.Glob("functions/*/main.go")
	if err != nil || len(mains) == 0 {
		t.Fatalf("functions/*/main.go: %v, %v", mains, err)
	}
	names := make([]string, len(mains))
	for i, m := range mains {
		names[i] = filepath.Base(filepath.Dir(m))
	}
	return names
}

// A function waits for its work after the answer under Lambda (Options.AfterAnswer: the
// messages of the turns it commits, embedded after the answer) in its own binary and in the
// container image alike, exactly when its use cases commit turns (App.CommitTurn among the use
// cases scripts/check-binaries.txt lists for it).
func TestAfterAnswerEntries(t *testing.T) {
	list, err := os.ReadFile("scripts/check-binaries.txt")
	if err != nil {
		t.Fatal(err)
	}
	var commits []string
	for _, line := range strings.Split(string(list), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[1] == "app" && slices.Contains(f[2:], "CommitTurn") {
			commits = append(commits, f[0])
		}
	}
	var binaries []string
	for _, fn := range functionNames(t) {
		src, err := os.ReadFile(filepath.Join("functions", fn, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "AfterAnswer: svc.AfterAnswer()") {
			binaries = append(binaries, fn)
		}
	}
	slices.Sort(commits)
	image := service.AfterAnswerFunctions()
	if len(image) == 0 || !slices.Equal(binaries, image) || !slices.Equal(commits, image) {
		t.Errorf("functions that wait for their work after the answer: binaries %v, container image %v; functions that commit turns %v",
			binaries, image, commits)
	}
}
