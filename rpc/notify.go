package rpc

import "bytes"

// Notification is a message the server sends on its own: a method and
// params, no id, no reply expected (an observer's sessions.changed).
type Notification struct {
	Method string
	Params any
}

// notificationPrefix begins every notification encodeNotification
// writes, and no reply.
const notificationPrefix = `{"jsonrpc":"2.0","method":`

// IsNotification reports whether msg, as an Observer is told it was
// written, is a notification the server sent on its own (not a reply).
func IsNotification(msg []byte) bool { return bytes.HasPrefix(msg, []byte(notificationPrefix)) }

// notify writes n, framed as the client's messages are. Before the first
// message under FramingAuto it fails with errFramingUnknown.
func (w *writer) notify(n Notification) error {
	b, err := encodeNotification(n)
	if err != nil {
		return err
	}
	return w.write(b)
}

// sendNotifications writes every notification from ch until ch is closed
// or done is. A notification that cannot be written is dropped and logged.
// A nil ch sends nothing.
func (w *writer) sendNotifications(ch <-chan Notification, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case n, ok := <-ch:
			if !ok {
				return
			}
			if err := w.notify(n); err != nil {
				w.log.Warn().Str("method", n.Method).Err(err).Msg("notification dropped")
			}
		}
	}
}
