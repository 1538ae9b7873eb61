package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMux(t *testing.T) {
	m := NewMux()
	m.Handle("b.echo", func(_ context.Context, r Request) (any, error) { return string(r.Params), nil })
	m.Handle("a.fail", func(context.Context, Request) (any, error) { return nil, errors.New("no") })

	tests := []struct {
		name, method, params string
		notification         bool
		want                 any
		wantErr              *Error
	}{
		{name: "routes", method: "b.echo", params: `{"x":1}`, want: `{"x":1}`},
		{name: "routes notifications too", method: "b.echo", params: `[]`, notification: true, want: `[]`},
		{name: "handler error", method: "a.fail", wantErr: nil},
		{name: "unknown method", method: "nope", wantErr: &Error{Code: CodeMethodNotFound, Message: "method not found: nope"}},
		{name: "method names are exact", method: "B.ECHO", wantErr: &Error{Code: CodeMethodNotFound, Message: "method not found: B.ECHO"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.Dispatch(context.Background(), Request{Method: tt.method, Params: json.RawMessage(tt.params), Notification: tt.notification})
			switch {
			case tt.wantErr != nil:
				assert.Equal(t, tt.wantErr, err)
			case tt.want == nil:
				assert.EqualError(t, err, "no")
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestMuxHandlePanics(t *testing.T) {
	var m Mux // the zero Mux works
	m.Handle("x", func(context.Context, Request) (any, error) { return nil, nil })
	assert.PanicsWithValue(t, "rpc: multiple handlers for method x", func() {
		m.Handle("x", func(context.Context, Request) (any, error) { return nil, nil })
	})
	assert.Panics(t, func() { m.Handle("y", nil) })
}
