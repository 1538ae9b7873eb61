package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeOrder: the README is the user's guide and reads in a new
// user's order (issues 23, 42): what hookwire does, installing it by name,
// what you see, options, troubleshooting, and last the two commands of a
// clone, with the contributor's manual in CONTRIBUTING.md, linked once.
// At most 400 lines.
func TestReadmeOrder(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(data)
	at := func(s string) int {
		i := strings.Index(readme, s)
		require.GreaterOrEqual(t, i, 0, "README has no %q", s)
		return i
	}
	assert.LessOrEqual(t, strings.Count(readme, "\n"), 400, "the README is at most 400 lines")
	does := at("The sidecar\ndecides:")
	firstHeading := strings.Index(readme, "\n## ")
	assert.Less(t, does, firstHeading, "what hookwire does comes before any section")
	assert.Equal(t, at("\n## Install: one plugin line\n"), firstHeading, "the first section installs it by name")
	order := []string{
		`{ "plugin": ["hookwire-opencode"] }`, "\n## In the TUI\n", "\n## Options\n", "\n## Troubleshooting\n",
		"\n## Uninstall\n", "\n## Reporting a bug\n", `"record": "hookwire-bug.json"`, "\n## From a clone\n", "make demo   #", "make test   #",
	}
	for i := 1; i < len(order); i++ {
		assert.Less(t, at(order[i-1]), at(order[i]), "%q comes before %q", order[i-1], order[i])
	}
	assert.Equal(t, 1, strings.Count(readme, "](CONTRIBUTING.md)"), "the contributor's manual is linked once")
	assert.Contains(t, readme, "](docs/OPTIONS.md)", "every option: one reference")
	_, err = os.Stat("../../CONTRIBUTING.md")
	require.NoError(t, err)
	for _, contrib := range []string{"(cd shim && npm ci && npm run build)", "## Layout", "## Speed", "## Reliability"} {
		assert.NotContains(t, readme, contrib, "the contributor's manual is not in the README")
	}
}

// TestDocsStandAlone: the README and every document under docs/ stand on
// their own: no link or path into ../shared/, the developers' notes.
func TestDocsStandAlone(t *testing.T) {
	files := []string{"../../README.md", "../../CONTRIBUTING.md"}
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	for _, f := range append(files, docs...) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.NotContains(t, string(data), "../shared", f)
		for _, m := range regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`).FindAllStringSubmatch(string(data), -1) {
			target := filepath.Join(filepath.Dir(f), m[1])
			_, err := os.Stat(target)
			assert.NoError(t, err, "%s links to %s, which is not there", f, m[1])
		}
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
