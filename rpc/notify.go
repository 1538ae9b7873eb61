package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Notification is a message the server sends on its own: a method and
// params, no id, no reply expected (an observer's sessions.changed).
type Notification struct {
	Method string
	Params any
}

// errFramingUnknown: nothing has been read yet under FramingAuto, so there
// is no framing to write in.
var errFramingUnknown = errors.New("rpc: no framing yet: nothing read from the client")

// notify writes n, framed as the client's messages are. Before the first
// message under FramingAuto it fails with errFramingUnknown.
func (s *stream) notify(n Notification) error {
	params, err := json.Marshal(n.Params)
	if err != nil {
		return fmt.Errorf("rpc: encoding %s params: %w", n.Method, err)
	}
	method, err := json.Marshal(n.Method)
	if err != nil {
		return fmt.Errorf("rpc: encoding method: %w", err)
	}
	return s.write([]byte(`{"jsonrpc":"2.0","method":`), method, []byte(`,"params":`), params, []byte(`}`))
}

// sendNotifications writes every notification from ch until ch is closed
// or done is. A notification that cannot be written is dropped and logged.
func (s *stream) sendNotifications(ch <-chan Notification, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case n, ok := <-ch:
			if !ok {
				return
			}
			if err := s.notify(n); err != nil {
				s.log.Warn().Str("method", n.Method).Err(err).Msg("notification dropped")
			}
		}
	}
}
