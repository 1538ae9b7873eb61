// Package transcript is hookwire's record of a conversation with the
// sidecar: the format (a stream of JSON values, one step each; its
// definition is testdata/transcripts/README.md), the reader and writer,
// the comparison of a reply with the one a transcript expects, the
// Recorder that writes a session as it is served (an rpc.Observer), and
// Replay, which runs a transcript against a sidecar in another process or
// in this one.
//
// The files follow the concepts: format.go reads and writes steps,
// diff.go compares replies, record.go records, replay.go replays.
//
// transcript knows the protocol's envelope (rpc reads it for the
// recorder) but no hook: what a recording masks is the caller's
// (RecordOptions.Redact), and so is the server a replay runs (Target). It
// never imports handlers, so the handlers' tests can read transcripts
// through it, and it never writes to stdout.
package transcript
