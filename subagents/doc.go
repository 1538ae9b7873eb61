// Package subagents is what hookwire knows of a session's subagents (its
// child sessions, at any depth) from OpenCode's own events: the rules of a
// subagent's state, the figures summed over its assistant messages, the
// order subagents.list pages in, and the wire shape of that page
// (PROTOCOL.md 4.10).
//
// It does no IO and keeps no state of its own: the durable records live
// behind Service, which package sessiondb implements with one transaction
// per method, so that every process on the project sees the same.
package subagents
