package sessiondb

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/internal/racetest"
	"github.com/hookwire/hookwire/sessions"
)

// Tests of the store across processes: the test binary runs itself as the
// other processes (TestStoreChildProcess), each opening one database.

// childReport is what a child process says of its store, on stdout.
type childReport struct {
	Mode       string `json:"mode"`
	Reason     string `json:"reason"`
	WriteError string `json:"writeError"`
	Aliases    int    `json:"aliases"`
}

// TestStoreChildProcess is not a test: run by startChildren, with
// HOOKWIRE_STORE_CHILD naming the database, it waits for the instant in
// HOOKWIRE_STORE_START (Unix ns), opens the database, makes
// HOOKWIRE_STORE_WRITES aliases under parent HOOKWIRE_STORE_PARENT,
// closes it and prints a childReport.
func TestStoreChildProcess(t *testing.T) {
	path := os.Getenv("HOOKWIRE_STORE_CHILD")
	if path == "" {
		t.Skip("run as a child process only")
	}
	writes, _ := strconv.Atoi(os.Getenv("HOOKWIRE_STORE_WRITES"))
	parent := os.Getenv("HOOKWIRE_STORE_PARENT")
	if path == "-" {
		// Rounds: each line on stdin is "<start ns> <path>", one round.
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			ns, p, ok := strings.Cut(sc.Text(), " ")
			if !ok {
				continue
			}
			start, _ := strconv.ParseInt(ns, 10, 64)
			childRound(p, start, writes, parent)
		}
		return
	}
	start, _ := strconv.ParseInt(os.Getenv("HOOKWIRE_STORE_START"), 10, 64)
	childRound(path, start, writes, parent)
}

// childRound waits for the instant start (Unix ns), opens the database at
// path, makes writes aliases under parent, closes it and prints a
// childReport line ("REPORT {...}").
func childRound(path string, start int64, writes int, parent string) {
	time.Sleep(time.Until(time.Unix(0, start)))
	s := sessions.New(sessions.Config{})
	logs := &logBuffer{}
	d, err := OpenDatabase(context.Background(), path, s, logs.logger().Level(zerolog.WarnLevel))
	if err != nil {
		fmt.Println(`REPORT {"mode":"error","reason":` + strconv.Quote(err.Error()) + `}`)
		return
	}
	rep := childReport{Mode: d.State().Mode, Reason: d.State().Reason}
	for i := range writes {
		call := parent + "_call_" + strconv.Itoa(i)
		s.Tasks().BeginCall(context.Background(), call, parent, "agent"+strconv.Itoa(i), "task "+strconv.Itoa(i), "")
		s.Tasks().CompleteCall(context.Background(), call, out(parent+"_task_"+strconv.Itoa(i)))
		if e := d.State().LastWriteError; e != "" && rep.WriteError == "" {
			rep.WriteError = e
		}
	}
	rep.Aliases = len(s.Tasks().List(parent))
	if l := logs.String(); l != "" && rep.WriteError == "" {
		rep.WriteError = "logged: " + l
	}
	if err := d.Close(); err != nil && rep.WriteError == "" {
		rep.WriteError = "close: " + err.Error()
	}
	b, _ := json.Marshal(rep)
	os.Stdout.Write(append([]byte("REPORT "), append(b, '\n')...))
}

// runChildren runs n child processes on the database at path, all opening
// it at the same instant, each making writes aliases under its own parent
// ("p<i>"); it returns their reports.
func runChildren(t *testing.T, path string, n, writes int) []childReport {
	t.Helper()
	start := time.Now().Add(150 * time.Millisecond).UnixNano()
	cmds := make([]*exec.Cmd, n)
	outs := make([][]byte, n)
	errs := make([]error, n)
	done := make(chan int, n)
	for i := range n {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStoreChildProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "HOOKWIRE_STORE_CHILD="+path, "HOOKWIRE_STORE_START="+strconv.FormatInt(start, 10),
			"HOOKWIRE_STORE_WRITES="+strconv.Itoa(writes), "HOOKWIRE_STORE_PARENT=p"+strconv.Itoa(i))
		cmds[i] = cmd
		go func() { outs[i], errs[i] = cmd.CombinedOutput(); done <- i }()
	}
	reps := make([]childReport, n)
	for range n {
		i := <-done
		require.NoError(t, errs[i], string(outs[i]))
		var line []byte
		for _, l := range splitLines(outs[i]) {
			if rest, ok := cutPrefix(l, "REPORT "); ok {
				line = rest
			}
		}
		require.NotNil(t, line, "child %d printed no report: %s", i, outs[i])
		require.NoError(t, json.Unmarshal(line, &reps[i]))
	}
	return reps
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		out = append(out, b[:i])
		if i < len(b) {
			i++
		}
		b = b[i:]
	}
	return out
}

