package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/handlers"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// A recording is a transcript (testdata/transcripts/README.md) of a real
// session, written by `hookwire serve --record FILE` as the frames pass:
// each message read becomes a send step, each reply a recv step, and the
// store as the state file gave it a state step before the initialize that
// loaded it, so `hookwire replay FILE` runs the same session again.
//
// The serving path only queues the bytes (rpc.Observer); a goroutine
// formats and writes them. A recording that cannot be written is given up
// (logged once); serving goes on.

// recordFlags are serve's --record and --record-redact.
type recordFlags struct {
	path   *string
	redact *bool
}

func addRecordFlags(fs *flag.FlagSet) recordFlags {
	return recordFlags{
		path: fs.String("record", "", "write every message in and out to the transcript `FILE` (mode 0600), for hookwire replay; "+
			"if FILE exists, FILE-2, FILE-3, ... is used"),
		redact: fs.Bool("record-redact", false, "in the recording, replace the strings the sidecar never reads (tool outputs, file contents) "+
			"by '*' of the same length"),
	}
}

// open starts the recording the flags ask for: nil when none is asked for,
// or when the file cannot be created (logged: serving matters more).
func (f recordFlags) open(log zerolog.Logger, version string) *recorder {
	if *f.path == "" {
		return nil
	}
	file, err := createRecording(*f.path)
	if err != nil {
		log.Warn().Err(err).Msg("cannot record this session")
		return nil
	}
	log.Info().Str("file", file.Name()).Bool("redact", *f.redact).Msg("recording the session")
	heading := "recorded by hookwire " + version + " with `hookwire serve --record`; replay with `hookwire replay FILE`"
	if *f.redact {
		heading += "; redacted: the strings the sidecar never reads are '*'"
	}
	return newRecorder(file, *f.redact, heading, log.With().Str("record", file.Name()).Logger())
}

// createRecording creates path, or path with -2, -3, ... before its
// extension when that exists: a restarted sidecar (the shim respawns it)
// never writes over the session that came before, and each file replays
// on its own.
func createRecording(path string) (*os.File, error) {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	for n := 1; n <= 1000; n++ {
		name := path
		if n > 1 {
			name = base + "-" + strconv.Itoa(n) + ext
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("creating the recording: %w", err)
		}
		// The file holds prompts: 0600 whatever the umask allowed.
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("creating the recording: %w", err)
		}
		return f, nil
	}
	return nil, fmt.Errorf("creating the recording: %s and 999 numbered names beside it exist", path)
}

// maxRecordQueue bounds the bytes waiting for the recording's writer: a
// file that stops taking them (a hung disk) gives up the recording rather
// than the sidecar's memory.
const maxRecordQueue = 256 << 20

// recordCloseWait bounds how long Close waits for the queue to reach the
// file, so a hung disk cannot hold up the sidecar's exit.
const recordCloseWait = 5 * time.Second

// recorder is the rpc.Observer that writes a recording. Its Observer
// methods only queue; run writes.
type recorder struct {
	log    zerolog.Logger
	redact bool
	out    io.WriteCloser

	mu      sync.Mutex
	queue   []recordEvent
	queued  int
	closing bool
	stopped atomic.Bool // the recording was given up: drop everything
	wake    chan struct{}
	done    chan struct{}

	// Used by run only.
	tw      transcriptWriter // writes into buf
	buf     bytes.Buffer
	held    *heldStep // the message read last, until its reply or the next event
	method  string    // the method whose reply comes next, for varyingMembers
	drop    int       // replies to leave out: their message was left out
	gaveUp  string    // why the recording stopped, once
	written bool      // something reached out
}

type recordEvent struct {
	kind   byte // 'r' read, 'w' wrote, 's' skipped, 'l' the store as loaded
	data   []byte
	reason string
}

// heldStep is a send step waiting to be written: a state step the request
// produces goes before it.
type heldStep struct {
	st     step
	method string
	call   bool // it has an id: a reply follows
}

var _ rpc.Observer = (*recorder)(nil)

// newRecorder starts a recording into out; its first step is the note
// heading.
func newRecorder(out io.WriteCloser, redact bool, heading string, log zerolog.Logger) *recorder {
	r := &recorder{log: log, redact: redact, out: out, wake: make(chan struct{}, 1), done: make(chan struct{})}
	r.tw.w = &r.buf
	r.write(step{Note: heading})
	go r.run()
	return r
}

// Read implements rpc.Observer.
func (r *recorder) Read(msg []byte) { r.enqueue(recordEvent{kind: 'r', data: msg}) }

// Wrote implements rpc.Observer.
func (r *recorder) Wrote(msg []byte) { r.enqueue(recordEvent{kind: 'w', data: msg}) }

// Skipped implements rpc.Observer.
func (r *recorder) Skipped(reason string) { r.enqueue(recordEvent{kind: 's', reason: reason}) }

