package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/hookwire/hookwire/sessiondb"
)

// parseFlags parses a subcommand's args with the CLI's conventions:
// -h/--help prints the usage to stdout and succeeds; a bad flag prints the
// error and the usage to stderr (exit 2), and so does an argument that is
// not a flag. done says the command is over, with code as its exit code.
func parseFlags(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (code int, done bool) {
	if code, done := parseFlagsWithArgs(fs, args, usage, stdout, stderr); done {
		return code, done
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hookwire %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2, true
	}
	return 0, false
}

// parseFlagsWithArgs is parseFlags for a command that takes arguments
// after its flags (fs.Args()).
func parseFlagsWithArgs(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	printUsage := func(w io.Writer) {
		fmt.Fprintln(w, usage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout)
		return 0, true
	case err != nil:
		printUsage(stderr)
		return 2, true
	}
	return 0, false
}

// stateTarget is the `--project DIR | --state FILE` pair of the commands
// that work on a state file.
type stateTarget struct {
	cmd     string
	project *string
	state   *string
}

func addStateFlags(fs *flag.FlagSet, projectUse, stateUse string) *stateTarget {
	return &stateTarget{
		cmd:     fs.Name(),
		project: fs.String("project", "", projectUse),
		state:   fs.String("state", "", stateUse),
	}
}

// errBothTargets is a usage error (exit 2).
var errBothTargets = errors.New("give --project or --state, not both")

// path is the state file named: --state made absolute, else the project's
// default file (sessiondb.ProjectStatePath, the one rule the shim also
// follows) for --project, else for defaultProject; "" when neither flag is
// given and defaultProject is "".
func (t *stateTarget) path(defaultProject string) (string, error) {
	switch {
	case *t.project != "" && *t.state != "":
		return "", errBothTargets
	case *t.state != "":
		// Absolute before any check or open: SQLite is given a URI, and
		// the link and FIFO checks must look at the file it opens.
		p, err := filepath.Abs(*t.state)
		if err != nil {
			return "", fmt.Errorf("--state %s: %w", *t.state, err)
		}
		return p, nil
	}
	dir := *t.project
	if dir == "" {
		dir = defaultProject
	}
	if dir == "" {
		return "", nil
	}
	p, err := sessiondb.ProjectStatePath(dir)
	if err != nil {
		return "", fmt.Errorf("the state database of %s: %w", dir, err)
	}
	return p, nil
}

// resolve is path for a command: a usage error is reported with exit 2,
// another with exit 1.
func (t *stateTarget) resolve(defaultProject string, stderr io.Writer) (path string, code int, ok bool) {
	p, err := t.path(defaultProject)
	switch {
	case errors.Is(err, errBothTargets):
		fmt.Fprintf(stderr, "hookwire %s: %v\n", t.cmd, err)
		return "", 2, false
	case err != nil:
		fmt.Fprintf(stderr, "hookwire %s: %v\n", t.cmd, err)
		return "", 1, false
	}
	return p, 0, true
}
