package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hookwire/hookwire/sessions"
)

// forgetCmd is `hookwire forget`: it removes remembered sessions from a
// state file under the sidecar's lock, and refuses (exit 1, file
// untouched) while a running sidecar holds it.
func forgetCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("forget", flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", "", "the project directory whose default state file (the shim's) to edit; default: the current directory")
	state := fs.String("state", "", "the state file to edit")
	all := fs.Bool("all", false, "forget everything")
	parent := fs.String("parent", "", "forget what this parent session holds, as if it were deleted")
	alias := fs.String("alias", "", "forget the entries with this alias (under --parent, else under every parent)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hookwire forget [--project DIR | --state FILE] [--all | --parent ID | --alias A]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "hookwire forget: unexpected argument %q\n", fs.Arg(0))
		return 2
	case *project != "" && *state != "":
		fmt.Fprintln(stderr, "hookwire forget: give --project or --state, not both")
		return 2
	case *all && (*parent != "" || *alias != ""):
		fmt.Fprintln(stderr, "hookwire forget: --all forgets everything; leave out --parent and --alias")
		return 2
	case !*all && *parent == "" && *alias == "":
		fmt.Fprintln(stderr, "hookwire forget: say what to forget: --all, --parent ID or --alias A")
		return 2
	}

	path := *state
	if path == "" {
		dir := *project
		if dir == "" {
			dir = "."
		}
		p, err := sessions.ProjectStatePath(dir)
		if err != nil {
			fmt.Fprintln(stderr, "hookwire forget:", err)
			return 1
		}
		path = p
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdout, "%s: no state file, nothing to forget\n", path)
		return 0
	}

	done, err := sessions.Forget(path, sessions.ForgetSpec{All: *all, Parent: *parent, Alias: *alias})
	var locked *sessions.LockedError
	switch {
	case errors.As(err, &locked) && locked.PID > 0:
		fmt.Fprintf(stderr, "hookwire forget: %s is in use by a running sidecar (pid %d); nothing changed. Stop OpenCode (or that process) and try again.\n", path, locked.PID)
		return 1
	case errors.As(err, &locked):
		fmt.Fprintf(stderr, "hookwire forget: %s is in use by a running sidecar; nothing changed. Stop OpenCode and try again.\n", path)
		return 1
	case err != nil:
		fmt.Fprintln(stderr, "hookwire forget:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: forgot %d parent sessions, %d entries, %d session agents\n", path, done.Parents, done.Entries, done.Sessions)
	return 0
}
