package contract_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/contract"
)

// protocolDoc returns docs/PROTOCOL.md's sections by their heading line
// ("## 3. Hook calls", "### `status`"): each section's text up to the
// next heading of any level.
func protocolDoc(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "docs", "PROTOCOL.md"))
	require.NoError(t, err)
	sections := map[string]string{}
	var heading string
	var body strings.Builder
	inFence := false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(line, "#") {
			sections[heading] = body.String()
			heading = line
			body.Reset()
			continue
		}
		body.WriteString(line + "\n")
	}
	sections[heading] = body.String()
	return sections
}

func section(t *testing.T, doc map[string]string, prefix string) string {
	t.Helper()
	for h, body := range doc {
		if strings.HasPrefix(h, prefix) {
			return body
		}
	}
	t.Fatalf("PROTOCOL.md has no section %q", prefix)
	return ""
}

// tableRows returns the cells of each body row of the first Markdown
// table in text.
func tableRows(text string) [][]string {
	var rows [][]string
	started := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		if strings.HasPrefix(line, "|---") {
			rows = rows[:0] // the header row
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

var firstCode = regexp.MustCompile("`([^`]*)`")

// code returns the first `code span` of a cell.
func code(cell string) string {
	m := firstCode.FindStringSubmatch(cell)
	if m == nil {
		return ""
	}
	return m[1]
}

// jsonBlocks returns the ```json blocks of text.
func jsonBlocks(text string) []string {
	var blocks []string
	for _, part := range strings.Split(text, "```json\n")[1:] {
		blocks = append(blocks, part[:strings.Index(part, "```")])
	}
	return blocks
}

func hookMethods() []contract.Method {
	var hooks []contract.Method
	for _, m := range contract.Methods {
		if m.Role == contract.RoleHook {
			hooks = append(hooks, m)
		}
	}
	return hooks
}

// Section 3's table is the contract's hooks: method, OpenCode hook and
// kind, in order.
func TestProtocolHookTable(t *testing.T) {
	rows := tableRows(section(t, protocolDoc(t), "## 3."))
	var got, want [][3]string
	for _, r := range rows {
		require.Len(t, r, 3, "row %v", r)
		got = append(got, [3]string{code(r[0]), code(r[1]), strings.Fields(r[2])[0]})
	}
	for _, m := range hookMethods() {
		want = append(want, [3]string{m.Name, m.OpenCodeHook, string(m.Kind)})
	}
	assert.Equal(t, want, got)
}

// Section 2's initialize result lists the contract's hooks, events and
// methods, in the contract's order; section 9's lists an observer's.
func TestProtocolCapabilities(t *testing.T) {
	doc := protocolDoc(t)
	type caps struct {
		Hooks         []string `json:"hooks"`
		Events        []string `json:"events"`
		Methods       []string `json:"methods"`
		Notifications []string `json:"notifications"`
	}
	result := func(text string) caps {
		for _, b := range jsonBlocks(text) {
			var r struct {
				Capabilities *caps `json:"capabilities"`
			}
			if json.Unmarshal([]byte(b), &r) == nil && r.Capabilities != nil {
				return *r.Capabilities
			}
		}
		t.Fatal("no initialize result with capabilities")
		return caps{}
	}
	serve := result(section(t, doc, "## 2."))
	assert.Equal(t, contract.Names(contract.RoleHook), serve.Hooks)
	assert.Equal(t, contract.Events, serve.Events)
	assert.Equal(t, contract.Names(contract.RoleMethod), serve.Methods)

	observer := result(section(t, doc, "## 9."))
	assert.Empty(t, observer.Hooks)
	assert.Empty(t, observer.Events)
	assert.Equal(t, contract.ObserverMethods, observer.Methods)
	assert.Equal(t, contract.ObserverNotifications, observer.Notifications)
}

// Every method of section 2's capabilities has its section 5 entry, and
// a notification's says it is one.
func TestProtocolMethodSections(t *testing.T) {
	doc := protocolDoc(t)
	for _, name := range contract.Names(contract.RoleMethod) {
		body := section(t, doc, "### `"+name+"`")
		m, _ := contract.MethodNamed(name)
		assert.Equal(t, m.Kind == contract.KindNotification, strings.Contains(body, "notification"),
			"%s is a %s; its section says so", name, m.Kind)
	}
}

// Section 8's table is the contract's error codes and names, in order.
func TestProtocolErrorTable(t *testing.T) {
	rows := tableRows(section(t, protocolDoc(t), "## 8."))
	var got, want [][2]string
	for _, r := range rows {
		require.Len(t, r, 3, "row %v", r)
		got = append(got, [2]string{code(r[0]), r[1]})
	}
	for _, e := range contract.Errors {
		want = append(want, [2]string{jsonNumber(e.Code), e.Message})
	}
	assert.Equal(t, want, got)
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Section 4.5 names exactly the contract's info and part fields.
func TestProtocolTransformReads(t *testing.T) {
	text := section(t, protocolDoc(t), "### 4.5")
	text = text[:strings.Index(text, "A client")]
	_, text, ok := strings.Cut(text, "messages:")
	require.True(t, ok, "4.5 names the messages' fields after \"messages:\"")
	info, parts, ok := strings.Cut(text, "of parts:")
	require.True(t, ok, "4.5 lists the info fields, then the parts'")
	spans := func(s string) []string {
		var out []string
		for _, m := range firstCode.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		return out
	}
	var wantInfo, wantParts []string
	for _, f := range contract.InfoReads {
		wantInfo = append(wantInfo, "info."+f.Path)
	}
	for _, f := range contract.PartReads {
		wantParts = append(wantParts, f.Path)
	}
	assert.Equal(t, wantInfo, spans(info))
	assert.Equal(t, wantParts, spans(parts))
}

// The Makefile builds a binary for exactly the contract's platforms.
func TestDistTargetsArePlatforms(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "Makefile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^DIST_TARGETS\s*:=\s*(.*)$`).FindStringSubmatch(string(raw))
	require.NotNil(t, m, "Makefile sets DIST_TARGETS")
	var want []string
	for _, p := range contract.Platforms {
		want = append(want, p.GOOS+"/"+p.GOARCH)
	}
	assert.Equal(t, want, strings.Fields(m[1]))
}

func TestLookups(t *testing.T) {
	m, ok := contract.MethodNamed(contract.MethodChatMessagesTransform)
	require.True(t, ok)
	assert.Equal(t, "experimental.chat.messages.transform", m.OpenCodeHook)
	_, ok = contract.MethodNamed("sessions.changed")
	assert.False(t, ok, "a notification the observer sends is no method the sidecar serves")

	p, ok := contract.PlatformFor("windows", "amd64")
	require.True(t, ok)
	assert.Equal(t, contract.PluginPackage+"-win32-x64", p.Package)
	_, ok = contract.PlatformFor("plan9", "386")
	assert.False(t, ok)

	assert.Equal(t, []string{"initialize", "shutdown", "exit"}, contract.Names(contract.RoleLifecycle))
}

// The shim's package is the plugin package the contract names (the
// platform packages are named after it).
func TestPluginPackageIsTheShims(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "shim", "package.json"))
	require.NoError(t, err)
	var pkg struct {
		Name string `json:"name"`
	}
	require.NoError(t, json.Unmarshal(raw, &pkg))
	assert.Equal(t, contract.PluginPackage, pkg.Name)
	for _, p := range contract.Platforms {
		assert.Equal(t, contract.PluginPackage+"-"+p.OS+"-"+p.CPU, p.Package)
	}
}
