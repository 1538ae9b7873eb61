package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/go-json-experiment/json/jsontext"
)

// Diff compares a reply the sidecar sent (got) with the one a transcript
// expects (want, which may hold Any), and names the first JSON path where
// they differ; "" when they match. Member order and whitespace do not
// count.
func Diff(want, got json.RawMessage) string {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "transcript reply is not JSON: " + err.Error()
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return "sidecar reply is not JSON: " + err.Error()
	}
	return diffValue("", w, g)
}

// KeepWildcards returns got, except where want had Any: those stay, so an
// update does not freeze a value that changes on every run. Numbers are
// kept as written.
func KeepWildcards(want, got json.RawMessage) json.RawMessage {
	var w, g any
	if decodeNumbers(want, &w) != nil || decodeNumbers(got, &g) != nil {
		return got
	}
	out, err := json.Marshal(mergeWildcards(w, g))
	if err != nil {
		return got
	}
	return out
}

// Readable returns raw on one line with its strings unescaped where JSON
// allows (`<`, not `\u003c`), for messages a person reads.
func Readable(raw json.RawMessage) []byte {
	b, err := jsontext.AppendFormat(nil, raw)
	if err != nil {
		return raw
	}
	return b
}

// decodeNumbers decodes raw into v keeping numbers as written, so an
// update does not round a large integer through float64.
func decodeNumbers(raw json.RawMessage, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

func mergeWildcards(w, g any) any {
	if s, ok := w.(string); ok && s == Any {
		return w
	}
	wm, ok1 := w.(map[string]any)
	gm, ok2 := g.(map[string]any)
	if ok1 && ok2 {
		for k, gv := range gm {
			if wv, ok := wm[k]; ok {
				gm[k] = mergeWildcards(wv, gv)
			}
		}
		return gm
	}
	wa, ok1 := w.([]any)
	ga, ok2 := g.([]any)
	if ok1 && ok2 && len(wa) == len(ga) {
		for i := range ga {
			ga[i] = mergeWildcards(wa[i], ga[i])
		}
	}
	return g
}

func diffValue(path string, w, g any) string {
	if s, ok := w.(string); ok && s == Any {
		return ""
	}
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			return fmt.Sprintf("at %s: want an object", orRoot(path))
		}
		keys := make([]string, 0, len(wv)+len(gv))
		for k := range wv {
			keys = append(keys, k)
		}
		for k := range gv {
			if _, ok := wv[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			a, inW := wv[k]
			b, inG := gv[k]
			switch {
			case !inG:
				return fmt.Sprintf("at %s/%s: missing", path, k)
			case !inW:
				return fmt.Sprintf("at %s/%s: unexpected", path, k)
			}
			if d := diffValue(path+"/"+k, a, b); d != "" {
				return d
			}
		}
		return ""
	case []any:
		gv, ok := g.([]any)
		if !ok {
			return fmt.Sprintf("at %s: want an array", orRoot(path))
		}
		if len(wv) != len(gv) {
			return fmt.Sprintf("at %s: want %d items, got %d", orRoot(path), len(wv), len(gv))
		}
		for i := range wv {
			if d := diffValue(fmt.Sprintf("%s/%d", path, i), wv[i], gv[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if ws, ok := w.(string); ok {
		if gs, ok := g.(string); ok && ws != gs {
			i := firstDiff(ws, gs)
			return fmt.Sprintf("at %s: strings differ at byte %d: want %s, got %s",
				orRoot(path), i, short(excerpt(ws, i)), short(excerpt(gs, i)))
		}
	}
	if !reflect.DeepEqual(w, g) {
		return fmt.Sprintf("at %s: want %s, got %s", orRoot(path), short(w), short(g))
	}
	return ""
}

func firstDiff(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// excerpt returns s around byte i, so a long string's difference shows.
func excerpt(s string, i int) string {
	start, end := max(0, i-30), min(len(s), i+50)
	return s[start:end]
}

func orRoot(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

func short(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	b := bytes.TrimSpace(buf.Bytes())
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// compact returns raw without insignificant whitespace; raw itself when
// it is not JSON.
func compact(raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}
