package transcript

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hookwire/hookwire/rpc"
)

// ReplyTimeout bounds the wait for one reply when ReplayOptions do not
// say, so a sidecar that fails to answer makes a replay fail instead of
// hang.
const ReplyTimeout = 10 * time.Second

// stopWait bounds how long a stopped sidecar may take to end before it is
// killed (a process) or abandoned (a server in this process).
const stopWait = 5 * time.Second

// A Target starts the sidecars a replay runs against: a fresh one for
// each transcript, reading line-framed messages.
type Target interface {
	// Start starts a sidecar whose session store starts from the state
	// file at state, or empty when state is "". The caller ends it with
	// Sidecar.Stop.
	Start(state string) (*Sidecar, error)
}

// A Sidecar is a started sidecar as a replay drives it.
type Sidecar struct {
	// In is what the client sends.
	In io.Writer
	// Out carries the sidecar's replies.
	Out io.Reader
	// Logs returns what the sidecar has logged so far, for the message of
	// a failed replay; nil when there is nothing to show.
	Logs func() string
	// Stop ends the input and waits until the sidecar has stopped, for at
	// most a few seconds.
	Stop func()
}

// Process is the Target that runs `Bin serve --framing line --log-level
// error [--state FILE]` over real pipes: what `hookwire replay` does.
type Process struct {
	Bin string
}

// Start implements Target.
func (p Process) Start(state string) (*Sidecar, error) {
	args := []string{"serve", "--framing", "line", "--log-level", "error"}
	if state != "" {
		args = append(args, "--state", state)
	}
	cmd := exec.Command(p.Bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", p.Bin, err)
	}
	stop := func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(stopWait):
			cmd.Process.Kill()
			<-done
		}
	}
	return &Sidecar{In: stdin, Out: out, Logs: logs.String, Stop: stop}, nil
}

// InProcess is the Target that runs a server in this process over pipes:
// the function serves what it reads from in, writing replies to out,
// until in ends or ctx is cancelled. state is the state file to start
// from, "" for none.
type InProcess func(ctx context.Context, state string, in io.Reader, out io.Writer) error

// Start implements Target.
func (serve InProcess) Start(state string) (*Sidecar, error) {
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var serveErr error
	go func() {
		defer close(done)
		serveErr = serve(ctx, state, reqR, respW)
		reqR.Close()
		respW.Close()
	}()
	logs := func() string {
		select {
		case <-done:
			if serveErr != nil {
				return "serve: " + serveErr.Error()
			}
		default:
		}
		return ""
	}
	stop := func() {
		reqW.Close()
		select {
		case <-done:
		case <-time.After(stopWait):
			cancel()
			respR.Close()
		}
		cancel()
	}
	return &Sidecar{In: reqW, Out: respR, Logs: logs, Stop: stop}, nil
}

// ReplayOptions configure Replay.
type ReplayOptions struct {
	// Update replaces each recv step's message with the reply the sidecar
	// sent, keeping Any where the step had it, instead of comparing them.
	Update bool
	// ReplyTimeout bounds the wait for each reply; 0 means ReplyTimeout.
	ReplyTimeout time.Duration
}

// A Difference is a reply that differs from the one the transcript
// expects.
type Difference struct {
	Step int    // the recv step, counted from 1
	Line int    // where the step starts in its file; 0 when unknown
	What string // where they differ and how (Diff)
	Want json.RawMessage
	Got  json.RawMessage
}

// String is the difference as `hookwire replay` reports it.
func (d Difference) String() string {
	return fmt.Sprintf("step %d (line %d): %s\n  want %s\n  got  %s", d.Step, d.Line, d.What, Readable(d.Want), Readable(d.Got))
}

// Replay runs steps against a fresh sidecar from target: it sends each
// send and sendRaw step, and compares each reply with the next recv step.
// It returns one Difference per reply that differs; with opts.Update it
// replaces the replies in steps instead and returns none. An error says
// why the replay could not go on (a sidecar that does not start or stops
// answering); the differences found before it are returned with it.
func Replay(steps []Step, target Target, opts ReplayOptions) ([]Difference, error) {
	timeout := opts.ReplyTimeout
	if timeout <= 0 {
		timeout = ReplyTimeout
	}
	state, cleanup, err := stateFile(steps)
	if err != nil {
		return nil, err
	}
	defer cleanup() // after the sidecar has stopped (deferred below)
	c, err := Dial(target, state)
	if err != nil {
		return nil, err
	}
	defer c.Close()

	var diffs []Difference
	for i, st := range steps {
		switch {
		case st.Send != nil:
			if err := c.Send(compact(st.Send)); err != nil {
				return diffs, fmt.Errorf("step %d: writing: %w", i+1, err)
			}
		case st.SendRaw != nil:
			text, err := st.RawText()
			if err != nil {
				return diffs, fmt.Errorf("step %d: %w", i+1, err)
			}
			if err := c.SendRaw([]byte(text)); err != nil {
				return diffs, fmt.Errorf("step %d: writing: %w", i+1, err)
			}
		case st.Recv != nil:
			got, err := c.Next(timeout)
			if err != nil {
				return diffs, fmt.Errorf("step %d: no reply: %w (sidecar log: %s)", i+1, err, c.Logs())
			}
			if opts.Update {
				steps[i].Recv = KeepWildcards(st.Recv, got)
				continue
			}
			if d := Diff(st.Recv, got); d != "" {
				diffs = append(diffs, Difference{Step: i + 1, Line: st.Line, What: d, Want: st.Recv, Got: got})
			}
		}
	}
	return diffs, nil
}

