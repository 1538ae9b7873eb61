package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestResumableSessionsBlock(t *testing.T) {
	header := ResumableSessionsHeading + "\n" + resumeAdvice + "\n\n"
	tests := []struct {
		name   string
		agents []BlockAgent
		want   string
	}{
		{"nil", nil, ""},
		{"agents without entries", []BlockAgent{{Agent: "explorer"}, {Agent: "oracle", Entries: []BlockEntry{}}}, ""},
		{"one entry", []BlockAgent{{Agent: "oracle", Entries: []BlockEntry{{"ora-1", "Review the plan"}}}},
			header + "- oracle: ora-1 Review the plan"},
		{"order kept as given", []BlockAgent{
			{Agent: "explorer", Entries: []BlockEntry{{"exp-2", "Find the loader"}, {"exp-1", "List files"}}},
			{Agent: "oracle", Entries: []BlockEntry{{"ora-1", "Review the plan"}}},
		}, header + "- explorer: exp-2 Find the loader; exp-1 List files\n- oracle: ora-1 Review the plan"},
		{"empty agent skipped among others", []BlockAgent{
			{Agent: "fixer"},
			{Agent: "code reviewer", Entries: []BlockEntry{{"code-reviewer-1", "Check diff"}}},
		}, header + "- code reviewer: code-reviewer-1 Check diff"},
		{"entry without label", []BlockAgent{{Agent: "oracle", Entries: []BlockEntry{{"ora-3", ""}, {"ora-2", "x"}}}},
			header + "- oracle: ora-3; ora-2 x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ResumableSessionsBlock(tt.agents))
		})
	}
}

func TestResumableSessionsBlockShape(t *testing.T) {
	got := ResumableSessionsBlock([]BlockAgent{{Agent: "explorer", Entries: []BlockEntry{{"exp-1", "a"}}}})
	assert.Equal(t, "### Resumable Sessions\n"+
		"Pass an alias below as task_id only to continue that same thread of work; for anything new, leave task_id out to start a fresh task.\n"+
		"\n"+
		"- explorer: exp-1 a", got)
}
