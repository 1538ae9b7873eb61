package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
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

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
)

// A recording is a transcript of a real session, written as the frames
// pass: each message read becomes a send step, each reply a recv step,
// and the store as the state file gave it a state step before the
// initialize that loaded it, so a replay runs the same session again.
//
// The serving path only queues the bytes (rpc.Observer); a goroutine
// formats and writes them. A recording that cannot be written is given up
// (logged once); serving goes on.

// CreateRecording creates path, or path with -2, -3, ... before its
// extension when that exists: a restarted sidecar (the shim respawns it)
// never writes over the session that came before, and each file replays
// on its own. The file is mode 0600: it holds prompts.
func CreateRecording(path string) (*os.File, error) {
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
		// 0600 whatever the umask allowed.
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

// RecordOptions configure a Recorder.
type RecordOptions struct {
	// Heading is the recording's first step, a note.
	Heading string
	// Redact, when set, masks a message's params before it is written:
	// it gets the method and the params as sent and returns what to
	// write in their place. A message it fails on is left out, with its
	// reply.
	Redact func(method string, params []byte) ([]byte, error)
	// Log gets the one warning of a recording given up.
	Log zerolog.Logger
}

// A Recorder is the rpc.Observer that writes a recording. Its Observer
// methods only queue; a goroutine of its own writes.
type Recorder struct {
	log    zerolog.Logger
	redact func(method string, params []byte) ([]byte, error)
	out    io.WriteCloser

	mu      sync.Mutex
	queue   []recordEvent
	queued  int
	closing bool
	stopped atomic.Bool // the recording was given up: drop everything
	wake    chan struct{}
	done    chan struct{}

	// Used by run only.
	tw      *Writer // writes into buf
	buf     bytes.Buffer
	held    *heldStep // the message read last, until its reply or the next event
	method  string    // the method whose reply comes next, for contract.VaryingMembers
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
	st     Step
	method string
	call   bool // a reply follows
}

var _ rpc.Observer = (*Recorder)(nil)

// NewRecorder starts a recording into out, which Close closes; its first
// step is the note opts.Heading.
func NewRecorder(out io.WriteCloser, opts RecordOptions) *Recorder {
	r := &Recorder{log: opts.Log, redact: opts.Redact, out: out, wake: make(chan struct{}, 1), done: make(chan struct{})}
	r.tw = NewWriter(&r.buf)
	r.write(Step{Note: opts.Heading})
	go r.run()
	return r
}

// Read implements rpc.Observer.
func (r *Recorder) Read(msg []byte) { r.enqueue(recordEvent{kind: 'r', data: msg}) }

// Wrote implements rpc.Observer.
func (r *Recorder) Wrote(msg []byte) { r.enqueue(recordEvent{kind: 'w', data: msg}) }

// Skipped implements rpc.Observer.
func (r *Recorder) Skipped(reason string) { r.enqueue(recordEvent{kind: 's', reason: reason}) }

// Loaded records the store as the state file gave it (a state step),
// before the request that loaded it. snapshot is the recorder's own.
func (r *Recorder) Loaded(snapshot []byte) { r.enqueue(recordEvent{kind: 'l', data: snapshot}) }

func (r *Recorder) enqueue(ev recordEvent) {
	if r.stopped.Load() {
		return
	}
	r.mu.Lock()
	if r.queued+len(ev.data) > maxRecordQueue {
		r.queue, r.queued = nil, 0
		r.stopped.Store(true)
		r.mu.Unlock()
		r.GiveUp(errors.New("the file does not keep up with the session"))
		r.signal()
		return
	}
	r.queue = append(r.queue, ev)
	r.queued += len(ev.data)
	r.mu.Unlock()
	r.signal()
}

func (r *Recorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// GiveUp stops the recording and logs why, once; serving goes on.
func (r *Recorder) GiveUp(err error) {
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
// recordCloseWait. Call it once Serve has returned.
func (r *Recorder) Close() {
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

func (r *Recorder) run() {
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
				r.GiveUp(err)
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
func (r *Recorder) flush() {
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
		r.GiveUp(err)
	}
}

// handleSafely is handle, except that a panic (a bug in the recorder)
// gives up the recording instead of ending the sidecar.
func (r *Recorder) handleSafely(ev recordEvent) {
	defer func() {
		if v := recover(); v != nil {
			r.log.Error().Str("panic", fmt.Sprint(v)).Str("stack", string(debug.Stack())).Msg("recording: panic")
			r.GiveUp(fmt.Errorf("recording failed: %v", v))
		}
	}()
	r.handle(ev)
}

func (r *Recorder) handle(ev recordEvent) {
	if r.stopped.Load() {
		return
	}
	switch ev.kind {
	case 'l':
		r.write(Step{State: ev.data})
		r.release()
	case 'r':
		r.release()
		r.read(ev.data)
	case 's':
		r.release()
		r.write(Step{Note: "here the sidecar skipped input (" + ev.reason + "); it and its error reply are left out"})
		r.drop++
	case 'w':
		if rpc.IsNotification(ev.data) {
			// The sidecar's own (cache.bust): replay serves without a
			// reader for them, so a recording keeps none, and the reply
			// awaited is still the next one.
			return
		}
		r.release()
		if r.drop > 0 {
			r.drop--
			return
		}
		reply := wildcardVarying(r.method, ev.data)
		r.method = ""
		r.write(Step{Recv: reply})
	}
}

// release writes the held send step.
func (r *Recorder) release() {
	if r.held == nil {
		return
	}
	h := r.held
	r.held = nil
	if err := r.tw.Write(h.st); err != nil {
		// Not writable as a send step (an escaped lone surrogate, which
		// the transcript format does not take): the same bytes raw.
		text := strings.ReplaceAll(string(compact(h.st.Send)), "\n", " ") + "\n"
		raw, _ := json.Marshal(text)
		if err := r.tw.Write(Step{SendRaw: raw}); err != nil {
			r.leaveOut(h.call, "the message cannot be written as a step")
			return
		}
	}
	if h.call {
		r.method = h.method
	}
}

// read turns a message read into a held send step, redacted when asked.
// It reads the message as the sidecar does (rpc.ReadEnvelope).
func (r *Recorder) read(msg []byte) {
	env, err := rpc.ReadEnvelope(msg)
	if err != nil {
		// The sidecar answers it with an error. Without redaction it is
		// kept byte for byte; with it, it may hold what redaction hides.
		if r.redact != nil {
			r.leaveOut(env.Call, "the sidecar could not read a message, so it could not be redacted")
			return
		}
		raw, _ := json.Marshal(strings.ReplaceAll(string(msg), "\n", " ") + "\n")
		r.write(Step{SendRaw: raw})
		return
	}
	if env.Response && r.redact != nil {
		// The sidecar ignores it, so nothing says what in it is safe to keep.
		r.leaveOut(false, "a response from the client, which the sidecar ignores, is not redacted")
		return
	}
	if r.redact != nil && env.ParamsEnd > env.ParamsStart {
		params, err := r.redact(env.Method, msg[env.ParamsStart:env.ParamsEnd])
		if err != nil {
			r.leaveOut(env.Call, "its params could not be redacted")
			return
		}
		msg = splice(msg, env.ParamsStart, env.ParamsEnd, params)
	}
	r.held = &heldStep{st: Step{Send: msg}, method: env.Method, call: env.Call}
}

// splice returns msg with msg[start:end] replaced by with: in place when
// they have the same length.
func splice(msg []byte, start, end int, with []byte) []byte {
	if len(with) == end-start {
		copy(msg[start:end], with)
		return msg
	}
	out := make([]byte, 0, len(msg)-(end-start)+len(with))
	return append(append(append(out, msg[:start]...), with...), msg[end:]...)
}

// leaveOut writes a note for a message left out, and drops its reply
// when one follows.
func (r *Recorder) leaveOut(call bool, why string) {
	r.write(Step{Note: "a message is left out here: " + why})
	if call {
		r.drop++
	}
}

func (r *Recorder) write(st Step) {
	if err := r.tw.Write(st); err != nil && st.Note == "" {
		r.log.Debug().Err(err).Msg("recording: step not written")
		r.write(Step{Note: "a step is missing here: " + err.Error()})
	}
}

// wildcardVarying returns reply with the varying members of method's
// replies set to Any (and then its members sorted, as an update writes
// them).
func wildcardVarying(method string, reply []byte) json.RawMessage {
	paths := contract.VaryingMembers[method]
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

// setAny sets the member at path in v to Any where it exists.
func setAny(v any, path []string) any {
	if len(path) == 0 {
		return Any
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
