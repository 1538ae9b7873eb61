package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDetectTaskErrorTable(t *testing.T) {
	tests := []struct {
		name     string
		output   string
		wantType string
		flavor   Flavor
	}{
		{"missing run_in_background", "[ERROR] Invalid arguments: run_in_background is required", "missing_run_in_background", FlavorDelegate},
		{"missing load_skills", "[ERROR] Invalid arguments: load_skills is required", "missing_load_skills", FlavorDelegate},
		{"mutual exclusion", "[ERROR] Provide category OR subagent_type, not both", "mutual_exclusion", FlavorDelegate},
		{"missing category or agent", "[ERROR] Must provide either category or subagent_type", "missing_category_or_agent", FlavorDelegate},
		{"unknown category", "[ERROR] Unknown category: fast. Available categories: quick, deep", "unknown_category", FlavorDelegate},
		{"empty agent", "[ERROR] Agent name cannot be empty", "empty_agent", FlavorDelegate},
		{"unknown agent type is native", "[ERROR] Unknown agent type: foo", "unknown_agent", FlavorNative},
		{"unknown agent is delegate", "[ERROR] Unknown agent: foo", "unknown_agent", FlavorDelegate},
		{"primary agent", "[ERROR] Cannot call primary agent orchestrator", "primary_agent", FlavorDelegate},
		{"unknown skills", "[ERROR] Skills not found: foo", "unknown_skills", FlavorDelegate},
		{"background agent not allowed", `Agent "oracle" is not allowed. Allowed agents: explorer, librarian`, "background_agent_not_allowed", FlavorDelegate},
		{"invalid task id", `[ERROR] Expected a string starting with "ses", got "exp-1"`, "invalid_task_id", FlavorNative},
		{"depth limit", "[ERROR] Delegation depth limit reached (3)", "depth_limit", FlavorNative},
		{"earlier row wins", "[ERROR] Unknown agent: x; also run_in_background missing", "missing_run_in_background", FlavorDelegate},
	}
	for _, tt := range tests {
		for _, failed := range []bool{false, true} {
			name := tt.name + "/after"
			if failed {
				name = tt.name + "/failed"
			}
			t.Run(name, func(t *testing.T) {
				d := DetectTaskError(tt.output, failed, RetryOptions{})
				require.NotNil(t, d)
				assert.Equal(t, tt.wantType, d.ErrorType)
				assert.NotEmpty(t, d.FixHint)
				assert.True(t, strings.HasPrefix(d.Guidance, GuidanceHeader+"\n"), d.Guidance)
				assert.Contains(t, d.Guidance, "\nError type: "+tt.wantType+"\n")
				assert.Contains(t, d.Guidance, "\nFix: "+d.FixHint+"\n")
				example := exampleLine(t, d.Guidance)
				if tt.flavor == FlavorNative {
					assertNativeExample(t, example)
					assert.NotContains(t, d.Guidance, "run_in_background")
					assert.NotContains(t, d.Guidance, "load_skills")
					assert.NotContains(t, d.Guidance, "category")
				} else {
					assert.Contains(t, example, "run_in_background=false")
					assert.Contains(t, example, "load_skills=[]")
				}
			})
		}
	}
}

func exampleLine(t *testing.T, guidance string) string {
	t.Helper()
	lines := strings.Split(guidance, "\n")
	last := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(last, "Example: task("), "last line %q", last)
	return strings.TrimPrefix(last, "Example: ")
}

func assertNativeExample(t *testing.T, example string) {
	t.Helper()
	assert.Regexp(t, `^task\(description="[^"]+", prompt="[^"]+", subagent_type="[^"]+"\)$`, example)
}

func TestDetectTaskErrorSignals(t *testing.T) {
	tests := []struct {
		name     string
		output   string
		failed   bool
		wantType string // "" means nil
	}{
		{"no signal after", "Unknown agent: foo", false, ""},
		{"no signal failed", "Unknown agent: foo", true, "unknown_agent"},
		{"success text quoting a pattern", "<task id=\"ses_1\">I set run_in_background</task>", false, ""},
		{"ERROR signal", "[ERROR] Unknown agent: foo", false, "unknown_agent"},
		{"Invalid arguments signal", "Invalid arguments: load_skills must be an array", false, "missing_load_skills"},
		{"allowed agents is its own signal", "explorer is not allowed. Allowed agents: oracle", false, "background_agent_not_allowed"},
		{"signal is case-sensitive", "[error] Unknown agent: foo", false, ""},
		{"signal but no row", "[ERROR] something else broke", false, ""},
		{"failed but no row", "Tool execution aborted", true, ""},
		{"empty output failed", "", true, ""},
		{"opencode native unknown agent", "Unknown agent type: foo is not a valid agent type", true, "unknown_agent"},
		{"opencode native bad task id", `Expected a string starting with "ses", got "exp-1"`, true, "invalid_task_id"},
		{"opencode native bad task id without signal", `Expected a string starting with "ses", got "exp-1"`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DetectTaskError(tt.output, tt.failed, RetryOptions{})
			if tt.wantType == "" {
				assert.Nil(t, d)
				return
			}
			require.NotNil(t, d)
			assert.Equal(t, tt.wantType, d.ErrorType)
		})
	}
}