// Loaded records the store as the state file gave it (sessions'
// snapshot), before the request that loaded it. A nil recorder ignores it.
func (r *recorder) Loaded(snapshot []byte) {
	if r != nil {
		r.enqueue(recordEvent{kind: 'l', data: snapshot})
	}
}

// loadedFrom records store as it is now (Loaded), when r is not nil:
// serve calls it once the state file has been read into store.
func (r *recorder) loadedFrom(store *sessions.Store) {
	if r == nil {
		return
	}
	snapshot, err := store.Snapshot()
	if err != nil {
		r.giveUp(fmt.Errorf("the store as loaded: %w", err))
		return
	}
	r.Loaded(snapshot)
}

// observer is r as rpc.Options.Observer: nil when r is.
func (r *recorder) observer() rpc.Observer {
	if r == nil {
		return nil
	}
	return r
}

func (r *recorder) enqueue(ev recordEvent) {
	if r.stopped.Load() {
		return
	}
	r.mu.Lock()
	if r.queued+len(ev.data) > maxRecordQueue {
		r.queue, r.queued = nil, 0
		r.stopped.Store(true)
		r.mu.Unlock()
		r.giveUp(errors.New("the file does not keep up with the session"))
		r.signal()
		return
	}
	r.queue = append(r.queue, ev)
	r.queued += len(ev.data)
	r.mu.Unlock()
	r.signal()
}

func (r *recorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// giveUp stops the recording and logs why, once.
func (r *recorder) giveUp(err error) {
	r.stopped.Store(true)
	r.mu.Lock()
	first := r.gaveUp == ""
	if first {
		r.gaveUp = err.Error()
	}
	r.mu.Unlock()
	if first {
		r.log.Warn().Err(err).Msg("recording stopped; serving goes on")
	}
}

// Close writes what is queued and closes the file, waiting at most
// recordCloseWait. It is safe on a nil recorder.
func (r *recorder) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.signal()
	select {
	case <-r.done:
	case <-time.After(recordCloseWait):
		r.log.Warn().Msg("recording: the file did not take the last steps in time")
	}
}

func (r *recorder) run() {
	defer close(r.done)
	for {
		r.mu.Lock()
		batch, closing := r.queue, r.closing
		r.queue, r.queued = nil, 0
		r.mu.Unlock()
		for _, ev := range batch {
			r.handleSafely(ev)
		}
		if closing {
			r.release()
			r.flush()
			if err := r.out.Close(); err != nil && !r.stopped.Load() {
				r.giveUp(err)
			}
			return
		}
		r.flush()
		if len(batch) == 0 {
			<-r.wake
		}
	}
}

// flush writes the formatted steps to the file.
func (r *recorder) flush() {
	if r.buf.Len() == 0 {
		return
	}
	if r.stopped.Load() {
		r.buf.Reset()
		return
	}
	_, err := r.out.Write(r.buf.Bytes())
	r.buf.Reset()
	r.written = true
	if err != nil {
		r.giveUp(err)
	}
}

// handleSafely is handle, except that a panic (a bug in the recorder)
// gives up the recording instead of ending the sidecar.
func (r *recorder) handleSafely(ev recordEvent) {
	defer func() {
		if v := recover(); v != nil {
			r.log.Error().Str("panic", fmt.Sprint(v)).Str("stack", string(debug.Stack())).Msg("recording: panic")
			r.giveUp(fmt.Errorf("recording failed: %v", v))
		}
	}()
	r.handle(ev)
}

func (r *recorder) handle(ev recordEvent) {
	if r.stopped.Load() {
		return
	}
	switch ev.kind {
	case 'l':
		r.write(step{State: ev.data})
		r.release()
	case 'r':
		r.release()
		r.read(ev.data)
	case 's':
		r.release()
		r.write(step{Note: "here the sidecar skipped input (" + ev.reason + "); it and its error reply are left out"})
		r.drop++
	case 'w':
		r.release()
		if r.drop > 0 {
			r.drop--
			return
		}
		reply := wildcardVarying(r.method, ev.data)
		r.method = ""
		r.write(step{Recv: reply})
	}
}

// release writes the held send step.
func (r *recorder) release() {
	if r.held == nil {
		return
	}
	h := r.held
	r.held = nil
	if err := r.tw.write(h.st); err != nil {
		// Not writable as a send step (an escaped lone surrogate, which
		// the transcript format does not take): the same bytes raw.
		text := strings.ReplaceAll(string(compact(h.st.Send)), "\n", " ") + "\n"
		raw, _ := json.Marshal(text)
		if err := r.tw.write(step{SendRaw: raw}); err != nil {
			r.leaveOut(h.call, "the message cannot be written as a step")
			return
		}
	}
	if h.call {
		r.method = h.method
	}
}

