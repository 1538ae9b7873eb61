package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorf(t *testing.T) {
	e := Errorf(CodeInvalidParams, "input.%s: want a string, got %d", "tool", 3)
	assert.Equal(t, CodeInvalidParams, e.Code)
	assert.Equal(t, "input.tool: want a string, got 3", e.Message)
	assert.Equal(t, e.Message, e.Error())
	assert.Nil(t, e.Unwrap())

	w := Errorf(CodeInternalError, "loading state: %w", io.ErrUnexpectedEOF)
	assert.Equal(t, "loading state: unexpected EOF", w.Message)
	assert.ErrorIs(t, w, io.ErrUnexpectedEOF)
}

func TestToWireError(t *testing.T) {
	tests := []struct {
		name        string
		err         error
		code        int64
		message     string
		data        string
		dataFailure bool
	}{
		{name: "*Error", err: &Error{Code: CodeNotInitialized, Message: "not initialized"}, code: CodeNotInitialized, message: "not initialized"},
		{name: "*Error with data", err: &Error{Code: CodeInvalidParams, Message: "bad", Data: map[string]any{"field": "input"}}, code: CodeInvalidParams, message: "bad", data: `{"field":"input"}`},
		{name: "wrapped *Error", err: fmt.Errorf("handler: %w", Errorf(CodeInvalidParams, "x")), code: CodeInvalidParams, message: "x"},
		{name: "plain error", err: errors.New("disk full"), code: CodeInternalError, message: "disk full"},
		{name: "unencodable data", err: &Error{Code: 1, Message: "m", Data: make(chan int)}, code: 1, message: "m", dataFailure: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, dataErr := toWireError(tt.err)
			assert.Equal(t, tt.dataFailure, dataErr != nil)
			assert.Equal(t, tt.code, w.Code)
			assert.Equal(t, tt.message, w.Message)
			if tt.data == "" {
				assert.Nil(t, w.Data)
				return
			}
			require.NotNil(t, w.Data)
			assert.JSONEq(t, tt.data, string(w.Data))
			_, err := json.Marshal(w)
			require.NoError(t, err)
		})
	}
}