func TestDetectTaskErrorOpenCodeNative(t *testing.T) {
	opts := RetryOptions{Subagents: []string{"explorer", "oracle"}}

	d := DetectTaskError("Unknown agent type: nonexistent is not a valid agent type", true, opts)
	require.NotNil(t, d)
	assert.Equal(t, "explorer, oracle", d.Available)
	assert.Equal(t, GuidanceHeader+"\n"+
		"Error type: unknown_agent\n"+
		"Fix: "+d.FixHint+"\n"+
		"Available: explorer, oracle\n"+
		`Example: task(description="Short summary of the task", prompt="Complete, self-contained instructions for the subagent", subagent_type="explorer")`,
		d.Guidance)

	d = DetectTaskError(`Expected a string starting with "ses", got "exp-1"`, true, opts)
	require.NotNil(t, d)
	assert.Equal(t, "invalid_task_id", d.ErrorType)
	assert.Empty(t, d.Available, "subagents fill only agent errors")
	assert.NotContains(t, d.Guidance, "\nAvailable:")
	assert.Contains(t, d.Guidance, "\nTask id: task_id must be a real session id starting with \"ses\"")
	assert.Contains(t, d.Guidance, `<task id="ses_...">`)
	assert.Contains(t, d.Guidance, "Omit task_id to start fresh.")
	assert.NotContains(t, d.Guidance, "run_in_background")
	assert.NotContains(t, d.Guidance, "load_skills")
	assert.NotContains(t, d.Guidance, "category")
	assertNativeExample(t, exampleLine(t, d.Guidance))
	assert.Contains(t, d.Guidance, `subagent_type="explorer"`)
}