// ReplayFile reads the transcript at path and replays it (Replay). With
// opts.Update it rewrites the file with the sidecar's replies. It returns
// the steps (updated, with opts.Update) with the differences.
func ReplayFile(path string, target Target, opts ReplayOptions) ([]Step, []Difference, error) {
	steps, err := ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	diffs, err := Replay(steps, target, opts)
	if err != nil {
		return steps, diffs, err
	}
	if opts.Update {
		return steps, nil, WriteFile(path, steps)
	}
	return steps, diffs, nil
}

// stateFile writes the transcript's state step to a temporary file and
// returns its path ("" when there is no state step) and a function that
// removes it. A transcript has at most one state step.
func stateFile(steps []Step) (path string, cleanup func(), err error) {
	var state json.RawMessage
	for i, st := range steps {
		if st.State == nil {
			continue
		}
		if state != nil {
			return "", nil, fmt.Errorf("step %d (line %d): a second state step (a transcript starts from one state)", i+1, st.Line)
		}
		state = st.State
	}
	if state == nil {
		return "", func() {}, nil
	}
	dir, err := os.MkdirTemp("", "hookwire-replay-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, state, 0o600); err != nil {
		cleanup()
		return "", nil, err
	}
	return path, cleanup, nil
}

// A Client is the client's side of a started sidecar: it sends
// line-framed messages and takes the replies one at a time, each with a
// deadline. Replay drives one; so does anything else that talks to a
// sidecar through a Target (hookwire demo). Not safe for concurrent use.
type Client struct {
	sc      *Sidecar
	lines   chan []byte
	readErr chan error
	quit    chan struct{}
}

// Dial starts a sidecar from target (Target.Start with state) and returns
// its client. Close stops it.
func Dial(target Target, state string) (*Client, error) {
	sc, err := target.Start(state)
	if err != nil {
		return nil, err
	}
	c := &Client{sc: sc, lines: make(chan []byte, 16), readErr: make(chan error, 1), quit: make(chan struct{})}
	go c.read()
	return c, nil
}

// read hands each non-blank line of the sidecar's output to Next, until
// the output ends or Close. The notifications the sidecar sends on its own
// (cache.bust, subagents.changed: sent when they fall due, between any two
// replies) are left out: a transcript keeps none, and Next is the next
// reply.
func (c *Client) read() {
	br := bufio.NewReaderSize(c.sc.Out, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 && !rpc.IsNotification(line) {
			select {
			case c.lines <- line:
			case <-c.quit:
				return
			}
		}
		if err != nil {
			c.readErr <- err
			return
		}
	}
}

// Send sends msg, one line: it must hold no newline.
func (c *Client) Send(msg []byte) error {
	_, err := c.sc.In.Write(append(msg[:len(msg):len(msg)], '\n'))
	return err
}

// SendRaw sends b as it is.
func (c *Client) SendRaw(b []byte) error {
	_, err := c.sc.In.Write(b)
	return err
}

// Next returns the next reply, waiting at most timeout.
func (c *Client) Next(timeout time.Duration) (json.RawMessage, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case line := <-c.lines:
		return line, nil
	case err := <-c.readErr:
		// Every line read before the error is already queued.
		select {
		case line := <-c.lines:
			c.readErr <- err
			return line, nil
		default:
		}
		c.readErr <- err
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) {
			return nil, errors.New("sidecar closed its output")
		}
		return nil, err
	case <-timer.C:
		return nil, fmt.Errorf("timed out after %s", timeout)
	}
}

// Logs returns what the sidecar has logged so far, trimmed.
func (c *Client) Logs() string {
	if c.sc.Logs == nil {
		return ""
	}
	return strings.TrimSpace(c.sc.Logs())
}

// Close stops the sidecar (Sidecar.Stop) and lets the reading goroutine
// end, whether or not its replies were taken.
func (c *Client) Close() {
	c.sc.Stop()
	close(c.quit)
}

// lockedBuffer collects a process's stderr, which exec writes from
// another goroutine while a failed replay reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
