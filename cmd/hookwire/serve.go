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
	"github.com/hookwire/hookwire/sessions"
)

func serve(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	framing := fs.String("framing", "auto", "message framing: auto, header or line")
	level := fs.String("log-level", "info", "log level: trace, debug, info, warn or error")
	logFile := fs.String("log-file", "", "write logs to this file instead of stderr")
	record := addRecordFlags(fs)
	target := addStateFlags(fs,
		"keep the session store in the state file of the project in `DIR` (its git top level's; the file hookwire sessions and doctor read)",
		"keep the session store in `FILE` across restarts")
	if code, done := parseFlags(fs, args, serveUsage, stdout, stderr); done {
		return code
	}
	state, code, ok := target.resolve("", stderr)
	if !ok {
		return code
	}
	fr, err := rpc.ParseFraming(*framing)
	if err != nil {
		fmt.Fprintln(stderr, "hookwire: --framing:", err)
		return 2
	}
	log, closeLog, err := newLogger(*level, *logFile, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "hookwire:", err)
		return 2
	}
	defer closeLog()

	// stdout is the protocol. Keep the real one for rpc and point
	// os.Stdout at stderr, so that nothing else can ever write there.
	protocolOut := os.Stdout
	os.Stdout = os.Stderr

	if isTerminal(os.Stdin) {
		fmt.Fprintln(stderr, "hookwire speaks JSON-RPC 2.0 on stdin/stdout (see PROTOCOL.md); it is meant to be spawned by a client. Try `hookwire demo`.")
	}

	// A client that goes away closes our stdout. Without this, Go's runtime
	// kills the process with SIGPIPE on the next reply, before the final
	// state flush; with it the write fails with EPIPE and we exit cleanly.
	signal.Ignore(syscall.SIGPIPE)

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
	opts := handlers.Options{Version: ver, Log: log, OnExit: cancel}
	if state != "" {
		opts.OpenState = func(store *sessions.Store) handlers.Persistence {
			defer rec.loadedFrom(store) // a recording starts from the store as loaded
			// ctx ends on SIGTERM/SIGINT: a load in progress then stops
			// and leaves the file as it is.
			p, err := sessions.OpenPersister(ctx, state, store, log, sessions.DefaultDebounce)
			if err != nil {
				log.Warn().Err(err).Str("state", state).Msg("state file unusable; keeping state in memory")
				return nil
			}
			return p
		}
	}
	srv := handlers.New(opts)
	log.Info().Str("version", ver).Int("pid", os.Getpid()).Msg("serving")
	err = rpc.Serve(ctx, os.Stdin, protocolOut, srv, rpc.Options{
		Framing:         fr,
		MaxMessageBytes: srv.MaxMessageBytes,
		Log:             log,
		Observer:        rec.observer(),
	})
	if cerr := srv.Close(); cerr != nil {
		log.Warn().Err(cerr).Msg("final state write failed")
	}
	rec.Close()
	if err != nil && !errors.Is(err, context.Canceled) {
		// The client is gone (stdout closed): nobody is left to serve.
		log.Info().Err(err).Msg("output closed; exiting")
	}
	log.Info().Msg("stopped")
	return 0
}

func newLogger(level, file string, stderr io.Writer) (zerolog.Logger, func(), error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Nop(), nil, fmt.Errorf("--log-level must be trace, debug, info, warn or error, not %q", level)
	}
	out, closeFn := stderr, func() {}
	if file != "" {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
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
