package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/hookwire/hookwire/sessiondb" // the sqlite driver
)

// A chat.message that changes nothing the store keeps (the session runs
// on the model it ran on, which does not cool) commits nothing: the
// model's records are one write transaction when they change (issue 50),
// not one a message.
func TestChatMessageOnTheSameModelWritesNothing(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	p := start(t, false, "--state", state)
	r := p.call("initialize", map[string]any{"protocolVersion": 1, "config": map[string]any{
		"agentModels": map[string]any{"orchestrator": map[string]any{"model": "fake/fake-model"}}}})
	require.Nil(t, r.Error)
	p.send("providers.update", nil, map[string]any{"connectedProviders": []string{"fake"},
		"availableModels": []string{"fake/fake-model"}, "defaultModel": "fake/fake-model"})
	message := func() {
		t.Helper()
		p.hookCall("chat.message", `{"input":{"sessionID":"ses_p","agent":"orchestrator","model":{"providerID":"fake","modelID":"fake-model"}},"output":{"message":{"model":{"providerID":"fake","modelID":"fake-model"}},"parts":[]}}`)
	}
	message() // the session's agent, decision and model: written
	db, err := sql.Open("sqlite", state)
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	version := func() int64 {
		var v int64
		require.NoError(t, db.QueryRow("PRAGMA data_version").Scan(&v))
		return v
	}
	before := version()
	for range 10 {
		message()
	}
	assert.Equal(t, before, version(), "ten chat.messages on the same model committed something")
	// Nor do they take the write lock: with another connection holding
	// it, the message is answered without a failed write.
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec("INSERT INTO meta(key,value) VALUES('held',1) ON CONFLICT(key) DO UPDATE SET value=value")
	require.NoError(t, err)
	message()
	assert.Empty(t, lastWriteError(t, p), "the message waited for the write lock")
	require.NoError(t, tx.Rollback())
	// A change does commit (the check sees other connections' commits).
	p.hookCall("chat.message", fmt.Sprintf(`{"input":{"sessionID":%q,"agent":"orchestrator"},"output":{"message":{},"parts":[]}}`, "ses_other"))
	assert.NotEqual(t, before, version())
}

// lastWriteError is status.stateFile.lastWriteError of p.
func lastWriteError(t *testing.T, p *proc) string {
	t.Helper()
	r := p.call("status", nil)
	require.Nil(t, r.Error)
	var st struct {
		StateFile struct {
			LastWriteError string `json:"lastWriteError"`
		} `json:"stateFile"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &st))
	return st.StateFile.LastWriteError
}