// read turns a message read into a held send step, redacted when asked.
func (r *recorder) read(msg []byte) {
	env, err := scanEnvelope(msg)
	if err != nil {
		// The sidecar answers it with an error. Without redaction it is
		// kept byte for byte; with it, it may hold what redaction hides.
		if r.redact {
			r.leaveOut(true, "the sidecar could not read a message, so it could not be redacted")
			return
		}
		raw, _ := json.Marshal(strings.ReplaceAll(string(msg), "\n", " ") + "\n")
		r.write(step{SendRaw: raw})
		return
	}
	if r.redact {
		if err := redactParams(msg, env); err != nil {
			r.leaveOut(env.call, "its params could not be redacted")
			return
		}
	}
	r.held = &heldStep{st: step{Send: msg}, method: env.method, call: env.call}
}

// redactParams redacts the params of msg in place (handlers.RedactParams:
// the same length, so msg keeps its size).
func redactParams(msg []byte, env envelope) error {
	if env.paramsEnd <= env.paramsStart {
		return nil
	}
	params, err := handlers.RedactParams(env.method, msg[env.paramsStart:env.paramsEnd])
	if err != nil {
		return err
	}
	copy(msg[env.paramsStart:env.paramsEnd], params)
	return nil
}

// leaveOut writes a note for a message left out, and drops its reply.
func (r *recorder) leaveOut(call bool, why string) {
	r.write(step{Note: "a message is left out here: " + why})
	if call {
		r.drop++
	}
}

func (r *recorder) write(st step) {
	if err := r.tw.write(st); err != nil && st.Note == "" {
		r.log.Debug().Err(err).Msg("recording: step not written")
		r.write(step{Note: "a step is missing here: " + err.Error()})
	}
}

// envelope is what the recorder needs of a message: its method, whether
// a reply follows, and where its params are.
type envelope struct {
	method                 string
	call                   bool
	paramsStart, paramsEnd int
}

// scanEnvelope reads msg's top-level members; an error for anything the
// sidecar does not take as a request or notification.
func scanEnvelope(msg []byte) (envelope, error) {
	var env envelope
	dec := jsontext.NewDecoder(bytes.NewReader(msg), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return env, errors.New("not an object")
	}
	hasMethod := false
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return env, err
		}
		name := tok.String() // before the next read voids tok
		val, err := dec.ReadValue()
		if err != nil {
			return env, err
		}
		switch name {
		case "method":
			s, err := jsontext.AppendUnquote(nil, val)
			if err != nil {
				return env, errors.New("method is not a string")
			}
			env.method, hasMethod = string(s), true
		case "id":
			env.call = true
		case "params":
			env.paramsEnd = int(dec.InputOffset())
			env.paramsStart = env.paramsEnd - len(val)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return env, err
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return env, errors.New("more than one value")
	}
	if !hasMethod {
		return env, errors.New("no method")
	}
	return env, nil
}

// varyingMembers are the members of replies that differ from run to run,
// by method: they are recorded as "<any>". "*" stands for every item of
// an array.
var varyingMembers = map[string][][]string{
	"initialize":    {{"result", "serverInfo", "version"}},
	"status":        {{"result", "version"}, {"result", "uptimeSeconds"}, {"result", "memory"}, {"result", "state"}, {"result", "stateFile"}},
	"sessions.list": {{"result", "*", "lastUse"}},
}

// wildcardVarying returns reply with the varying members of method's
// replies set to "<any>" (and then its members sorted, as -update writes
// them).
func wildcardVarying(method string, reply []byte) json.RawMessage {
	paths := varyingMembers[method]
	if paths == nil {
		return reply
	}
	var v any
	if decodeNumbers(reply, &v) != nil {
		return reply
	}
	for _, p := range paths {
		v = setAny(v, p)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return reply
	}
	return bytes.TrimSpace(buf.Bytes())
}

// setAny sets the member at path in v to "<any>" where it exists.
func setAny(v any, path []string) any {
	if len(path) == 0 {
		return anyValue
	}
	switch c := v.(type) {
	case map[string]any:
		if m, ok := c[path[0]]; ok {
			c[path[0]] = setAny(m, path[1:])
		}
	case []any:
		if path[0] == "*" {
			for i := range c {
				c[i] = setAny(c[i], path[1:])
			}
		}
	}
	return v
}

// replayState returns the serve arguments that start a replay from the
// transcript's state step, and a function that removes the file they
// name: --state with a temporary copy of the state, or nothing when the
// transcript has no state step. A transcript has at most one.
func replayState(steps []step) (args []string, cleanup func(), err error) {
	var state json.RawMessage
	for i, st := range steps {
		if st.State == nil {
			continue
		}
		if state != nil {
			return nil, nil, fmt.Errorf("step %d (line %d): a second state step (a transcript starts from one state)", i+1, st.line)
		}
		state = st.State
	}
	if state == nil {
		return nil, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "hookwire-replay-")
	if err != nil {
		return nil, nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, state, 0o600); err != nil {
		cleanup()
		return nil, nil, err
	}
	return []string{"--state", path}, cleanup, nil
}
