package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/handlers"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
	"github.com/hookwire/hookwire/transcript"
)

// serveFlags is serve's flag set; doctor parses the plugin's args option
// with it, so that it reads them exactly as the sidecar does.
func serveFlags() (*flag.FlagSet, wireFlags, recordFlags, *stateTarget) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	wire := addWireFlags(fs, "message framing: auto, header or line")
	record := addRecordFlags(fs)
	target := addStateFlags(fs,
		"keep the session store in the state database of the project in `DIR` (its git top level's; the file hookwire sessions and doctor read)",
		"keep the session store in `FILE` across restarts")
	return fs, wire, record, target
}

func serve(args []string, stdout, stderr io.Writer) int {
	fs, wire, record, target := serveFlags()
	if code, done := parseFlags(fs, args, serveUsage, stdout, stderr); done {
		return code
	}
	// A state path that cannot be named (no HOME nor XDG_STATE_HOME, the
	// working directory gone) leaves the store in memory, which status
	// says; serve never exits for it.
	state, err := target.path("")
	noState := ""
	switch {
	case errors.Is(err, errBothTargets):
		fmt.Fprintf(stderr, "hookwire serve: %v\n", err)
		return 2
	case err != nil:
		noState = err.Error()
	}
	fr, log, closeLog, ok := wire.open("hookwire", stderr)
	if !ok {
		return 2
	}
	defer closeLog()

	protocolOut := takeStdout()
	if isTerminal(os.Stdin) {
		fmt.Fprintln(stderr, "hookwire speaks JSON-RPC 2.0 on stdin/stdout (see PROTOCOL.md); it is meant to be spawned by a client. Try `hookwire demo`.")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case sig := <-sigs:
			log.Info().Str("signal", sig.String()).Msg("stopping")
			cancel()
		case <-ctx.Done():
		}
	}()

	tuneGC()
	ver := thisBuild().Version
	rec := record.open(log, ver)
	srv := newServer(ctx, cancel, log, state, noState, rec)
	log.Info().Str("version", ver).Int("pid", os.Getpid()).Msg("serving")
	in, restoreIn := protocolIn()
	defer restoreIn()
	err = rpc.Serve(ctx, in, protocolOut, srv, rpc.Options{
		Framing:         fr,
		MaxMessageBytes: srv.MaxMessageBytes,
		Log:             log,
		Observer:        asObserver(rec),
		Notifications:   srv.Notifications(),
	})
	if cerr := srv.Close(); cerr != nil {
		log.Warn().Err(cerr).Msg("final state write failed")
	}
	if rec != nil {
		rec.Close()
	}
	logStopped(log, err)
	return 0
}

// newServer returns the handlers of one session: with the store kept in
// the state file at state when it is not "" (a recording, when rec is not
// nil, starts from the store as loaded), or in memory with noState as the
// reason status gives when that is not ""; stop ends the session (exit).
func newServer(ctx context.Context, stop func(), log zerolog.Logger, state, noState string, rec *transcript.Recorder) *handlers.Server {
	opts := handlers.Options{Version: thisBuild().Version, Log: log, OnExit: stop,
		Subagents: func() subagents.Service { return sessiondb.MemorySubagents() }}
	if noState != "" {
		opts.OpenState = func(store *sessions.Store) handlers.Persistence {
			defer recordLoaded(rec, store)
			return sessiondb.MemoryOnly("", noState, log)
		}
	} else if state != "" {
		opts.OpenState = func(store *sessions.Store) handlers.Persistence {
			defer recordLoaded(rec, store) // a recording starts from the store as loaded
			// ctx ends on SIGTERM/SIGINT: a load in progress then stops
			// and leaves the file as it is.
			p, err := sessiondb.OpenDatabase(ctx, state, store, log)
			if err != nil {
				log.Warn().Err(err).Str("state", state).Msg("state database unusable; keeping state in memory")
				return nil
			}
			return p
		}
	}
	return handlers.New(opts)
}

// wireFlags are the flags of the commands that speak the protocol on
// stdin/stdout (serve, observe): its framing and where logs go.
type wireFlags struct {
	framing, level, logFile *string
}

func addWireFlags(fs *flag.FlagSet, framingUse string) wireFlags {
	return wireFlags{
		framing: fs.String("framing", "auto", framingUse),
		level:   fs.String("log-level", "info", "log level: trace, debug, info, warn or error"),
		logFile: fs.String("log-file", "", "write logs to this file instead of stderr"),
	}
}

// open checks the framing and opens the log. A bad value is reported on
// stderr after prefix, ok false: a usage error (exit 2).
func (f wireFlags) open(prefix string, stderr io.Writer) (fr rpc.Framing, log zerolog.Logger, closeLog func(), ok bool) {
	fr, err := rpc.ParseFraming(*f.framing)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --framing: %v\n", prefix, err)
		return fr, log, nil, false
	}
	log, closeLog, err = newLogger(*f.level, *f.logFile, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return fr, log, nil, false
	}
	return fr, log, closeLog, true
}

// takeStdout returns the real stdout, for the protocol alone, and points
// os.Stdout at stderr so that nothing else can ever write there.
func takeStdout() *os.File {
	protocolOut := os.Stdout
	os.Stdout = os.Stderr
	// A client that goes away closes our stdout. Without this, Go's runtime
	// kills the process with SIGPIPE on the next reply, before the final
	// state flush; with it the write fails with EPIPE and we exit cleanly.
	signal.Ignore(syscall.SIGPIPE)
	return protocolOut
}

// logStopped logs the end of rpc.Serve's err.
func logStopped(log zerolog.Logger, err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		// The client is gone (stdout closed): nobody is left to serve.
		log.Info().Err(err).Msg("output closed; exiting")
	}
	log.Info().Msg("stopped")
}

func newLogger(level, file string, stderr io.Writer) (zerolog.Logger, func(), error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Nop(), nil, fmt.Errorf("--log-level must be trace, debug, info, warn or error, not %q", level)
	}
	out, closeFn := stderr, func() {}
	if file != "" {
		f, err := openLogFile(file)
		if err != nil {
			return zerolog.Nop(), nil, fmt.Errorf("opening log file: %w", err)
		}
		out, closeFn = f, func() { f.Close() }
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger(), closeFn, nil
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