func cutPrefix(b []byte, p string) ([]byte, bool) {
	if len(b) >= len(p) && string(b[:len(p)]) == p {
		return b[len(p):], true
	}
	return nil, false
}

// 60 rounds of two processes opening a new database at the same instant
// (PRAGMA journal_mode=WAL answered SQLITE_BUSY at once to the loser, which
// ran memory-only: 6 of 200 starts): both are persistent every round, no
// write fails, and every alias both made is in the database. The same two
// processes run every round (roundChildren): what races is the open, and
// starting 120 race-instrumented test binaries took two minutes of a CI
// run on its own.
func TestVolumeOpenTogether60RoundsTwoProcesses(t *testing.T) {
	racetest.Volume(t)
	if testing.Short() {
		t.Skip("starts two processes for 60 rounds")
	}
	const rounds, writes = 60, 5
	rc := startRoundChildren(t, 2, writes)
	for round := range rounds {
		path := filepath.Join(t.TempDir(), "state.db")
		if round%2 == 1 {
			// An existing database left in rollback mode by a clean
			// exit: both turn WAL on again.
			s := sessions.New(sessions.Config{})
			d, err := OpenDatabase(t.Context(), path, s, zerolog.Nop())
			require.NoError(t, err)
			require.NoError(t, d.Close())
		}
		reps := rc.round(t, path)
		for i, r := range reps {
			require.Equal(t, sessions.StatePersistent, r.Mode, "round %d child %d: %s", round, i, r.Reason)
			require.Empty(t, r.WriteError, "round %d child %d", round, i)
			require.Equal(t, writes, r.Aliases, "round %d child %d", round, i)
		}
		s := sessions.New(sessions.Config{})
		openTestDB(t, path, s)
		for i := range 2 {
			assert.Len(t, s.Tasks().List("p"+strconv.Itoa(i)), writes, "round %d: every alias of child %d kept", round, i)
		}
	}
	t.Logf("%d rounds of two processes opening together: all persistent, no write error, %d aliases each kept", rounds, writes)
}

// roundChildren are child processes (TestStoreChildProcess with
// HOOKWIRE_STORE_CHILD=-) that each open a database when told, at one
// instant, once per round.
type roundChildren struct {
	in   []io.WriteCloser
	out  []*bufio.Scanner
	cmds []*exec.Cmd
}

func startRoundChildren(t *testing.T, n, writes int) *roundChildren {
	t.Helper()
	rc := &roundChildren{}
	for i := range n {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStoreChildProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "HOOKWIRE_STORE_CHILD=-",
			"HOOKWIRE_STORE_WRITES="+strconv.Itoa(writes), "HOOKWIRE_STORE_PARENT=p"+strconv.Itoa(i))
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		require.NoError(t, err)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		rc.in, rc.out, rc.cmds = append(rc.in, in), append(rc.out, bufio.NewScanner(out)), append(rc.cmds, cmd)
	}
	t.Cleanup(func() {
		for i, cmd := range rc.cmds {
			rc.in[i].Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("child %d: %v", i, err)
			}
		}
	})
	return rc
}

// round has every child open the database at path at one instant, a
// little ahead, and returns their reports.
func (rc *roundChildren) round(t *testing.T, path string) []childReport {
	t.Helper()
	start := time.Now().Add(100 * time.Millisecond).UnixNano()
	for _, in := range rc.in {
		_, err := fmt.Fprintf(in, "%d %s\n", start, path)
		require.NoError(t, err)
	}
	reps := make([]childReport, len(rc.out))
	for i, sc := range rc.out {
		var line []byte
		for line == nil && sc.Scan() {
			line, _ = cutPrefix(sc.Bytes(), "REPORT ")
		}
		require.NotNil(t, line, "child %d printed no report (%v)", i, sc.Err())
		require.NoError(t, json.Unmarshal(line, &reps[i]))
	}
	return reps
}
