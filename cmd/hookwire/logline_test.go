package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The log's writer (issue 49 item 5): a look-alike letter is escaped, and
// no line is longer than 64 KB, with the size of what was cut said; each
// line stays JSON that reads back to what was logged (what was not cut).
func TestLogLines(t *testing.T) {
	huge := make([]string, 200_000)
	for i := range huge {
		huge[i] = fmt.Sprintf("agent-%d", i)
	}
	hugeJSON, err := json.Marshal(huge)
	require.NoError(t, err)
	tests := []struct {
		name string
		log  func(buf *bytes.Buffer)
		want []string // substrings of the line
		// fields: members of the line, decoded
		fields map[string]any
	}{
		{name: "a look-alike name is escaped",
			log: func(buf *bytes.Buffer) {
				l, _, _ := newLogger("info", "", buf)
				l.Warn().Str("warning", "config.maxP\u0430rents: unknown member").Msg("config warning")
			},
			want:   []string{`"warning":"config.maxP\u0430rents: unknown member"`},
			fields: map[string]any{"warning": "config.maxP\u0430rents: unknown member", "message": "config warning"}},
		{name: "past U+FFFF: a surrogate pair; bidi and C1 controls escaped too",
			log: func(buf *bytes.Buffer) {
				l, _, _ := newLogger("info", "", buf)
				l.Info().Str("label", "\U0001F600 \u202e \u009b").Msg("x")
			},
			want:   []string{`"label":"\ud83d\ude00 \u202e \u009b"`},
			fields: map[string]any{"label": "\U0001F600 \u202e \u009b"}},
		{name: "a million-byte list is cut, the line keeps its level and message",
			log: func(buf *bytes.Buffer) {
				l, _, _ := newLogger("info", "", buf)
				l.Info().Strs("managedAgents", huge).Bool("cacheStable", true).Msg("initialized")
			},
			want:   []string{`"managedAgents":"[\"agent-0\",\"agent-1\",`, fmt.Sprintf(`... (cut: %d bytes)"`, len(hugeJSON)), `"logCutBytes":`},
			fields: map[string]any{"level": "info", "message": "initialized", "cacheStable": true}},
		{name: "a line that is not one object: said, with its beginning",
			log: func(buf *bytes.Buffer) {
				logLines{buf}.Write([]byte(strings.Repeat("x", 100_000) + "\n"))
			},
			want:   []string{`"message":"log line cut","logCutBytes":100001,"head":"xxx`},
			fields: map[string]any{"level": "warn"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(&buf)
			out := buf.String()
			require.True(t, strings.HasSuffix(out, "\n"))
			line := strings.TrimSuffix(out, "\n")
			assert.NotContains(t, line, "\n", "one line")
			assert.LessOrEqual(t, len(out), maxLogLine)
			for _, c := range line {
				require.Less(t, c, rune(0x80), "only ASCII in %.200s", line)
			}
			for _, w := range tt.want {
				assert.Contains(t, line, w)
			}
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &got), "still JSON: %.300s", line)
			for k, v := range tt.fields {
				assert.Equal(t, v, got[k], k)
			}
		})
	}
}
