package rpc

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sourcegraph/jsonrpc2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReservedCodesAreJSONRPC2s(t *testing.T) {
	assert.Equal(t, []int64{jsonrpc2.CodeParseError, jsonrpc2.CodeInvalidRequest, jsonrpc2.CodeMethodNotFound, jsonrpc2.CodeInvalidParams, jsonrpc2.CodeInternalError},
		[]int64{CodeParseError, CodeInvalidRequest, CodeMethodNotFound, CodeInvalidParams, CodeInternalError})
}

// pipeRWC joins a pipe's read end and another's write end, for a
// jsonrpc2 stream.
type pipeRWC struct {
	io.Reader
	io.WriteCloser
}

// notes collects the notifications a jsonrpc2 client is sent.
type notes struct {
	mu  sync.Mutex
	got []*jsonrpc2.Request
	ch  chan struct{}
}

func (n *notes) Handle(_ context.Context, _ *jsonrpc2.Conn, r *jsonrpc2.Request) {
	n.mu.Lock()
	n.got = append(n.got, r)
	n.mu.Unlock()
	n.ch <- struct{}{}
}

// TestJSONRPC2ClientTalksToServe: sourcegraph/jsonrpc2's own client, over
// its plain (line) stream, calls methods, reads results and errors (with
// their data), and receives the server's notifications.
func TestJSONRPC2ClientTalksToServe(t *testing.T) {
	m := NewMux()
	m.Handle("echo", func(_ context.Context, r Request) (any, error) { return r.Params, nil })
	m.Handle("fail", func(context.Context, Request) (any, error) {
		return nil, &Error{Code: CodeInvalidParams, Message: "bad <input>", Data: map[string]int{"at": 3}}
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	noteCh := make(chan Notification, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, inR, outW, m, Options{Framing: FramingLine, Log: zerolog.Nop(), Notifications: noteCh})
	}()

	got := &notes{ch: make(chan struct{}, 1)}
	client := jsonrpc2.NewConn(ctx, jsonrpc2.NewPlainObjectStream(pipeRWC{outR, inW}), got)
	defer client.Close()

	var echoed map[string]any
	require.NoError(t, client.Call(ctx, "echo", map[string]any{"a": []int{1, 2}}, &echoed))
	assert.Equal(t, map[string]any{"a": []any{1.0, 2.0}}, echoed)

	err := client.Call(ctx, "fail", nil, nil)
	var rpcErr *jsonrpc2.Error
	require.ErrorAs(t, err, &rpcErr)
	assert.EqualValues(t, CodeInvalidParams, rpcErr.Code)
	assert.Equal(t, "bad <input>", rpcErr.Message)
	require.NotNil(t, rpcErr.Data)
	assert.JSONEq(t, `{"at":3}`, string(*rpcErr.Data))

	err = client.Call(ctx, "nope", nil, nil)
	require.ErrorAs(t, err, &rpcErr)
	assert.EqualValues(t, CodeMethodNotFound, rpcErr.Code)

	noteCh <- Notification{Method: "sessions.changed", Params: map[string]int{"count": 2}}
	select {
	case <-got.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("the notification never came")
	}
	got.mu.Lock()
	require.Len(t, got.got, 1)
	assert.True(t, got.got[0].Notif)
	assert.Equal(t, "sessions.changed", got.got[0].Method)
	require.NotNil(t, got.got[0].Params)
	assert.JSONEq(t, `{"count":2}`, string(*got.got[0].Params))
	got.mu.Unlock()

	require.NoError(t, inW.Close())
	require.NoError(t, <-served)
}

func TestEncodeNotification(t *testing.T) {
	tests := []struct {
		name string
		n    Notification
		want string
	}{
		{"object params", Notification{Method: "sessions.changed", Params: map[string]int{"count": 1}}, `{"jsonrpc":"2.0","method":"sessions.changed","params":{"count":1}}`},
		{"no params", Notification{Method: "ping"}, `{"jsonrpc":"2.0","method":"ping","params":null}`},
		{"escaped method", Notification{Method: "a\"<b>", Params: 1}, `{"jsonrpc":"2.0","method":"a\"\u003cb\u003e","params":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := encodeNotification(tt.n)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(b))
		})
	}
	_, err := encodeNotification(Notification{Method: "bad", Params: make(chan int)})
	assert.ErrorContains(t, err, "encoding bad params")
}

// BenchmarkStockRequestUnmarshal1MB is what jsonrpc2's Request decode
// alone costs for a 1 MB request (compare BenchmarkReadRequest1MB).
func BenchmarkStockRequestUnmarshal1MB(b *testing.B) {
	line := openCodeRequest(1 << 20)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		var req jsonrpc2.Request
		if err := req.UnmarshalJSON(line); err != nil {
			b.Fatal(err)
		}
	}
}
