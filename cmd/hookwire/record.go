package main

import (
	"flag"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/handlers"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/transcript"
)

// `hookwire serve --record FILE` writes a recording (transcript.Recorder)
// of the session it serves, for `hookwire replay FILE`. This file holds
// the flags and the wiring; the format and the recorder are package
// transcript's.

// recordFlags are serve's --record and --record-redact.
type recordFlags struct {
	path   *string
	redact *bool
}

func addRecordFlags(fs *flag.FlagSet) recordFlags {
	return recordFlags{
		path: fs.String("record", "", "write every message in and out to the transcript `FILE` (mode 0600), for hookwire replay; "+
			"if FILE exists, FILE-2, FILE-3, ... is used"),
		redact: fs.Bool("record-redact", false, "in the recording, replace every string the sidecar never reads (tool outputs and inputs, file contents, "+
			"attachments, event details; member names inside them too) by '*' of the same length"),
	}
}

// open starts the recording the flags ask for: nil when none is asked for,
// or when the file cannot be created (logged: serving matters more).
func (f recordFlags) open(log zerolog.Logger, version string) *transcript.Recorder {
	if *f.path == "" {
		return nil
	}
	file, err := transcript.CreateRecording(*f.path)
	if err != nil {
		log.Warn().Err(err).Msg("cannot record this session")
		return nil
	}
	log.Info().Str("file", file.Name()).Bool("redact", *f.redact).Msg("recording the session")
	opts := transcript.RecordOptions{
		Heading: "recorded by hookwire " + version + " with `hookwire serve --record`; replay with `hookwire replay FILE`",
		Log:     log.With().Str("record", file.Name()).Logger(),
	}
	if *f.redact {
		opts.Heading += "; redacted: the strings the sidecar never reads are '*'"
		opts.Redact = handlers.RedactParams
	}
	return transcript.NewRecorder(file, opts)
}

// recordLoaded records store as it is now (Recorder.Loaded), when rec is
// not nil: serve calls it once the state file has been read into store.
func recordLoaded(rec *transcript.Recorder, store *sessions.Store) {
	if rec == nil {
		return
	}
	snapshot, err := store.Snapshot()
	if err != nil {
		rec.GiveUp(fmt.Errorf("the store as loaded: %w", err))
		return
	}
	rec.Loaded(snapshot)
}

// asObserver is rec as rpc.Options.Observer: nil when rec is (a nil
// *Recorder in the interface would not be nil).
func asObserver(rec *transcript.Recorder) rpc.Observer {
	if rec == nil {
		return nil
	}
	return rec
}
