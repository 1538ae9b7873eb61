package contracttest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

type goodMessage struct {
	Info struct {
		ID        string `json:"id"`
		Role      string `json:"role"`
		Agent     any    `json:"agent"`
		SessionID string `json:"sessionID"`
	} `json:"info"`
	Parts []struct {
		Type      string  `json:"type"`
		Text      *string `json:"text"`
		Synthetic bool    `json:"synthetic"`
		Tool      string  `json:"tool"`
		CallID    string  `json:"callID"`
		State     *struct {
			Status string `json:"status"`
			Error  any    `json:"error"`
		} `json:"state"`
	} `json:"parts"`
}

type extraField struct {
	goodMessage
	Output string `json:"output"`
}

func TestMessageFields(t *testing.T) {
	assert.Equal(t, ContractFields(), MessageFields(t, goodMessage{}))

	got := MessageFields(t, struct {
		Info struct {
			Model string `json:"model"`
		} `json:"info"`
		Parts []struct {
			Synthetic string `json:"synthetic"`
		} `json:"parts"`
	}{})
	assert.Equal(t, map[string]string{"info.model": "string", "parts.synthetic": "string"}, got)
	assert.NotEqual(t, ContractFields(), got, "a type that decodes other fields, or a field as another type, is not the contract's")
}

func TestAssertReadsNames(t *testing.T) {
	exact := func(name string) bool {
		switch name {
		case "id", "role", "agent", "sessionID", "type", "text", "tool", "callID", "status", "error", "session", "base":
			return true
		}
		return false
	}
	assert.True(t, AssertReadsNames(t, exact, []string{"output", "model", "time"}))

	rec := &recorder{TB: t}
	assert.False(t, AssertReadsNames(rec, func(name string) bool { return exact(name) || name == "output" }, []string{"output"}), "reads a string the contract does not")
	assert.False(t, AssertReadsNames(rec, func(name string) bool { return exact(name) && name != "callID" }, nil), "misses one the contract reads")
	assert.Len(t, rec.errors, 2)
}

// recorder takes the failures of the assertions under test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) { r.errors = append(r.errors, format) }

func TestChanges(t *testing.T) {
	var read, unread int
	for _, c := range Changes() {
		assert.NotEqual(t, Message(), c.Message, c.Path)
		if c.Read {
			read++
		} else {
			unread++
		}
	}
	assert.Equal(t, len(ContractFields()), read)
	assert.Positive(t, unread)
}
