// Package incremental is the incremental form of chat.messages.transform
// (PROTOCOL.md 4.6): the wire shape of a history and of the items that
// change it, the per-session histories held as bases (least recently used
// first out, within a byte budget, derived under a config generation), the
// rebuilding of a history from its base, the reapply runs of a reply, and
// the hashes that name a base.
//
// It knows nothing of what a hook decides. A history's messages carry two
// values of the hook's own types beside the sync bookkeeping (origin,
// hashes, the ops a message got): L, a few words kept in the history's
// array, copied with the message from base to base, and D, what the hook
// derives from the message's content and the config, held once per message
// and shared by the bases that keep it. The package never reads them; it
// only says when a message's derived values are stale (Entry.Derived).
//
// incremental does no IO, logs nothing and imports neither rpc nor
// handlers: its errors are plain errors (ErrUnknownBase, or an item that
// does not fit), which the handler turns into the protocol's codes.
package incremental
