package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func render(t *testing.T, steps ...Step) string {
	t.Helper()
	var buf bytes.Buffer
	tw := NewWriter(&buf)
	for _, st := range steps {
		require.NoError(t, tw.Write(st))
	}
	return buf.String()
}

// bigReply is a reply shaped like the recorded ones: too long for a line,
// with a long string and many short members.
func bigReply(third string) json.RawMessage {
	reminder := "<internal_reminder>\n" + strings.Repeat("Work in phases. ", 20) + "\n</internal_reminder>"
	b, _ := json.Marshal(map[string]any{"id": 2, "jsonrpc": "2.0", "result": map[string]any{"patch": []any{
		map[string]any{"op": "add", "path": "/messages/2/parts/-", "value": map[string]any{"type": "text", "text": reminder, "synthetic": true}},
		map[string]any{"op": "replace", "path": "/args/task_id", "value": "ses_1"},
		map[string]any{"op": "remove", "path": third},
	}}})
	return b
}

func TestTranscriptRoundTrip(t *testing.T) {
	long := strings.Repeat(`{"jsonrpc":"2.0","pad":"xxxxxxxxxx"}`+"é\n", 40)
	rows := []struct {
		name string
		st   Step
	}{
		{"note", Step{Note: "a <note> & more"}},
		{"short send", Step{Send: raw(`{"jsonrpc":"2.0","id":1,"method":"status"}`)}},
		{"send keeps member order", Step{Send: raw(`{"method":"status","jsonrpc":"2.0","id":"z"}`)}},
		{"big reply", Step{Recv: bigReply("/args/x")}},
		{"wildcard", Step{Recv: raw(`{"id":1,"result":{"uptime":"<any>"}}`)}},
		{"short raw text", Step{SendRaw: raw(`"not json\n"`)}},
		{"long raw text", Step{SendRaw: mustJSON(long)}},
		{"raw text in parts", Step{SendRaw: raw(`["{\"a\":", "1}\n"]`)}},
		{"large integer", Step{Recv: raw(`{"id":12345678901234567890}`)}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			out := render(t, row.st)
			steps, err := Parse([]byte(out))
			require.NoError(t, err, out)
			require.Len(t, steps, 1)
			got := steps[0]
			assert.Equal(t, row.st.Note, got.Note)
			for _, pair := range [][2]json.RawMessage{{row.st.Send, got.Send}, {row.st.Recv, got.Recv}} {
				if pair[0] != nil {
					assert.JSONEq(t, string(pair[0]), string(pair[1]))
					assert.Equal(t, canon(t, pair[0]), canon(t, pair[1]), "same members in the same order")
				}
			}
			if row.st.SendRaw != nil {
				want, _ := row.st.RawText()
				have, err := got.RawText()
				require.NoError(t, err)
				assert.Equal(t, want, have)
			}
			assert.NotContains(t, out, `\u003c`, "no HTML escaping")
			assert.Equal(t, out, render(t, got), "writing what was read changes nothing")
		})
	}
}

func TestTranscriptLinesStayShort(t *testing.T) {
	long := strings.Repeat(`{"jsonrpc":"2.0","id":7,"method":"status","params":{"pad":"xxxx"}}`, 80)
	out := render(t, Step{Recv: bigReply("/args/x")}, Step{SendRaw: mustJSON(long)})
	for i, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "internal_reminder") {
			continue // a string is never split
		}
		assert.LessOrEqual(t, len(line), Width, "line %d: %s", i+1, line)
	}
	assert.Contains(t, out, `"text": "<internal_reminder>\n`)
}

// A reply that changes in one member changes one line of the transcript:
// that is what makes an -update diff reviewable.
func TestTranscriptChangeIsOneLine(t *testing.T) {
	before := strings.Split(render(t, Step{Note: "n"}, Step{Recv: bigReply("/args/x")}), "\n")
	after := strings.Split(render(t, Step{Note: "n"}, Step{Recv: bigReply("/args/y")}), "\n")
	require.Equal(t, len(before), len(after))
	var changed []string
	for i := range before {
		if before[i] != after[i] {
			changed = append(changed, after[i])
		}
	}
	assert.Equal(t, []string{`        {"op": "remove", "path": "/args/y"}`}, changed)
}

// A recorder appends steps one at a time: the result is the same file
// WriteFile writes, and it reads back step by step.
func TestTranscriptAppend(t *testing.T) {
	steps := []Step{
		{Note: "first"},
		{Send: raw(`{"jsonrpc":"2.0","id":1,"method":"status"}`)},
		{Recv: bigReply("/args/x")},
	}
	path := filepath.Join(t.TempDir(), "t.json")
	require.NoError(t, WriteFile(path, steps))
	whole, err := os.ReadFile(path)
	require.NoError(t, err)

	var appended bytes.Buffer
	tw := NewWriter(&appended)
	for i, st := range steps {
		require.NoError(t, tw.Write(st))
		read, err := Parse(appended.Bytes())
		require.NoError(t, err)
		assert.Len(t, read, i+1, "the file reads whole after each append")
	}
	assert.Equal(t, string(whole), appended.String())
	assert.Equal(t, "{\"note\": \"first\"}\n\n{\"send\": ", string(whole[:len("{\"note\": \"first\"}\n\n{\"send\": ")]),
		"steps are separated by a blank line")
}

