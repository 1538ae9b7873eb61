package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The example call the model is told to make delegates to an agent: one
// the error lists when it lists agents, never an item of another list the
// error names (skills, categories, modes), which is no agent.
func TestGuidanceExampleDelegatesToAnAgent(t *testing.T) {
	subagents := RetryOptions{Subagents: []string{"fixer", "oracle"}}
	tests := []struct {
		name   string
		output string
		opts   RetryOptions
		agent  string // the example's subagent_type
	}{
		{"skills listed: a configured subagent", "[ERROR] Skills not found: playwrite. Available skills: playwright, git-master", subagents, "fixer"},
		{"skills listed, no subagents: explorer", "[ERROR] Skills not found: playwrite. Available skills: playwright, git-master", RetryOptions{}, "explorer"},
		{"modes listed with a missing argument", "[ERROR] run_in_background is required. Available modes: sync, async", subagents, "fixer"},
		{"depth limit with a list of anything", "[ERROR] depth limit reached. Available: planning, review", RetryOptions{}, "explorer"},
		{"agents listed: the first of them", "[ERROR] Unknown agent: foo. Available agents: librarian, oracle", subagents, "librarian"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DetectTaskError(tt.output, false, tt.opts)
			require.NotNil(t, d)
			_, example, ok := strings.Cut(d.Guidance, "\nExample: ")
			require.True(t, ok, d.Guidance)
			assert.Contains(t, example, `subagent_type="`+tt.agent+`"`, d.Guidance)
		})
	}
}
