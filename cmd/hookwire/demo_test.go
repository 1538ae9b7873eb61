package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemo: make demo shows what a by-name user of stock OpenCode gets, in
// this order: build delegating to explore and general, general's
// rate-limited model replaced by its fallback with the task still
// answered, the Resumable Sessions list, guidance on a failed call, a
// resume by alias from a later process (a second sidecar on the same
// project database), then `hookwire sessions`; and none of the internal
// words or the orchestrator setup.
func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, demo(nil, &stdout, &stderr), stderr.String())
	assert.Empty(t, stderr.String())
	out := stdout.String()

	// Each key line, in order.
	lines := []string{
		`build delegates to explore: task(subagent_type="explore", "Map the config loader")`,
		"explore's session ses_demo_explore is remembered as exp-1",
		`build delegates to general: task(subagent_type="general", "Write the loader tests")`,
		"answers HTTP 429 (rate limited)",
		"hookwire stops that attempt at once and runs the same task again on openai/gpt-5.4",
		"build's task call gets general's own answer, as if nothing had failed: gen-1, now on openai/gpt-5.4",
		"switch recorded: anthropic/claude-sonnet-4-6 -> openai/gpt-5.4 (rate-limit: Rate limit reached)",
		"| ### Resumable Sessions",
		"| - explore: exp-1 Map the config loader",
		`build delegates to "explorer", an agent that does not exist: the task call fails`,
		"| Error type: unknown_agent",
		"| Available: explore, general",
		"OpenCode exits. Later, a new OpenCode process starts on the same project",
		`build resumes: task(subagent_type="explore", task_id="exp-1", "Resume config map")`,
		`the call goes to OpenCode as task_id="ses_demo_explore"`,
		"hookwire sessions: what the project remembers",
		"| project memory: 2 subagent sessions under 1 parent session",
		"| switch: gen-1 anthropic/claude-sonnet-4-6 -> openai/gpt-5.4",
	}
	at := 0
	for _, want := range lines {
		i := strings.Index(out[at:], want)
		if !assert.GreaterOrEqual(t, i, 0, "%q missing or out of order in:\n%s", want, out) {
			return
		}
		at += i + len(want)
	}
	// The sessions table: exp-1 keeps the label of the call that made it
	// after the resume, and gen-1 shows the model it finished on.
	var exp1, gen1 string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 3 && f[0] == "|" && f[1] == "ses_demo_build" {
			switch f[3] {
			case "exp-1":
				exp1 = l
			case "gen-1":
				gen1 = l
			}
		}
	}
	assert.Contains(t, exp1, "Map the config loader")
	assert.NotContains(t, exp1, "Resume config map")
	assert.Contains(t, gen1, "openai/gpt-5.4")

	for _, jargon := range []string{"rung", "orchestrator", "oracle", "category", "Unknown category", "load_skills"} {
		assert.NotContains(t, out, jargon, "plain words only")
	}
}

// The demo prints what the sidecar answers (labels, patches, guidance)
// through textsafe.Line: a reply holding escapes or a bidi override does
// not reach the terminal raw (issue 51, "Safe text").
func TestDemoPrintsSafeText(t *testing.T) {
	var out bytes.Buffer
	d := &demoRun{w: &out}
	d.title("label %s", "\x1b]52;c;aGk=\a\u202eevil")
	d.say("%s", "a\x1b[2Jb")
	d.block("one\x1b[31m\nt\u200bwo\n")
	assert.Equal(t, "\n1. label evil\n   ab\n   | one\n   | two\n", out.String())
}
