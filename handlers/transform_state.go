package handlers

import (
	"github.com/hookwire/hookwire/config"
	"github.com/hookwire/hookwire/incremental"
)

// transformState is the transforms' part of the server: what
// chat.messages.transform keeps between requests beside the store (the
// bases of incremental requests, PROTOCOL.md 4.6; the sessions' ids
// interned for the bases' messages; the guidance worked out per error
// text, 4.1) and the work on a history that reads the config and the
// store (chat_messages_transform.go, task_runs.go; the prompt notes of
// both transforms). What it keeps follows from the requests and the config
// alone, so a config change drops what was derived (configChanged) and
// initialize starts it over (reset). Dispatch serialises all access.
type transformState struct {
	cfg   *config.Config
	store Store // set by initialize

	// bases is created by the first transform (histories).
	bases *histories
	// names interns the messages' session ids (local.session).
	names map[string]string
	// guided remembers guidance per task error text (guidedError).
	guided map[string]guidedError
}

// histories returns the bases, created with the default bound on first use.
func (t *transformState) histories() *histories {
	if t.bases == nil {
		t.bases = incremental.NewStore[local, derived](incremental.DefaultMaxBytes)
	}
	return t.bases
}

// maxInternedNames bounds transformState.names; past it, it starts over.
const maxInternedNames = 1024

// intern returns name, the same string each time it is given.
func (t *transformState) intern(name string) string {
	if n, ok := t.names[name]; ok {
		return n
	}
	if t.names == nil || len(t.names) >= maxInternedNames {
		t.names = map[string]string{}
	}
	t.names[name] = name
	return name
}

// Bounds of the guidance remembered per error text: at most this many
// texts, each at most this long (a longer one is worked out each time).
const (
	maxGuidedErrors   = 512
	maxGuidedErrorLen = 4 << 10
)

type guidedError struct {
	text string
	ok   bool
}

// guidanceFor returns the guidance remembered for key, working it out
// with work when there is none, and remembering it then when text (the
// error text key is made of) is within maxGuidedErrorLen.
func (t *transformState) guidanceFor(key, text string, work func() guidedError) guidedError {
	if g, ok := t.guided[key]; ok {
		return g
	}
	g := work()
	if len(text) <= maxGuidedErrorLen {
		if t.guided == nil || len(t.guided) >= maxGuidedErrors {
			t.guided = map[string]guidedError{}
		}
		t.guided[key] = g
	}
	return g
}

// configChanged drops what was worked out under the config before: the
// guidance remembered per error text, and what the bases' messages
// derived (agents.update changes the subagents guidance lists).
func (t *transformState) configChanged() {
	t.guided = nil
	if t.bases != nil {
		t.bases.ConfigChanged()
	}
}

// reset forgets everything (initialize: a new config and store).
func (t *transformState) reset() { t.guided, t.bases = nil, nil }
