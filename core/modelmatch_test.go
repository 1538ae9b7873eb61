package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSplitVariant(t *testing.T) {
	tests := []struct {
		name, in, id, variant string
	}{
		{"space known variant", "gpt-5.4 high", "gpt-5.4", "high"},
		{"parenthesised", "gpt-5.4(high)", "gpt-5.4", "high"},
		{"parenthesised with spaces", "  gpt-5.4 ( high )  ", "gpt-5.4", "high"},
		{"parenthesised any words kept as written", "gpt-5.4 (x y)", "gpt-5.4", "x y"},
		{"parenthesised keeps case", "gpt-5.4(Fast)", "gpt-5.4", "Fast"},
		{"parenthesised blank is no variant", "gpt-5.4( )", "gpt-5.4", ""},
		{"parenthesised empty is no variant", "gpt-5.4()", "gpt-5.4", ""},
		{"nested parenthesis is not a variant", "gpt-5.4(a(b))", "gpt-5.4(a(b))", ""},
		{"parenthesis not at the end", "gpt(high)-5", "gpt(high)-5", ""},
		{"only a parenthesised variant leaves an empty id", "(high)", "", "high"},
		{"space variant lower-cased", "gpt-5.4 HIGH", "gpt-5.4", "high"},
		{"every known variant: xhigh", "m xhigh", "m", "xhigh"},
		{"every known variant: thinking", "m Thinking", "m", "thinking"},
		{"every known variant: none", "m none", "m", "none"},
		{"unknown last word is not a variant", "gpt-5.4 turbo", "gpt-5.4 turbo", ""},
		{"last word of wrong shape is not a variant", "gpt-5.4 -high", "gpt-5.4 -high", ""},
		{"single known word is an id", "high", "high", ""},
		{"tab separates the variant", "gpt-5.4\tmax", "gpt-5.4", "max"},
		{"several spaces before variant", "gpt-5.4   low", "gpt-5.4", "low"},
		{"suffix without space is part of the id", "gpt-5.4-high", "gpt-5.4-high", ""},
		{"blank", "   ", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, variant := splitVariant(tt.in)
			assert.Equal(t, tt.id, id)
			assert.Equal(t, tt.variant, variant)
		})
	}
}

func TestParseProviderModel(t *testing.T) {
	tests := []struct {
		name, in                 string
		provider, model, variant string
		ok                       bool
	}{
		{"plain", "openai/gpt-5.4", "openai", "gpt-5.4", "", true},
		{"trimmed parts", "  openai / gpt-5.4  ", "openai", "gpt-5.4", "", true},
		{"variant split off the model", "openai/gpt-5.4 high", "openai", "gpt-5.4", "high", true},
		{"parenthesised variant", "openai/gpt-5.4(xhigh)", "openai", "gpt-5.4", "xhigh", true},
		{"rest after first slash is the model", "vercel/openai/gpt-5.6-sol", "vercel", "openai/gpt-5.6-sol", "", true},
		{"no slash", "gpt-5.4", "", "", "", false},
		{"blank provider", " /gpt-5.4", "", "", "", false},
		{"blank model", "openai/  ", "", "", "", false},
		{"model empty once the variant is gone", "openai/(high)", "", "", "", false},
		{"blank", "", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			provider, model, variant, ok := parseProviderModel(tt.in)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.provider, provider)
			assert.Equal(t, tt.model, model)
			assert.Equal(t, tt.variant, variant)
		})
	}
}

func TestParseModelEntry(t *testing.T) {
	tests := []struct {
		name, in string
		want     modelEntry
		hint     []string
		ok       bool
	}{
		{"provider/model with variant", "openai/gpt-5.4 high", modelEntry{base: "openai/gpt-5.4", provider: "openai", variant: "high"}, []string{"openai"}, true},
		{"provider/model normalised", " openai / gpt-5.4 ", modelEntry{base: "openai/gpt-5.4", provider: "openai"}, []string{"openai"}, true},
		{"bare id with variant", "gpt-5.4(max)", modelEntry{base: "gpt-5.4", variant: "max"}, nil, true},
		{"bare id", "gpt-5.4", modelEntry{base: "gpt-5.4"}, nil, true},
		{"blank provider falls back to the whole entry", "/gpt-5.4 low", modelEntry{base: "/gpt-5.4", variant: "low"}, nil, true},
		{"only a variant is unusable", "(high)", modelEntry{}, nil, false},
		{"blank is unusable", " \t", modelEntry{}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseModelEntry(tt.in)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.hint, got.providerHint())
		})
	}
}

