package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/internal/textsafe"
)

// hostileState holds what a task's description, an agent's name or a
// provider's error may carry: terminal escapes (OSC 52 sets the
// clipboard, ESC [ 2J clears the screen), a bidi override, a zero-width
// space, 100 CJK characters and an emoji family.
const hostileState = `{"version":1,"clock":3,"parents":[
 {"id":"ses_p","counters":{"exp":3},"entries":[
  {"agent":"explorer","alias":"exp-1","taskId":"ses_a","label":"\u001b]52;c;aGk=\u0007steal\u001b[2J","lastUse":"2026-11-30T10:00:03Z","use":3},
  {"agent":"ex\u202eplorer","alias":"exp-2","taskId":"ses_b","label":"` + "漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢" + `","lastUse":"2026-11-30T10:00:02Z","use":2},
  {"agent":"explorer","alias":"exp-3","taskId":"ses_c","label":"fam 👨\u200d👩\u200d👧\u200d👦 zw\u200bsp","lastUse":"2026-11-30T10:00:01Z","use":1}]}],
 "sessionAgents":[{"session":"ses_a","agent":"explorer",
   "switches":[{"from":"fake/m1","to":"fake/m2","reason":"rate limit \u001b[31mred\u001b[0m \u009b2J","at":"2026-11-30T10:00:03Z"}]}],
 "health":[{"model":"fake/m1","until":"2026-11-30T11:00:00Z","strikes":1,"last":"2026-11-30T10:00:03Z","class":"rate_limit","message":"\u001b]0;pwned\u0007slow \u202edown"}]}`

// hookwire sessions prints text from outside safe (issue 51, "Safe
// text"): no escape sequence, control, bidi or zero-width character
// reaches the terminal, cells are cut by display width, and the columns
// line up in columns (a CJK label took 2 columns a character, counted 1).
// --json keeps the data as stored.
func TestSessionsTextIsSafe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(path, []byte(hostileState), 0o600))
	code, stdout, stderr := runCmd("sessions", "--state", path)
	require.Equal(t, 0, code, stderr)
	for _, bad := range []string{"\x1b", "\a", "\u009b", "\u202e", "\u200b", "52;c", "2J", "pwned"} {
		assert.NotContains(t, stdout, bad)
	}
	assert.Contains(t, stdout, "fam 👨\u200d👩\u200d👧\u200d👦 zwsp", "the emoji family whole")
	assert.Contains(t, stdout, "switch: exp-1 fake/m1 -> fake/m2 at 2026-11-30T10:00:03Z: rate limit red \n")
	assert.Contains(t, stdout, "slow down")

	// The table: the TASK ID column begins at the same column on each row.
	var col []int
	for _, line := range strings.Split(stdout, "\n") {
		for _, id := range []string{"TASK ID", "ses_a", "ses_b", "ses_c"} {
			if i := strings.Index(line, "  "+id+"  "); i >= 0 {
				col = append(col, textsafe.Width(line[:i]))
				if id == "ses_b" {
					assert.Contains(t, line, strings.Repeat("漢", 39)+"…  ses_b", "100 CJK characters cut to 80 columns")
				}
			}
		}
	}
	require.Len(t, col, 4, stdout)
	for _, c := range col {
		assert.Equal(t, col[0], c, stdout)
	}

	_, raw, _ := runCmd("sessions", "--state", path, "--json")
	assert.Contains(t, raw, `"label": "\u001b]52;c;aGk=\u0007steal\u001b[2J"`, "--json: the data as stored")
}
