package main

import (
	"bytes"
	"context"
	"os/exec"
	"sync"
	"time"
)

// boundedCommand is an external command doctor runs under a hard bound
// that includes its pipes: when ctx ends, the command's whole process
// group is killed, and Wait gives up on output pipes a surviving child
// still holds after waitDelay. Without it a wrapper script whose child
// keeps stdout open holds doctor long past its bound (issue 39, item 9).
func boundedCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	ownProcessGroup(cmd)
	cmd.WaitDelay = waitDelay
	return cmd
}

// waitDelay: how long Wait waits for the pipes after the command is
// killed; a variable so that a test can shorten it.
var waitDelay = time.Second

// lineWatch is an exec.Cmd's Stdout that calls match on each line as it
// comes (and on a last line without a newline when flushed) and closes
// found the first time match says yes. It keeps only the line being
// read, at most maxLine bytes of it, so a command that prints without
// end costs no memory.
type lineWatch struct {
	match func(line string) bool
	found chan struct{}

	mu   sync.Mutex
	line []byte
	hit  string
	done bool
}

const maxLine = 64 << 10

func newLineWatch(match func(string) bool) *lineWatch {
	return &lineWatch{match: match, found: make(chan struct{})}
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 && !w.done {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		w.check()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWatch) add(p []byte) {
	if room := maxLine - len(w.line); room > 0 {
		w.line = append(w.line, p[:min(len(p), room)]...)
	}
}

func (w *lineWatch) check() {
	if !w.done && w.match(string(w.line)) {
		w.hit, w.done = string(w.line), true
		close(w.found)
	}
	w.line = w.line[:0]
}

// result flushes a last unterminated line and returns the matching line.
func (w *lineWatch) result() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.line) > 0 {
		w.check()
	}
	return w.hit
}