func TestCanonicalModel(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"claude dash to dot", "claude-opus-4-6", "claude-opus-4.6"},
		{"claude dot kept", "claude-opus-4.6", "claude-opus-4.6"},
		{"claude sonnet and provider", "Anthropic/Claude-Sonnet-4-5", "anthropic/claude-sonnet-4.5"},
		{"claude haiku with suffix", "claude-haiku-4-5-unavailable", "claude-haiku-4.5-unavailable"},
		{"claude other name untouched", "claude-instant-1-2", "claude-instant-1-2"},
		{"kimi", "kimi-k2-5", "kimi-k2.5"},
		{"kimi dot kept", "moonshotai/kimi-k2.5", "moonshotai/kimi-k2.5"},
		{"glm", "zai/glm-4-6", "zai/glm-4.6"},
		{"gpt", "gpt-5-4", "gpt-5.4"},
		{"gpt after slash is a word start", "openai/gpt-5-4-mini", "openai/gpt-5.4-mini"},
		{"gpt after dash is a word start", "my-gpt-5-4", "my-gpt-5.4"},
		{"gpt inside a word untouched", "chatgpt-5-4", "chatgpt-5-4"},
		{"glm inside a word untouched", "xglm-4-6", "xglm-4-6"},
		{"gpt multi-digit", "GPT-10-12", "gpt-10.12"},
		{"nothing to rewrite", "gemini-3-flash", "gemini-3-flash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, canonicalModel(tt.in))
		})
	}
	assert.Equal(t, canonicalModel("claude-opus-4-6"), canonicalModel("claude-opus-4.6"), "both spellings share a form")
}

func TestFuzzyMatchModel(t *testing.T) {
	tests := []struct {
		name      string
		target    string
		available []string
		providers []string
		want      string
	}{
		{"nothing available", "gpt-5.4", nil, nil, ""},
		{"no candidate contains the target", "gpt-5.4", []string{"openai/gpt-4o"}, nil, ""},
		{"exact wins over shorter containing", "openai/gpt-5", []string{"a/openai/gpt-5-mini", "openai/gpt-5"}, nil, "openai/gpt-5"},
		{"exact is canonical", "anthropic/claude-opus-4-6", []string{"anthropic/claude-opus-4.6-fast", "anthropic/claude-opus-4.6"}, nil, "anthropic/claude-opus-4.6"},
		{"exact is case-insensitive", "OpenAI/GPT-5.4", []string{"openai/gpt-5.4"}, nil, "openai/gpt-5.4"},
		{"first exact on duplicates", "gpt-5.4", []string{"x/gpt-5.4-mini", "gpt-5.4", "GPT-5.4"}, nil, "gpt-5.4"},
		{"exact beats an earlier model id equal", "gpt-5.4", []string{"openai/gpt-5.4", "gpt-5.4"}, nil, "gpt-5.4"},
		{"exact with provider beats a gateway copy", "openai/gpt-5.4", []string{"x/openai/gpt-5.4", "openai/gpt-5.4"}, nil, "openai/gpt-5.4"},
		{"model id equal beats a shorter containing one", "gpt-5.4", []string{"zz/gpt-5.4x", "longprovider/gpt-5.4"}, nil, "longprovider/gpt-5.4"},
		{"shortest model id equal", "gpt-5.4", []string{"longprovider/gpt-5.4", "short/gpt-5.4"}, nil, "short/gpt-5.4"},
		{"model id equal ties go to the earlier", "gpt-5.4", []string{"bbb/gpt-5.4", "aaa/gpt-5.4"}, nil, "bbb/gpt-5.4"},
		{"model id is everything after the first slash", "openai/gpt-5.6-sol", []string{"vercel/openai/gpt-5.6-sol-preview", "vercel/openai/gpt-5.6-sol"}, nil, "vercel/openai/gpt-5.6-sol"},
		{"shortest containing", "gpt-5.4", []string{"openai/gpt-5.4-preview", "openai/gpt-5.4-pro"}, nil, "openai/gpt-5.4-pro"},
		{"shortest ties go to the earlier", "gpt-5.4", []string{"openai/gpt-5.4-bbb", "openai/gpt-5.4-aaa"}, nil, "openai/gpt-5.4-bbb"},
		{"canonical containment", "claude-haiku-4-5", []string{"anthropic/claude-haiku-4.5-20251001"}, nil, "anthropic/claude-haiku-4.5-20251001"},
		{"provider filter keeps only that provider", "gpt-5.4", []string{"openai/gpt-5.4", "azure/gpt-5.4"}, []string{"azure"}, "azure/gpt-5.4"},
		{"provider filter uses the first segment", "gpt-5.6-sol", []string{"openai/gpt-5.6-sol", "vercel/openai/gpt-5.6-sol"}, []string{"openai"}, "openai/gpt-5.6-sol"},
		{"provider filter leaves nothing", "gpt-5.4", []string{"openai/gpt-5.4"}, []string{"anthropic"}, ""},
		{"provider filter drops ids without provider", "gpt-5.4", []string{"gpt-5.4"}, []string{"gpt-5.4"}, ""},
		{"empty provider list is no filter", "gpt-5.4", []string{"openai/gpt-5.4"}, []string{}, "openai/gpt-5.4"},
		{"blank target matches nothing", " ", []string{"openai/gpt-5.4"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, fuzzyMatchModel(tt.target, tt.available, tt.providers))
		})
	}
}

