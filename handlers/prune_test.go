package handlers

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/incremental"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/transcript"
)

// FuzzPruneTransform checks that decoding chat.messages.transform params
// after pruneStrings gives the messages decoding them as sent gives, for any
// valid JSON (the only input pruneStrings gets). Seeds: the transform
// params in the transcripts, and shapes with long strings in every place.
func FuzzPruneTransform(f *testing.F) {
	for _, p := range transcriptTransformParams(f) {
		f.Add(p)
	}
	long := strings.Repeat(`x\"\\y `, 20)
	for _, s := range []string{
		`{"input":{},"output":{"messages":[]}}`,
		`{"input":{"k":"` + long + `"},"output":{"messages":[{"info":{"id":"` + long + `","role":"user","agent":"` + long + `"},"parts":[{"type":"text","text":"` + long + `"}]}]}}`,
		`{"input":{},"output":{"messages":[{"info":{"role":"assistant"},"parts":[{"type":"tool","tool":"task","state":{"status":"error","error":"` + long + `","output":"` + long + `","input":{"prompt":"` + long + `"}}}]}]}}`,
		`{"input":{},"output":{"messages":[{"info":{},"parts":[{"type":"tool","state":{"status":"error","error":{"message":"` + long + `"}}}]}]}}`,
		`{"input":{},"output":{"messages":[{"info":{},"parts":[{"te\u0078t":"` + long + `","state":"` + long + `"}]}]}}`,
		`{"input":{},"output":{"messages":"` + long + `"}}`,
		`{"input":{},"output":"` + long + `"}`,
		`{"input":{},"output":{"messages":[{"parts":["` + long + `",{"x":["` + long + `"]}],"parts":[]}]}}`,
		`{"input" : {} , "output" : { "messages" : [ { "info" : { "id" : "` + long + `" } , "other" : "` + long + `" } ] } }`,
		`{"input":{},"output":{"messages":[]},"sync":{"session":"` + long + `"}}`,
		`{"input":{},"sync":{"session":"` + long + `","base":"` + long + `","messages":[{"keep":0,"count":2},{"message":{"info":{"id":"` + long + `"},"parts":[{"type":"text","text":"` + long + `","output":"` + long + `"}]}},` +
			`{"edit":3,"info":{"agent":"` + long + `","x":"` + long + `"},"parts":[{"keep":1,"count":1},{"part":{"tool":"task","state":{"status":"error","error":"` + long + `"}}}]}]}}`,
		`{"input":{},"sync":{"session":1,"base":"` + long + `","messages":[{"message":"` + long + `"}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !jsontext.Value(raw).IsValid() {
			return
		}
		wantOut, wantErr := decodeTransform(false, raw)
		gotOut, gotErr := decodeTransformParams(pruneStrings(raw, incremental.Reads))
		if wantErr != nil {
			require.Error(t, gotErr, "pruned params decoded, the params did not")
			return
		}
		require.NoError(t, gotErr)
		assert.Equal(t, readView(wantOut), readView(gotOut))
	})
}

// readView is what the handler uses of decoded params: agent and error
// count only as strings, so an object there may differ inside.
func readView(p *chatMessagesTransformParams) any {
	type itemView struct {
		Keep, Count, Edit *int
		Message, Info     []core.Message
		Parts             []any
	}
	v := struct {
		Out         []core.Message
		Sync        bool
		Session     string
		Base        *string
		Items       []itemView
		ItemsAbsent bool
	}{}
	if p.Output != nil {
		v.Out = toCoreMessages(p.Output.Messages)
	}
	if p.Sync != nil {
		v.Sync, v.Session, v.Base, v.ItemsAbsent = true, p.Sync.Session, p.Sync.Base, p.Sync.Messages == nil
		for _, it := range deref(p.Sync.Messages) {
			iv := itemView{Keep: it.Keep, Count: it.Count, Edit: it.Edit}
			if it.Message != nil {
				iv.Message = toCoreMessages([]incremental.Message{*it.Message})
			}
			if it.Info != nil {
				iv.Info = toCoreMessages([]incremental.Message{{Info: *it.Info}})
			}
			if it.Parts != nil {
				iv.Parts = []any{}
			}
			for _, pi := range deref(it.Parts) {
				if pi.Part != nil {
					iv.Parts = append(iv.Parts, toCoreMessages([]incremental.Message{{Parts: []incremental.Part{*pi.Part}}}))
				} else {
					iv.Parts = append(iv.Parts, [2]*int{pi.Keep, pi.Count})
				}
			}
			v.Items = append(v.Items, iv)
		}
	}
	return v
}

func deref[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}

func TestPruneStrings(t *testing.T) {
	long := strings.Repeat("y", pruneMinLen)
	short := long[1:]
	raw := `{"a":"` + long + `","text":"` + long + `","b":"` + short + `","c":["` + long + `"],"d":"` + long + `\"","e\\":"` + long + `"}`
	want := `{"a":"","text":"` + long + `","b":"` + short + `","c":["` + long + `"],"d":"","e\\":"` + long + `"}`
	assert.Equal(t, want, string(pruneStrings([]byte(raw), incremental.Reads)))
	same := []byte(`{"a":"short"}`)
	assert.Equal(t, &same[0], &pruneStrings(same, incremental.Reads)[0], "nothing to blank: raw itself")
}

// transcriptTransformParams returns the chat.messages.transform params the
// transcripts send, as extra fuzz seeds. A transcript without such a step
// gives none; one that does not parse (being recorded or rewritten at that
// moment) is skipped with a note: TestReplayTranscripts judges the
// transcripts, this only borrows their params.
func transcriptTransformParams(tb testing.TB) [][]byte {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "transcripts", "*.json"))
	require.NoError(tb, err)
	require.NotEmpty(tb, files, "no transcripts in testdata/transcripts")
	var out [][]byte
	for _, name := range files {
		params, err := transformParamsIn(name)
		if err != nil {
			tb.Logf("seeds: skipping %s: %v", name, err)
			continue
		}
		out = append(out, params...)
	}
	require.NotEmpty(tb, out, "no transcript sends chat.messages.transform: does this loader still read their format?")
	return out
}

// transformParamsIn returns the params of the chat.messages.transform
// steps the transcript file name sends, read through package transcript.
func transformParamsIn(name string) ([][]byte, error) {
	steps, err := transcript.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, st := range steps {
		if st.Send == nil {
			continue
		}
		env, err := rpc.ReadEnvelope(st.Send)
		if err == nil && env.Method == contract.MethodChatMessagesTransform && env.ParamsEnd > env.ParamsStart {
			out = append(out, st.Send[env.ParamsStart:env.ParamsEnd])
		}
	}
	return out, nil
}

// toCoreMessages converts each message as the handler does.
func toCoreMessages(wire []incremental.Message) []core.Message {
	msgs := make([]core.Message, len(wire))
	for i, w := range wire {
		msgs[i] = toCoreMessage(w)
	}
	return msgs
}
