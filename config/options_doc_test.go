package config

import (
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
