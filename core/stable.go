package core

// StableRule is prompt-cache-stable mode (PROTOCOL.md 4.4): each user
// message of a managed agent carries the Resumable Sessions block frozen
// for it when it was first seen, and each user message of a reminder agent
// the reminder (block first), so that no earlier message ever changes and
// a provider's prompt cache keeps every prefix.
type StableRule struct {
	// Blocks is config.taskSessions.enabled: without it no block is
	// frozen or added.
	Blocks bool
	// Managed reports whether agent is one of config.managedAgents.
	Managed func(agent string) bool
	// Reminder is config.phaseReminder.
	Reminder ReminderConfig
}

// StableMessage is what the rule reads of one user message with a parts
// array (a message without one has nothing to add a part to).
type StableMessage struct {
	ID, SessionID string
	// Agent is the message's agent: its info.agent, else the agent its
	// session is known to run ("" when neither is known).
	Agent string
	// WantsReminder is WantsReminder of the message.
	WantsReminder bool
}

// CarriesBlock reports whether m carries the block frozen for it: its
// agent is managed, and it has an id and a session to freeze the block
// under. The caller freezes (or finds) the block only then; the block is
// added unless AddsBlock says otherwise.
func (r StableRule) CarriesBlock(m StableMessage) bool {
	return r.Blocks && m.ID != "" && m.SessionID != "" && r.Managed(m.Agent)
}

// AddsBlock reports whether a message that carries block gets it as a
// part: block is not empty (a session with nothing to resume, or a block
// frozen as empty), and no part of the message has it as its text already
// (present).
func AddsBlock(block string, present bool) bool {
	return block != "" && !present
}

// CarriesReminder reports whether m gets the reminder after its block: the
// reminder is enabled, m's agent is known and one the reminder is for,
// and m wants it (no skip marker, no reminder already).
func (r StableRule) CarriesReminder(m StableMessage) bool {
	return r.Reminder.Enabled && m.Agent != "" && r.Reminder.ForAgent(m.Agent) && m.WantsReminder
}
