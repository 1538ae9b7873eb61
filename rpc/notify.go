package rpc

// Notification is a message the server sends on its own: a method and
// params, no id, no reply expected (an observer's sessions.changed).
type Notification struct {
	Method string
	Params any
}

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
