package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// replayTimeout bounds the wait for one reply, so a sidecar that fails to
// answer makes replay fail instead of hang.
const replayTimeout = 10 * time.Second

func replayCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	update := fs.Bool("update", false, "rewrite each transcript's replies with what the sidecar answered")
	bin := fs.String("bin", "", "sidecar binary to replay against (default: this executable)")
	if code, done := parseFlagsWithArgs(fs, args, "usage: hookwire replay [-update] [-bin PATH] FILE...", stdout, stderr); done {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "hookwire replay: name one or more transcript files")
		return 2
	}
	if *bin == "" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(stderr, "hookwire replay:", err)
			return 2
		}
		*bin = exe
	}
	failed := false
	for _, path := range fs.Args() {
		diffs, err := replayFile(*bin, path, *update)
		switch {
		case err != nil:
			fmt.Fprintf(stdout, "FAIL %s: %v\n", path, err)
			failed = true
		case len(diffs) > 0:
			fmt.Fprintf(stdout, "FAIL %s\n", path)
			for _, d := range diffs {
				fmt.Fprintln(stdout, indent(d, "  "))
			}
			failed = true
		case *update:
			fmt.Fprintf(stdout, "updated %s\n", path)
		default:
			fmt.Fprintf(stdout, "ok   %s\n", path)
		}
	}
	if failed {
		return 1
	}
	return 0
}

// replayFile runs one transcript against a fresh `bin serve` over real
// pipes. It returns one description per reply that differs; with update it
// rewrites the file's replies instead.
func replayFile(bin, path string, update bool) ([]string, error) {
	steps, err := readTranscript(path)
	if err != nil {
		return nil, err
	}
	stateArgs, cleanup, err := replayState(steps)
	if err != nil {
		return nil, err
	}
	defer cleanup() // after the process has exited (deferred below)
	cmd := exec.Command(bin, append([]string{"serve", "--framing", "line", "--log-level", "error"}, stateArgs...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	replies := newLineReader(out)

	var diffs []string
	for i, st := range steps {
		switch {
		case st.Send != nil:
			if _, err := stdin.Write(append(compact(st.Send), '\n')); err != nil {
				return diffs, fmt.Errorf("step %d: writing: %w", i+1, err)
			}
		case st.SendRaw != nil:
			text, _ := st.rawText() // readTranscript validated it
			if _, err := io.WriteString(stdin, text); err != nil {
				return diffs, fmt.Errorf("step %d: writing: %w", i+1, err)
			}
		case st.Recv != nil:
			got, err := replies.next(replayTimeout)
			if err != nil {
				return diffs, fmt.Errorf("step %d: no reply: %w (sidecar log: %s)", i+1, err, strings.TrimSpace(logs.String()))
			}
			if update {
				steps[i].Recv = keepWildcards(st.Recv, got)
				continue
			}
			if d := jsonDiff(st.Recv, got); d != "" {
				diffs = append(diffs, fmt.Sprintf("step %d (line %d): %s\n  want %s\n  got  %s",
					i+1, st.line, d, readable(st.Recv), readable(got)))
			}
		}
	}
	if update {
		return nil, writeTranscript(path, steps)
	}
	return diffs, nil
}

// keepWildcards returns got, except where want had "<any>": those stay, so
// an update does not freeze a value that changes on every run.
func keepWildcards(want, got json.RawMessage) json.RawMessage {
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

// decodeNumbers decodes raw into v keeping numbers as written, so an update
// does not round a large integer through float64.
func decodeNumbers(raw json.RawMessage, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

func mergeWildcards(w, g any) any {
	if s, ok := w.(string); ok && s == anyValue {
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

// jsonDiff compares two JSON values (want may hold "<any>") and names the
// first path where they differ; "" when they match.
func jsonDiff(want, got json.RawMessage) string {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "transcript reply is not JSON: " + err.Error()
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return "sidecar reply is not JSON: " + err.Error()
	}
	return diffValue("", w, g)
}

func diffValue(path string, w, g any) string {
	if s, ok := w.(string); ok && s == anyValue {
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

// readable returns raw on one line with its strings unescaped where JSON
// allows (`<`, not `\u003c`), for messages a person reads.
func readable(raw json.RawMessage) []byte {
	b, err := jsontext.AppendFormat(nil, raw)
	if err != nil {
		return raw
	}
	return b
}

func compact(raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// lineReader reads newline-framed replies with a deadline.
type lineReader struct {
	lines chan []byte
	err   chan error
}

func newLineReader(r io.Reader) *lineReader {
	lr := &lineReader{lines: make(chan []byte, 16), err: make(chan error, 1)}
	go func() {
		br := bufio.NewReaderSize(r, 1<<16)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				lr.lines <- bytes.TrimSpace(line)
			}
			if err != nil {
				lr.err <- err
				return
			}
		}
	}()
	return lr
}

func (lr *lineReader) next(timeout time.Duration) (json.RawMessage, error) {
	select {
	case line := <-lr.lines:
		return line, nil
	case err := <-lr.err:
		select {
		case line := <-lr.lines:
			lr.err <- err
			return line, nil
		default:
		}
		if errors.Is(err, io.EOF) {
			return nil, errors.New("sidecar closed its output")
		}
		return nil, err
	case <-time.After(timeout):
		return nil, fmt.Errorf("timed out after %s", timeout)
	}
}
