// Package core holds hookwire's decisions as pure functions: the delegate
// retry pattern table and guidance, model resolution, task-output parsing,
// task labels and alias prefixes, the phase reminder decision (which message,
// and in cache-stable mode what each user message carries) and the
// Resumable Sessions block.
//
// core must never do IO, keep state, log, or import rpc, handlers or
// sessions: every answer is a function of its arguments, so the same
// history always yields the same bytes.
package core
