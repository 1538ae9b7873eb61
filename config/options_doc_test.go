package config

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/contract"
)

// docs/OPTIONS.md names every option a user can set (issue 42): each
// member of Config, nested members by their dotted path, and each of the
// plugin's own options; the members the client fills in are named as
// such. Until the config lives in the contract, this test holds the
// reference to the code.
func TestOptionsReferenceNamesEveryOption(t *testing.T) {
	data, err := os.ReadFile("../docs/OPTIONS.md")
	require.NoError(t, err)
	doc := string(data)
	var members []string
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			path := prefix + name
			if f.Type.Kind() == reflect.Struct {
				walk(path+".", f.Type)
				continue
			}
			members = append(members, path)
		}
	}
	walk("", reflect.TypeOf(Config{}))
	require.Contains(t, members, "runtimeFallback.cooldownSeconds", "nested members are walked")
	// One source: the Go types and contract.json's config name the same
	// members (the options reference's table is generated from the latter).
	var contractMembers []string
	for _, m := range contract.ConfigMembers {
		contractMembers = append(contractMembers, m.Name)
	}
	assert.ElementsMatch(t, contractMembers, members, "config.Config and contract.json's config")
	for _, m := range append(members, contract.ShimOptions...) {
		assert.Contains(t, doc, "`"+m+"`", "docs/OPTIONS.md does not name %s", m)
	}
	for _, filled := range []string{"primaryAgents", "subagents"} {
		assert.Regexp(t, "Filled in by the plugin, never set by hand: .*`"+filled+"`", strings.ReplaceAll(doc, "\n", " "))
	}
}

// The contract's defaults are the decoder's: where contract.json gives a
// member's default as JSON (what comes before a remark in parentheses),
// DefaultConfig holds that value. A member whose Go default is nil is
// worked out at use from others (managedAgents from the primary agents,
// phaseReminder.agents from orchestratorAgent), and its text says so.
func TestContractDefaultsAreDefaultConfig(t *testing.T) {
	def := DefaultConfig()
	byPath := map[string]func(*Config) any{}
	for _, f := range configFields {
		byPath[f.path] = f.field
	}
	checked := 0
	for _, m := range contract.ConfigMembers {
		field := byPath[m.Name]
		require.NotNil(t, field, "config_gen.go lacks %s: run go generate ./contract", m.Name)
		text, _, _ := strings.Cut(m.Default, " (")
		var want any
		if json.Unmarshal([]byte(text), &want) != nil {
			continue // words, not a value
		}
		value := reflect.ValueOf(field(&def)).Elem()
		if (value.Kind() == reflect.Slice || value.Kind() == reflect.Pointer) && value.IsNil() {
			assert.Contains(t, m.Default, "(", "%s: nil in DefaultConfig, so its default text must say what it derives from", m.Name)
			continue
		}
		raw, err := json.Marshal(value.Interface())
		require.NoError(t, err)
		var got any
		require.NoError(t, json.Unmarshal(raw, &got))
		assert.Equal(t, want, got, "%s: contract.json says %s, DefaultConfig has %s", m.Name, m.Default, raw)
		checked++
	}
	assert.GreaterOrEqual(t, checked, 15, "most defaults are values")
}

// PROTOCOL.md 7 is the wire view of the same members: its JSON block is
// the default config (it decodes without a warning to DefaultConfig), and
// its table names every top-level member of contract.json's config.
func TestProtocolSection7IsTheContractsConfig(t *testing.T) {
	data, err := os.ReadFile("../docs/PROTOCOL.md")
	require.NoError(t, err)
	doc := string(data)
	start := strings.Index(doc, "## 7. Configuration")
	require.GreaterOrEqual(t, start, 0)
	end := strings.Index(doc[start:], "\n## 8.")
	require.Greater(t, end, 0)
	section := doc[start : start+end]
	block, _, ok := strings.Cut(section[strings.Index(section, "```json\n")+len("```json\n"):], "```")
	require.True(t, ok, "section 7 has its JSON block")
	cfg, warnings, err := Parse([]byte(block))
	require.NoError(t, err)
	assert.Empty(t, warnings, "section 7's JSON block names only the contract's members, each of its type")
	assert.Equal(t, DefaultConfig(), cfg, "section 7's JSON block is the default config")
	for _, m := range contract.ConfigMembers {
		top, _, _ := strings.Cut(m.Name, ".")
		assert.Contains(t, section, "`"+top+"`", "section 7's table does not name %s", top)
	}
}