func TestTranscriptReadsOnePerLine(t *testing.T) {
	old := `{"note":"the earlier format"}
{"send":{"jsonrpc":"2.0","id":1,"method":"status"}}

{"recv":{"id":1,"jsonrpc":"2.0","result":{"v":"\u003cany\u003e"}}}
`
	steps, err := Parse([]byte(old))
	require.NoError(t, err)
	require.Len(t, steps, 3)
	assert.Equal(t, []int{1, 2, 4}, []int{steps[0].Line, steps[1].Line, steps[2].Line})
	var v struct {
		Result struct{ V string }
	}
	require.NoError(t, json.Unmarshal(steps[2].Recv, &v))
	assert.Equal(t, Any, v.Result.V)
}

func TestTranscriptErrors(t *testing.T) {
	rows := []struct {
		name, in, want string
	}{
		{"unknown member", "{\"note\":\"a\"}\n\n{\"recieve\":{}}", `3: step 2: unknown member "recieve"`},
		{"two kinds in one step", `{"send":{},"recv":{}}`, "1: step 1: a step has exactly one of"},
		{"empty step", `{}`, "1: step 1: a step has exactly one of"},
		{"raw text of the wrong type", `{"sendRaw":7}`, "1: step 1: sendRaw must be a string or an array of strings"},
		{"broken JSON", "{\"note\":\"a\"}\n{\"send\":", "2: step 2 is not a JSON value"},
		{"not an object", `[1]`, "1: step 1: a step is a JSON object, not an array"},
		{"a note that is not text", `{"note":7}`, "1: step 1: note must be a string, not a number"},
		{"an empty note", `{"note":""}`, "1: step 1: a step has exactly one of"},
		{"a repeated member", `{"send":{},"send":{}}`, `1: step 1 is not a JSON value: jsontext: duplicate object member name "send"`},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			_, err := Parse([]byte(row.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), row.want)
		})
	}
}

func TestSplitText(t *testing.T) {
	assert.Equal(t, []string{"ab", "c\n", "d"}, splitText("abc\nd", 2))
	assert.Equal(t, []string{"a\"", "b"}, splitText("a\"b", 3), "width counts the escaped form")
	assert.Equal(t, []string{"é", "é"}, splitText("éé", 1), "never inside a rune")
	assert.Nil(t, splitText("", 5))
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// canon returns raw compact, with strings escaped the one way jsontext does.
func canon(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	b, err := jsontext.AppendFormat(nil, raw)
	require.NoError(t, err)
	return string(b)
}

// A step's line is counted from the one before it: a step far into a
// long file, and an error there, name the right line.
func TestParseLinesFarIn(t *testing.T) {
	var buf bytes.Buffer
	tw := NewWriter(&buf)
	for i := range 500 {
		require.NoError(t, tw.Write(Step{Recv: bigReply(fmt.Sprintf("/args/%d", i))}))
	}
	good := buf.String()
	steps, err := Parse([]byte(good))
	require.NoError(t, err)
	require.Len(t, steps, 500)
	lines := strings.Split(good, "\n")
	for i, st := range steps {
		require.Equal(t, "{", lines[st.Line-1], "step %d starts on its line", i+1)
		if i > 0 {
			require.Equal(t, "", lines[st.Line-2], "step %d follows a blank line", i+1)
		}
	}
	_, err = Parse([]byte(good + "\n{\"note\": 1}\n"))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("%d: step 501: ", len(lines)+1)), err.Error())
	_, err = Parse([]byte(good + "\n\n  {\"note\": \n"))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("%d: step 501 is not a JSON value", len(lines)+2)), err.Error())
}

// BenchmarkParse reads transcripts of 25,000 and 100,000 steps (hook
// calls of about 1 KB and their replies, as -update writes them). The
// reader is linear when ns/step stays flat across the sizes.
func BenchmarkParse(b *testing.B) {
	for _, steps := range []int{25_000, 100_000} {
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) {
			data := benchTranscript(b, steps)
			b.SetBytes(int64(len(data)))
			cpu := cpuTime()
			for b.Loop() {
				got, err := Parse(data)
				require.NoError(b, err)
				require.Len(b, got, steps)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
		})
	}
}

// benchTranscript returns a transcript of n steps: hook calls of about
// 1 KB and their replies.
func benchTranscript(b *testing.B, n int) []byte {
	b.Helper()
	var buf bytes.Buffer
	tw := NewWriter(&buf)
	pad := strings.Repeat("0123456789abcdef", 56)
	for i := range n {
		st := Step{Recv: fmt.Appendf(nil, `{"id":%d,"jsonrpc":"2.0","result":{"patch":[]}}`, i)}
		if i%2 == 0 {
			st = Step{Send: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tool.execute.before","params":`+
				`{"input":{"tool":"read","sessionID":"ses_bench","callID":"call_%d"},"output":{"args":{"filePath":"/src/%d.go","note":"%s"}}}}`, i, i, i, pad)}
		}
		require.NoError(b, tw.Write(st))
	}
	return buf.Bytes()
}
