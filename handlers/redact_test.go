package handlers

import (
	"reflect"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/incremental"
)

func TestRedactParams(t *testing.T) {
	tests := []struct {
		name   string
		method string
		params string
		want   string
	}{
		{
			name:   "tool output, input and metadata go; what the transform reads stays",
			method: "chat.messages.transform",
			params: `{"input":{},"output":{"messages":[{"info":{"id":"m1","role":"user","agent":"orchestrator","sessionID":"ses_1","time":"x"},` +
				`"parts":[{"type":"text","text":"Please fix it"},{"type":"tool","tool":"read","state":{"status":"completed","output":"SECRET FILE","input":{"filePath":"/home/me"}}}]}]}}`,
			want: `{"input":{},"output":{"messages":[{"info":{"id":"m1","role":"user","agent":"orchestrator","sessionID":"ses_1","time":"*"},` +
				`"parts":[{"type":"text","text":"Please fix it"},{"type":"tool","tool":"read","state":{"status":"completed","output":"***********","input":{"********":"********"}}}]}]}}`,
		},
		{
			name:   "an errored task keeps its error",
			method: "chat.messages.transform",
			params: `{"output":{"messages":[{"parts":[{"type":"tool","tool":"task","state":{"status":"error","error":"Agent oops not found","title":"t"}}]}]}}`,
			want:   `{"output":{"messages":[{"parts":[{"type":"tool","tool":"task","state":{"status":"error","error":"Agent oops not found","title":"*"}}]}]}}`,
		},
		{
			name:   "escapes count as the bytes they take",
			method: "chat.messages.transform",
			params: `{"output":{"messages":[{"parts":[{"x":"a\"b\u00e9\n","text":"a\"b"}]}]}}`,
			want:   `{"output":{"messages":[{"parts":[{"x":"************","text":"a\"b"}]}]}}`,
		},
		{
			name:   "what is read is a path, not a name: text and id elsewhere go, and names inside what is not read",
			method: "chat.messages.transform",
			params: `{"output":{"files":["a",["bb"],{"id":"c"}],"text":"t","messages":[{"info":{"agent":["kept"]},"parts":[{"type":"tool","state":{"input":{"text":"x","id":"y"}}}]}]}}`,
			want:   `{"output":{"files":["*",["**"],{"**":"*"}],"text":"*","messages":[{"info":{"agent":["kept"]},"parts":[{"type":"tool","state":{"input":{"****":"*","**":"*"}}}]}]}}`,
		},
		{
			name:   "a string where an object belongs goes too",
			method: "chat.messages.transform",
			params: `{"input":"secret","output":{"messages":"secret"}}`,
			want:   `{"input":"******","output":{"messages":"******"}}`,
		},
		{
			name:   "a string where an object belongs goes too, in a read array",
			method: "chat.messages.transform",
			params: `{"input":{"k":"v"},"output":{"messages":["m",{"parts":"p"}]}}`,
			want:   `{"input":{"*":"*"},"output":{"messages":["*",{"parts":"*"}]}}`,
		},
		{
			name:   "names are kept, escaped ones too; whitespace is kept",
			method: "chat.messages.transform",
			params: "{ \"out\\u0070ut\" : { \"messages\" : [ { \"parts\": [ { \"te\\u0078t\" : \"kept\" , \"other\" : \"gone\" } ] } ] } }",
			want:   "{ \"out\\u0070ut\" : { \"messages\" : [ { \"parts\": [ { \"te\\u0078t\" : \"kept\" , \"other\" : \"****\" } ] } ] } }",
		},
		{
			name:   "lone surrogates and repeated names are read as the transport reads them",
			method: "chat.messages.transform",
			params: `{"output":{"messages":[{"parts":[{"x":"\ud800","x":"\udc00y","text":"\ud800"}]}]}}`,
			want:   `{"output":{"messages":[{"parts":[{"x":"******","x":"*******","text":"\ud800"}]}]}}`,
		},
		{
			name:   "tool.execute.after: the output is read (a task id may be anywhere in it); title and metadata are not",
			method: "tool.execute.after",
			params: `{"input":{"tool":"task","callID":"c","args":{"prompt":"p"}},"output":{"output":"task_id: ses_1","title":"Fix","metadata":{"sessionId":"ses_1","/home/me/a.go":"d"}}}`,
			want:   `{"input":{"tool":"task","callID":"c","args":{"******":"*"}},"output":{"output":"task_id: ses_1","title":"***","metadata":{"*********":"*****","*************":"*"}}}`,
		},
		{
			name:   "chat.message: the parts (attachments as data URLs, the user's text) are not read; the message is",
			method: "chat.message",
			params: `{"input":{"sessionID":"ses_1","agent":"build","messageID":"msg_9"},"output":{"message":{"id":"msg_9","agent":"build","model":{"providerID":"p","modelID":"m"}},"parts":[{"type":"file","mime":"image/png","url":"data:image/png;base64,AAAA"},{"type":"text","text":"hi"}]}}`,
			want:   `{"input":{"sessionID":"ses_1","agent":"build","messageID":"*****"},"output":{"message":{"id":"msg_9","agent":"build","model":{"providerID":"p","modelID":"m"}},"parts":[{"****":"****","***1":"*********","***":"**************************"},{"****":"****","***1":"**"}]}}`,
		},
		{
			name:   "reasoning text goes, a text part's stays, whatever the members' order",
			method: "chat.messages.transform",
			params: `{"input":{},"output":{"messages":[{"info":{"id":"m"},"parts":[{"text":"I think","type":"reasoning"},{"type":"reasoning","text":"so"},{"type":"text","text":"Answer"}]}]},` +
				`"sync":{"session":"s","messages":[{"edit":0,"parts":[{"part":{"type":"reasoning","text":"hmm"}}]}]}}`,
			want: `{"input":{},"output":{"messages":[{"info":{"id":"m"},"parts":[{"text":"*******","type":"reasoning"},{"type":"reasoning","text":"**"},{"type":"text","text":"Answer"}]}]},` +
				`"sync":{"session":"s","messages":[{"edit":0,"parts":[{"part":{"type":"reasoning","text":"***"}}]}]}}`,
		},
		{
			name:   "todo ids and statuses, and diagnostics keyed by absolute path, in a tool's metadata",
			method: "chat.messages.transform",
			params: `{"input":{},"output":{"messages":[{"info":{"id":"m"},"parts":[{"type":"tool","tool":"todowrite","state":{"status":"completed","metadata":{"todos":[{"id":"1","status":"pending","content":"c"}],"diagnostics":{"/home/me/x.go":[{"message":"m"}],"/home/me/y.go":[]}}}}]}]}}`,
			want:   `{"input":{},"output":{"messages":[{"info":{"id":"m"},"parts":[{"type":"tool","tool":"todowrite","state":{"status":"completed","metadata":{"*****":[{"**":"*","******":"*******","*******":"*"}],"***********":{"*************":[{"*******":"*"}],"************1":[]}}}}]}]}}`,
		},
		{
			name:   "event: only what session.deleted reads is kept",
			method: "event",
			params: `{"input":{"event":{"type":"todo.updated","properties":{"sessionID":"ses_1","todos":[{"id":"t1","status":"done"}],"info":{"id":"ses_1","slug":"Secret plan"}}}}}`,
			want:   `{"input":{"event":{"type":"todo.updated","properties":{"sessionID":"ses_1","todos":[{"**":"**","******":"****"}],"info":{"id":"ses_1","slug":"***********"}}}}}`,
		},
		{
			name:   "a method that reads no params: all of them go",
			method: "status",
			params: `{"why":"curious"}`,
			want:   `{"***":"*******"}`,
		},
		{
			name:   "unread names: equal ones stay equal, distinct ones distinct, another encoding of one is kept",
			method: "status",
			params: `{"ab":1,"cd":2,"ab":3,"x":{"a":1,"\u0061":2,"b":3}}`,
			want:   `{"**":1,"*1":2,"**":3,"*":{"a":1,"\u0061":2,"1":3}}`,
		},
		{
			name:   "a method the contract does not name is kept",
			method: "no.such.method",
			params: `{"a":"b"}`,
			want:   `{"a":"b"}`,
		},
		{
			name:   "absent params",
			method: "chat.messages.transform",
			params: ``,
			want:   ``,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RedactParams(tt.method, []byte(tt.params))
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.Len(t, got, len(tt.params), "redaction keeps the length")
		})
	}
}