func TestDetectTaskErrorAvailable(t *testing.T) {
	subagents := RetryOptions{Subagents: []string{"fixer", "oracle"}}
	tests := []struct {
		name          string
		output        string
		opts          RetryOptions
		wantType      string
		wantAvailable string
		wantExample   string // a substring of the Example line
	}{
		{"allowed agents", `[ERROR] Agent "oracle" is not allowed. Allowed agents: explorer, librarian`, subagents,
			"background_agent_not_allowed", "explorer, librarian", `subagent_type="explorer"`},
		{"allowed agents beats an earlier available label", "[ERROR] Available modes: a\nfoo is not allowed. Allowed agents: x, y", RetryOptions{},
			"background_agent_not_allowed", "x, y", `subagent_type="x"`},
		{"available label", "[ERROR] Unknown agent: foo. Available agents: explorer, oracle\nmore text", subagents,
			"unknown_agent", "explorer, oracle", `subagent_type="explorer"`},
		{"available label crosses a line break", "[ERROR] Unknown agent: foo\nAvailable\nagents: a, b", RetryOptions{},
			"unknown_agent", "a, b", `subagent_type="a"`},
		{"value on the next line", "[ERROR] Unknown agent: foo. Available agents:\n  a, b  \nmore", RetryOptions{},
			"unknown_agent", "a, b", `subagent_type="a"`},
		{"only the first line of the value", "[ERROR] Unknown agent: foo. Available agents: a, b\nc, d", RetryOptions{},
			"unknown_agent", "a, b", `subagent_type="a"`},
		{"first available label wins", "[ERROR] Unknown agent. Available agents: a\nAvailable categories: q", RetryOptions{},
			"unknown_agent", "a", `subagent_type="a"`},
		{"quoted names in the example", "[ERROR] Unknown agent: foo. Available agents: \"oracle\", \"fixer\"", RetryOptions{},
			"unknown_agent", `"oracle", "fixer"`, `subagent_type="oracle"`},
		{"crlf trimmed", "[ERROR] Unknown agent: foo. Available agents: a, b\r\n", RetryOptions{},
			"unknown_agent", "a, b", `subagent_type="a"`},
		{"subagents for unknown_agent", "[ERROR] Unknown agent: foo", subagents,
			"unknown_agent", "fixer, oracle", `subagent_type="fixer"`},
		{"subagents for empty_agent", "[ERROR] Agent name cannot be empty", subagents,
			"empty_agent", "fixer, oracle", `subagent_type="fixer"`},
		{"subagents for primary_agent", "[ERROR] Cannot call primary agent orchestrator", subagents,
			"primary_agent", "fixer, oracle", `subagent_type="fixer"`},
		{"subagents for background_agent_not_allowed", "foo is not allowed. Allowed agents:", subagents,
			"background_agent_not_allowed", "fixer, oracle", `subagent_type="fixer"`},
		{"no subagents for unknown_category", "[ERROR] Unknown category: fast", subagents,
			"unknown_category", "", `category="<category>"`},
		{"no subagents for missing_load_skills", "[ERROR] load_skills is required", subagents,
			"missing_load_skills", "", `subagent_type="fixer"`},
		{"no subagents for depth_limit", "[ERROR] depth limit reached", subagents,
			"depth_limit", "", `subagent_type="fixer"`},
		{"blank subagents ignored", "[ERROR] Unknown agent: foo", RetryOptions{Subagents: []string{" ", ""}},
			"unknown_agent", "", `subagent_type="explorer"`},
		{"nothing known", "[ERROR] Unknown agent: foo", RetryOptions{},
			"unknown_agent", "", `subagent_type="explorer"`},
		{"unknown category uses the first listed category", "[ERROR] Unknown category: fast. Available categories: quick, deep", subagents,
			"unknown_category", "quick, deep", `category="quick"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DetectTaskError(tt.output, false, tt.opts)
			require.NotNil(t, d)
			assert.Equal(t, tt.wantType, d.ErrorType)
			assert.Equal(t, tt.wantAvailable, d.Available)
			if tt.wantAvailable == "" {
				assert.NotContains(t, d.Guidance, "\nAvailable:")
			} else {
				assert.Contains(t, d.Guidance, "\nAvailable: "+tt.wantAvailable+"\n")
			}
			assert.Contains(t, exampleLine(t, d.Guidance), tt.wantExample)
		})
	}
}

func TestDetectTaskErrorExtraPatterns(t *testing.T) {
	extra := []RetryPattern{
		{Pattern: "", ErrorType: "matches_everything", FixHint: "never"},
		{Pattern: "quota exceeded", ErrorType: "quota", FixHint: "Wait a minute, then retry."},
		{Pattern: "Unknown agent", ErrorType: "shadowed", FixHint: "never used: a built-in row matches first"},
		{Pattern: "no such model", ErrorType: "bad_model", Flavor: FlavorNative},
		{Pattern: "agent gone", ErrorType: "unknown_agent", FixHint: "Pick another agent."},
	}
	opts := RetryOptions{Extra: extra, Subagents: []string{"oracle"}}
	tests := []struct {
		name     string
		output   string
		wantType string
		wantHint string
		native   bool
		wantAvl  string
	}{
		{"extra row with empty flavor is delegate", "[ERROR] quota exceeded", "quota", "Wait a minute, then retry.", false, ""},
		{"built-in rows come first", "[ERROR] Unknown agent: x", "unknown_agent", "", false, "oracle"},
		{"native extra row and generic hint", "[ERROR] no such model", "bad_model", genericFixHint, true, ""},
		{"extra agent error gets subagents", "[ERROR] agent gone", "unknown_agent", "Pick another agent.", false, "oracle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DetectTaskError(tt.output, false, opts)
			require.NotNil(t, d)
			assert.Equal(t, tt.wantType, d.ErrorType)
			if tt.wantHint != "" {
				assert.Equal(t, tt.wantHint, d.FixHint)
			}
			assert.Equal(t, tt.wantAvl, d.Available)
			example := exampleLine(t, d.Guidance)
			if tt.native {
				assertNativeExample(t, example)
			} else {
				assert.Contains(t, example, "run_in_background=false, load_skills=[])")
			}
		})
	}
	t.Run("empty pattern never matches", func(t *testing.T) {
		assert.Nil(t, DetectTaskError("[ERROR] anything", false, opts))
	})
}

func TestDetectTaskErrorDeterministic(t *testing.T) {
	opts := RetryOptions{Subagents: []string{"explorer", "oracle"}}
	out := "[ERROR] Unknown agent: foo"
	first := DetectTaskError(out, false, opts)
	for range 5 {
		assert.Equal(t, first, DetectTaskError(out, false, opts))
	}
	assert.Equal(t, first, DetectTaskError(out, true, opts), "failed only relaxes the signal rule")
}

func TestDelegateGuidanceExact(t *testing.T) {
	d := DetectTaskError("[ERROR] Invalid arguments: run_in_background is required", false, RetryOptions{})
	require.NotNil(t, d)
	assert.Equal(t, GuidanceHeader+"\n"+
		"Error type: missing_run_in_background\n"+
		"Fix: Add run_in_background=false to wait for the result (true only for work you will collect later).\n"+
		`Example: task(description="Short summary of the task", prompt="Complete, self-contained instructions for the subagent", subagent_type="explorer", run_in_background=false, load_skills=[])`,
		d.Guidance)
}

func TestWithGuidance(t *testing.T) {
	d := &DetectedError{Guidance: "G1\nG2"}
	assert.Equal(t, "old\nG1\nG2", WithGuidance("old", d))
	assert.Equal(t, "\nG1\nG2", WithGuidance("", d))
}

// builtinRetryPatterns returns a copy of the built-in error table, in the
// order it is tried.
func builtinRetryPatterns() []RetryPattern {
	return append([]RetryPattern(nil), builtinPatterns...)
}

func TestBuiltinRetryPatternsIsACopy(t *testing.T) {
	p := builtinRetryPatterns()
	require.Len(t, p, 13)
	assert.Equal(t, "Unknown agent type", p[6].Pattern)
	assert.Equal(t, "Unknown agent", p[7].Pattern)
	p[0].Pattern = "changed"
	assert.Equal(t, "run_in_background", builtinRetryPatterns()[0].Pattern)
}