func TestShapeModelForProvider(t *testing.T) {
	tests := []struct{ name, provider, model, want string }{
		{"vercel keeps sub-provider", "vercel", "openai/gpt-5.6-sol", "openai/gpt-5.6-sol"},
		{"vercel rewrites after sub-provider", "vercel", "anthropic/claude-opus-4-6", "anthropic/claude-opus-4.6"},
		{"vercel infers anthropic", "vercel", "claude-sonnet-4-5", "anthropic/claude-sonnet-4.5"},
		{"vercel infers openai", "vercel", "gpt-5.6-sol", "openai/gpt-5.6-sol"},
		{"vercel infers google and previews 3.1 pro", "vercel", "gemini-3.1-pro", "google/gemini-3.1-pro-preview"},
		{"vercel leaves gemini-3-flash", "vercel", "gemini-3-flash", "google/gemini-3-flash"},
		{"vercel infers xai", "vercel", "grok-4", "xai/grok-4"},
		{"vercel infers minimax", "vercel", "minimax-m2", "minimax/minimax-m2"},
		{"vercel infers moonshotai", "vercel", "kimi-k2-5", "moonshotai/kimi-k2-5"},
		{"vercel infers zai", "vercel", "glm-4-6", "zai/glm-4-6"},
		{"vercel claude rewrite keeps trailing text", "vercel", "claude-opus-4-6x", "anthropic/claude-opus-4.6x"},
		{"vercel unknown prefix unchanged", "vercel", "llama-4-1", "llama-4-1"},
		{"vercel prefix is case-sensitive", "vercel", "Claude-opus-4-6", "Claude-opus-4-6"},
		{"vercel claude rewrite every occurrence", "vercel", "x/claude-a-1-2+claude-b-3-4", "x/claude-a-1.2+claude-b-3.4"},
		{"copilot claude", "github-copilot", "claude-opus-4-6", "claude-opus-4.6"},
		{"copilot gemini 3.1 pro", "github-copilot", "gemini-3.1-pro", "gemini-3.1-pro-preview"},
		{"copilot gemini 3.1 pro preview not rewritten again", "github-copilot", "gemini-3.1-pro-preview", "gemini-3.1-pro-preview"},
		{"copilot gemini 3 flash", "github-copilot", "gemini-3-flash", "gemini-3-flash-preview"},
		{"copilot gemini 3 flash followed by dash", "github-copilot", "gemini-3-flash-lite", "gemini-3-flash-lite"},
		{"copilot antigravity untouched", "github-copilot", "antigravity-gemini-3-flash", "antigravity-gemini-3-flash"},
		{"copilot gpt unchanged", "github-copilot", "gpt-5.6-sol", "gpt-5.6-sol"},
		{"google both gemini rewrites", "google", "gemini-3.1-pro|gemini-3-flash", "gemini-3.1-pro-preview|gemini-3-flash-preview"},
		{"google 3.1 pro preview not rewritten again", "google", "gemini-3.1-pro-preview", "gemini-3.1-pro-preview"},
		{"google antigravity untouched", "google", "antigravity-gemini-3-flash", "antigravity-gemini-3-flash"},
		{"google rewrites the plain one beside antigravity", "google", "antigravity-gemini-3-flash gemini-3-flash", "antigravity-gemini-3-flash gemini-3-flash-preview"},
		{"google leaves claude", "google", "claude-opus-4-6", "claude-opus-4-6"},
		{"other provider unchanged", "openai", "claude-opus-4-6 gemini-3.1-pro", "claude-opus-4-6 gemini-3.1-pro"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, shapeModelForProvider(tt.provider, tt.model))
		})
	}
}

func TestExplicitHighBase(t *testing.T) {
	tests := []struct {
		name, in, base string
		ok             bool
	}{
		{"provider model", "openai/gpt-5.4-high", "openai/gpt-5.4", true},
		{"bare", "gpt-5.4-high", "gpt-5.4", true},
		{"nested path", "vercel/openai/gpt-5.4-high", "vercel/openai/gpt-5.4", true},
		{"not at the end", "openai/gpt-5.4-high-fast", "", false},
		{"xhigh is not -high", "openai/gpt-5.4-xhigh", "", false},
		{"only in an earlier segment", "x-high/gpt-5.4", "", false},
		{"segment is just -high", "openai/-high", "", false},
		{"case-sensitive", "openai/gpt-5.4-HIGH", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, ok := explicitHighBase(tt.in)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.base, base)
		})
	}
}
