package handlers

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
)

// The route table is the contract: every method of it has a handler, in
// the contract's order, with its kind and role (the table is generated
// from the contract; this catches a contract_gen.go and protocol_gen.go
// generated apart).
func TestRoutesAreTheContract(t *testing.T) {
	var want, got []contract.Method
	want = append(want, contract.Methods...)
	for _, r := range routes {
		got = append(got, r.Method)
	}
	assert.Equal(t, want, got)
}

// What initialize announces is the contract's.
func TestCapabilitiesAreTheContract(t *testing.T) {
	srv := New(Options{})
	res, err := srv.Dispatch(context.Background(), rpc.Request{Method: contract.MethodInitialize, Params: json.RawMessage(`{"protocolVersion":1}`)})
	require.NoError(t, err)
	caps := res.(initializeResult).Capabilities
	assert.Equal(t, contract.Names(contract.RoleHook), caps.Hooks)
	assert.Equal(t, contract.Names(contract.RoleMethod), caps.Methods)
	assert.Equal(t, contract.Events, caps.Events)
}

// Redaction keeps what the transform's pruning keeps: the contract's
// reads (checked in package incremental).
func TestRedactionReadsTheTransformsFields(t *testing.T) {
	raw := []byte(`{"input":{},"output":{"messages":[{"info":{"id":"m1","time":"t"},"parts":[{"type":"tool","state":{"status":"error","output":"secret"}}]}]}}`)
	got, err := RedactParams(contract.MethodChatMessagesTransform, raw)
	require.NoError(t, err)
	assert.Equal(t, `{"input":{},"output":{"messages":[{"info":{"id":"m1","time":"*"},"parts":[{"type":"tool","state":{"status":"error","output":"******"}}]}]}}`, string(got))
}
