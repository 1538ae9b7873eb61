package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeOrder: the README reads in a new user's order: what hookwire
// does, installing it by name, using it, and only then the contributors'
// build and test commands (issue 23).
func TestReadmeOrder(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(data)
	at := func(s string) int {
		i := strings.Index(readme, s)
		require.GreaterOrEqual(t, i, 0, "README has no %q", s)
		return i
	}
	does := at("The sidecar\ndecides:")
	install := at(`{ "plugin": ["hookwire-opencode"] }`)
	use := at("\n## On stock OpenCode\n")
	firstHeading := strings.Index(readme, "\n## ")
	contrib := at("\n## Build and test (contributors)\n")
	assert.Less(t, does, firstHeading, "what hookwire does comes before any section")
	assert.Equal(t, at("\n## Install: one plugin line\n"), firstHeading, "the first section installs it by name")
	assert.Less(t, install, use)
	assert.Less(t, use, contrib)
	// The contributors' command block (mentions elsewhere, such as how a
	// row of the compatibility table was verified, are fine).
	for _, cmd := range []string{"make demo   #", "make test   #", "(cd shim && npm ci && npm run build)"} {
		assert.Greater(t, at(cmd), contrib, "%q comes before the contributors' section", cmd)
	}
}

// TestReadmeSessionsJSONMembers: the README's `sessions --json` shape names
// every top-level member the command prints, and no other (a list added to
// the output, such as health, once went unmentioned).
func TestReadmeSessionsJSONMembers(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(data)
	const intro = "With `--json`: `{"
	i := strings.Index(readme, intro)
	require.GreaterOrEqual(t, i, 0, "README has no %q", intro)
	shape := readme[i+len(intro):]
	shape = shape[:strings.Index(shape, "}`")]
	var documented []string
	for _, m := range regexp.MustCompile(`"([A-Za-z]+)"`).FindAllStringSubmatch(shape, -1) {
		documented = append(documented, m[1])
	}

	out, err := json.Marshal(sessionsList{})
	require.NoError(t, err)
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out, &members))
	var printed []string
	for name := range members {
		printed = append(printed, name)
	}
	assert.ElementsMatch(t, printed, documented, "README's sessions --json shape: %s", shape)
}
