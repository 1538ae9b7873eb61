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
	// Reminder is config.phaseReminder.
	Reminder ReminderConfig
}

// CarriesBlock reports whether a user message with a parts array (a
// message without one has nothing to add a part to) carries the block
// frozen for it: it has an id and a session to freeze the block under,
// and its agent is managed (managed: its info.agent, else the agent its
// session is known to run, is one of config.managedAgents). The caller
// freezes (or finds) the block only then; the block is added unless
// AddsBlock says otherwise.
func (r *StableRule) CarriesBlock(id, sessionID string, managed bool) bool {
	return r.Blocks && id != "" && sessionID != "" && managed
}

// AddsBlock reports whether a message that carries block gets it as a
// part: block is not empty (a session with nothing to resume, or a block
// frozen as empty), and no part of the message has it as its text already
// (present).
func AddsBlock(block string, present bool) bool {
	return block != "" && !present
}

// CarriesReminder reports whether a user message with a parts array gets
// the reminder after its block: the reminder is enabled, the message's
// agent (as for CarriesBlock; "" when unknown) is known and one the
// reminder is for, and the message wants it (wants: WantsReminder, no
// skip marker, no reminder already).
func (r *StableRule) CarriesReminder(agent string, wants bool) bool {
	return r.Reminder.Enabled && agent != "" && r.Reminder.ForAgent(agent) && wants
}
