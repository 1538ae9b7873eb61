package rpc

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeSendsNotifications: server-initiated notifications go out in
// the client's framing, between replies, and one sent before the framing
// is known is dropped, not written in a framing the client may not read.
func TestServeSendsNotifications(t *testing.T) {
	for _, header := range []bool{true, false} {
		name := map[bool]string{true: "header", false: "line"}[header]
		t.Run(name, func(t *testing.T) {
			ch := make(chan Notification)
			s := startServer(t, Options{Notifications: ch}, header)

			// Nothing read yet (auto framing): dropped.
			ch <- Notification{Method: "early", Params: map[string]int{"count": 0}}
			require.Eventually(t, func() bool { return strings.Contains(s.logs.String(), "notification dropped") },
				5*time.Second, 10*time.Millisecond)

			s.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`)
			r := s.next()
			assert.Equal(t, "1", string(r.ID))

			ch <- Notification{Method: "sessions.changed", Params: map[string]int{"count": 2}}
			select {
			case b := <-s.frames:
				assert.JSONEq(t, `{"jsonrpc":"2.0","method":"sessions.changed","params":{"count":2}}`, string(b))
			case <-time.After(5 * time.Second):
				t.Fatal("no notification within 5s")
			}
			s.expectAlive()
			require.NoError(t, s.finish())
		})
	}
}

// TestServeNotificationsClosedChannel: a closed channel ends the sender,
// not Serve.
func TestServeNotificationsClosedChannel(t *testing.T) {
	ch := make(chan Notification)
	close(ch)
	s := startServer(t, Options{Notifications: ch}, true)
	s.expectAlive()
	require.NoError(t, s.finish())
}

// IsNotification tells the notifications Serve writes from replies, as an
// Observer sees them.
func TestIsNotification(t *testing.T) {
	n, err := encodeNotification(Notification{Method: "cache.bust", Params: map[string]int{"a": 1}})
	require.NoError(t, err)
	assert.True(t, IsNotification(n), string(n))
	for _, reply := range []string{`{"jsonrpc":"2.0","id":1,"result":{"method":"x"}}`, `{"id":1,"result":null,"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, ``} {
		assert.False(t, IsNotification([]byte(reply)), reply)
	}
}
