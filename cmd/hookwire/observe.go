package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hookwire/hookwire/handlers"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/statewatch"
)

const observeUsage = `usage: hookwire observe [--project DIR | --state FILE] [--framing auto|header|line]
                        [--log-level trace|debug|info|warn|error] [--log-file PATH]`

// observeCmd is `hookwire observe`: a read-only peer of `hookwire serve`
// for editors (PROTOCOL.md 9). It answers sessions.list and status from a
// state file another process serves, tells the client sessions.changed
// when the file changes, and never writes the file.
func observeCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("observe", flag.ContinueOnError)
	wire := addWireFlags(fs, "message framing: auto, header or line (editors send Content-Length headers)")
	target := addStateFlags(fs,
		"observe the state database of the project in `DIR` (its git top level's; default: the current directory)",
		"observe the state database `FILE`")
	if code, done := parseFlags(fs, args, observeUsage, stdout, stderr); done {
		return code
	}
	state, code, ok := target.resolve(".", stderr)
	if !ok {
		return code
	}
	fr, log, closeLog, ok := wire.open("hookwire observe", stderr)
	if !ok {
		return 2
	}
	defer closeLog()

	protocolOut := takeStdout()

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()

	ver := thisBuild().Version
	file := &watchedFile{}
	obs := handlers.NewObserver(handlers.Options{Version: ver, Log: log, OnExit: cancel}, file)
	w, err := statewatch.Start(ctx, state, statewatch.Options{Log: log, OnChange: obs.SessionsChanged, OnSubagentsChanged: obs.SubagentsChanged})
	if err != nil {
		fmt.Fprintln(stderr, "hookwire observe:", err)
		return 1
	}
	file.Watcher = w // before Serve: nothing reads file until a request comes
	log.Info().Str("version", ver).Int("pid", os.Getpid()).Str("state", w.Status().File).
		Str("watch", w.Status().Watch).Msg("observing")
	in, restoreIn := protocolIn()
	defer restoreIn()
	err = rpc.Serve(ctx, in, protocolOut, obs, rpc.Options{
		Framing:         fr,
		MaxMessageBytes: obs.MaxMessageBytes,
		Log:             log,
		Notifications:   obs.Notifications(),
	})
	logStopped(log, err)
	return 0
}

// watchedFile is a statewatch.Watcher as the observer's ObservedFile.
type watchedFile struct{ *statewatch.Watcher }

func (f *watchedFile) Status() handlers.ObservedFileStatus {
	return handlers.ObservedFileStatus(f.Watcher.Status())
}
