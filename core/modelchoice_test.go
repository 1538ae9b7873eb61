package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestChooseModel(t *testing.T) {
	reach := Reach{Connected: []string{"fake"}, Available: []string{"fake/a", "fake/b", "fake/c"}, Default: "fake/a"}
	tests := []struct {
		name             string
		entry            AgentChoice
		reach            Reach
		current, variant string
		want             ModelChoice
	}{
		{"the message's model is available: kept", AgentChoice{}, reach, "fake/b", "high",
			ModelChoice{Model: "fake/b", Variant: "high", Rung: RungCategoryDefault}},
		{"an override: another model, the variant dropped", AgentChoice{Model: "fake/c"}, reach, "fake/b", "high",
			ModelChoice{Model: "fake/c", Rung: RungUser, Changed: true}},
		{"an override with its own variant", AgentChoice{Model: "fake/c max"}, reach, "fake/b", "high",
			ModelChoice{Model: "fake/c", Variant: "max", Rung: RungUser, Changed: true}},
		{"the message's model gone: the fallback", AgentChoice{FallbackModels: []string{"fake/c"}}, reach, "other/x", "",
			ModelChoice{Model: "fake/c", Rung: RungUserFallback, Changed: true}},
		{"no model on the message: the default", AgentChoice{}, reach, "", "",
			ModelChoice{Model: "fake/a", Rung: RungSystemDefault, Changed: true}},
		{"a bare default OpenCode cannot take: the message's model stays", AgentChoice{},
			Reach{Available: []string{}, Default: "bare"}, "", "v", ModelChoice{Variant: "v", Rung: RungSystemDefault}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ChooseModel(tt.entry, tt.reach, tt.current, tt.variant))
		})
	}
}

func TestFallbackModel(t *testing.T) {
	reach := Reach{Connected: []string{"fake"}, Available: []string{"fake/a", "fake/b", "fake/c"}}
	coolingB := func(m string) bool { return m == "fake/b" }
	none := func(string) bool { return false }
	tests := []struct {
		name    string
		entry   *AgentChoice
		failed  string
		parent  string
		cooling func(string) bool
		want    ModelRef
		rung    string
		ok      bool
	}{
		{"the entry's fallback", &AgentChoice{FallbackModels: []string{"fake/c"}}, "fake/a", "", none,
			ModelRef{ProviderID: "fake", ModelID: "c"}, RungUserFallback, true},
		{"a cooling fallback is passed over", &AgentChoice{FallbackModels: []string{"fake/b", "fake/c high"}}, "fake/a", "", coolingB,
			ModelRef{ProviderID: "fake", ModelID: "c", Variant: "high"}, RungUserFallback, true},
		{"the failed override is left out", &AgentChoice{Model: "fake/a", FallbackModels: []string{"fake/c"}}, "fake/a", "", none,
			ModelRef{ProviderID: "fake", ModelID: "c"}, RungUserFallback, true},
		{"no entry: the parent's model", nil, "fake/a", "fake/c", none, ModelRef{ProviderID: "fake", ModelID: "c"}, RungParentModel, true},
		{"the parent's model cools down too", nil, "fake/a", "fake/b", coolingB, ModelRef{}, "", false},
		{"the parent runs the failed model", nil, "fake/a", "fake/a", none, ModelRef{}, "", false},
		{"nothing known", nil, "fake/a", "", none, ModelRef{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rung, ok := FallbackModel(tt.entry, reach, tt.failed, tt.parent, tt.cooling)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.rung, rung)
		})
	}
}

func TestModelBase(t *testing.T) {
	for _, tt := range []struct {
		entry, want string
		ok          bool
	}{
		{"openai/gpt-5.4 high", "openai/gpt-5.4", true},
		{" openai/gpt-5.4 (high) ", "openai/gpt-5.4", true},
		{"gpt-5.4", "", false},
		{" /x", "", false},
		{"p/ (high)", "", false},
	} {
		got, ok := ModelBase(tt.entry)
		assert.Equal(t, tt.ok, ok, tt.entry)
		assert.Equal(t, tt.want, got, tt.entry)
	}
}