// TestRedactionCoversEveryMethod: every method of the contract says what
// it reads, so no method's params are recorded whole by oversight.
func TestRedactionCoversEveryMethod(t *testing.T) {
	trees := methodTrees()
	for _, m := range contract.Methods {
		assert.NotNil(t, trees[m.Name], "%s has no read tree", m.Name)
	}
	assert.Len(t, trees, len(contract.Methods))
}

func TestRedactParamsLeavesItsInputAlone(t *testing.T) {
	params := []byte(`{"output":{"x":"secret"}}`)
	_, err := RedactParams("chat.messages.transform", params)
	require.NoError(t, err)
	assert.Equal(t, `{"output":{"x":"secret"}}`, string(params))
}

func TestRedactParamsRefusesWhatIsNotJSON(t *testing.T) {
	for _, params := range []string{`{"output":`, `{"a":1}{"b":2}`, `{"a":"x` + "\xff" + `}`} {
		_, err := RedactParams("chat.messages.transform", []byte(params))
		assert.Error(t, err, params)
	}
}

// FuzzRedactTransform checks the property a recording relies on: the
// transform decodes redacted params to the messages (or the error) it
// decodes the params as sent to, so the sidecar's reply is the same.
// Seeds: the transform params of every transcript, and shapes with
// strings in every place.
func FuzzRedactTransform(f *testing.F) {
	for _, p := range transcriptTransformParams(f) {
		f.Add(p)
	}
	s := `x\"\\y \ud83d\ude00 é`
	for _, seed := range []string{
		`{"input":{},"output":{"messages":[]}}`,
		`{"input":{"k":"` + s + `"},"output":{"messages":[{"info":{"id":"` + s + `","role":"user","agent":"` + s + `"},"parts":[{"type":"text","text":"` + s + `"}]}]}}`,
		`{"input":{},"output":{"messages":[{"info":{"role":"assistant"},"parts":[{"type":"tool","tool":"task","state":{"status":"error","error":"` + s + `","output":"` + s + `","input":{"prompt":"` + s + `"}}}]}]}}`,
		`{"input":{},"output":{"messages":[{"info":{},"parts":[{"type":"tool","state":{"status":"error","error":{"message":"` + s + `"}}}]}]}}`,
		`{"input":{},"output":{"messages":[{"info":{},"parts":[{"te\u0078t":"` + s + `","state":"` + s + `"}]}]}}`,
		`{"input":{},"output":{"messages":"` + s + `"}}`,
		`{"input":{},"output":"` + s + `"}`,
		`{"input":{},"output":{"messages":[{"parts":["` + s + `",{"x":["` + s + `"]}],"parts":[]}]}}`,
		`{"input":{},"output":{"messages":[{"info":{"role":["` + s + `"],"agent":["` + s + `"]},"parts":[{"type":5,"text":["` + s + `"]}]}]}}`,
		`{"input":{},"output":{"messages":[{"info":{"id":"a","id":"b"}}]}}`,
		`{"input":{},"output":{"messages":[]},"sync":{"session":"` + s + `"}}`,
		`{"input":{},"sync":{"session":"` + s + `","base":"` + s + `","messages":[{"keep":0,"count":2},{"message":{"info":{"id":"` + s + `"},"parts":[{"text":"` + s + `","output":"` + s + `"}]}},` +
			`{"edit":3,"info":{"agent":"` + s + `","x":"` + s + `"},"parts":[{"keep":1,"count":1},{"part":{"tool":"task","state":{"status":"error","error":"` + s + `"}}}]}]}}`,
		`"` + s + `"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !jsontext.Value(raw).IsValid() {
			// The transport answers such a message itself, or (for an
			// escaped lone surrogate) hands the handler \ufffd instead.
			return
		}
		redacted, err := RedactParams("chat.messages.transform", raw)
		require.NoError(t, err)
		require.Len(t, redacted, len(raw))
		wantOut, wantErr := decodeTransform(false, raw)
		gotOut, gotErr := decodeTransform(false, redacted)
		if wantErr != nil {
			require.Error(t, gotErr, "redacted params decoded, the params did not")
			assert.Equal(t, wantErr.Error(), gotErr.Error())
			return
		}
		require.NoError(t, gotErr)
		assert.Equal(t, readView(wantOut), readView(gotOut))
		// Redacting twice changes nothing more.
		again, err := RedactParams("chat.messages.transform", redacted)
		require.NoError(t, err)
		assert.Equal(t, string(redacted), string(again))
	})
}

// FuzzRedactEveryMethod checks redaction's promise for every method: the
// params decode into the method's params type, redacted or not, to the
// same values (a field read only for its kind, to the same kind), or fail
// with the same error; and redacting twice changes nothing more.
func FuzzRedactEveryMethod(f *testing.F) {
	methods := make([]string, 0, len(routes))
	for _, m := range contract.Methods {
		methods = append(methods, m.Name)
	}
	seeds := []string{
		`{"input":{"tool":"task","sessionID":"s","callID":"c"},"output":{"args":{"prompt":"p","task_id":"exp-1"},"output":"task_id: ses_1","title":"t","metadata":{"/a/b":1,"/a/c":{"x":"y"}}}}`,
		`{"input":{"sessionID":"s","agent":"build","model":{"providerID":"p"}},"output":{"message":{"agent":"a"},"parts":[{"type":"file","url":"data:x"},{"type":"text","text":"hi"}]}}`,
		`{"input":{"event":{"type":"session.deleted","properties":{"sessionID":"s","info":{"id":"s","title":"t"},"todos":[{"id":"1"}]}}}}`,
		`{"protocolVersion":1,"clientInfo":{"name":"x"},"config":{"managedAgents":["a"]},"extra":{"k":"v","k":"w"}}`,
		`{"primaryAgents":["a"],"subagents":["b"],"x":{"ab":1,"cd":2,"\u0061b":3}}`,
		`{"a":{"x":1,"y":2,"x":3},"b":["s",{"z":"q"}]}`,
		`{"input":"s","output":{"system":["one","two"],"other":"o"}}`,
		`{"output":"text","failed":true}`,
	}
	for _, m := range methods {
		for _, s := range seeds {
			f.Add(m, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, method string, raw []byte) {
		r, ok := routeByName[method]
		if !ok || !jsontext.Value(raw).IsValid() {
			return
		}
		redacted, err := RedactParams(method, raw)
		require.NoError(t, err)
		require.Len(t, redacted, len(raw))
		again, err := RedactParams(method, redacted)
		require.NoError(t, err)
		assert.Equal(t, string(redacted), string(again), "redacting twice")
		typ := r.params
		if typ == nil {
			return // nothing reads these params
		}
		decode := func(b []byte) (any, error) {
			v := reflect.New(typ)
			if err := decodeParams(b, v.Interface()); err != nil {
				return nil, err
			}
			return kindsOnly(v.Elem()), nil
		}
		want, wantErr := decode(raw)
		got, gotErr := decode(redacted)
		if wantErr != nil {
			require.Error(t, gotErr, "redacted params decoded, the params did not: %s", redacted)
			assert.Equal(t, wantErr.Error(), gotErr.Error())
			return
		}
		require.NoError(t, gotErr, "the params decoded, the redacted ones did not: %s", redacted)
		assert.Equal(t, want, got)
	})
}

// kindsOnly returns v with each field tagged reads:"kind" replaced by the
// kind of its JSON value.
func kindsOnly(v reflect.Value) any {
	out := reflect.New(v.Type()).Elem()
	out.Set(v)
	var walk func(reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			if p, ok := v.Addr().Interface().(*incremental.Part); ok && !incremental.TextRead(p.Type) {
				p.Text = nil // not read: the hash and the rules skip it
			}
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if !f.IsExported() {
					continue
				}
				if f.Tag.Get("reads") == "kind" {
					fv := v.Field(i)
					if fv.Kind() == reflect.Pointer && !fv.IsNil() {
						raw := fv.Elem().Interface().(jsontext.Value)
						k := jsontext.Value([]byte(`"` + string(raw.Kind()) + `"`))
						fv.Set(reflect.ValueOf(&k))
					}
					continue
				}
				walk(v.Field(i))
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(out)
	return out.Interface()
}
