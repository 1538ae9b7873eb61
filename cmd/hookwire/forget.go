package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/hookwire/hookwire/sessiondb"
)

// forgetCmd is `hookwire forget`: it removes remembered sessions from the
// state database in one transaction, while sidecars run: they see the
// change at their next request.
func forgetCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("forget", flag.ContinueOnError)
	target := addStateFlags(fs,
		"edit the default state database (the shim's) of the project in `DIR`; default: the current directory",
		"edit the state database `FILE`")
	all := fs.Bool("all", false, "forget everything")
	parent := fs.String("parent", "", "forget what this parent session holds, as if it were deleted")
	alias := fs.String("alias", "", "forget the entries with this alias (under --parent, else under every parent)")
	if code, done := parseFlags(fs, args, "usage: hookwire forget [--project DIR | --state FILE] [--all | --parent ID | --alias A]", stdout, stderr); done {
		return code
	}
	switch {
	case *all && (*parent != "" || *alias != ""):
		fmt.Fprintln(stderr, "hookwire forget: --all forgets everything; leave out --parent and --alias")
		return 2
	case !*all && *parent == "" && *alias == "":
		fmt.Fprintln(stderr, "hookwire forget: say what to forget: --all, --parent ID or --alias A")
		return 2
	}
	path, code, ok := target.resolve(".", stderr)
	if !ok {
		return code
	}
	if err := sessiondb.CheckStatePath(path); err != nil {
		fmt.Fprintln(stderr, "hookwire forget:", err)
		return 1
	}
	if !sessiondb.HasState(path) {
		if !*all {
			// Asked for something by name that nothing holds: say so, as
			// for a database that lacks it (a typo is not a success).
			fmt.Fprintf(stderr, "hookwire forget: %s: no state database, so nothing holds %s\n", path, forgetWhat(*parent, *alias))
			return 1
		}
		fmt.Fprintf(stdout, "%s: no state database, nothing to forget\n", path)
		return 0
	}

	done, err := sessiondb.Forget(context.Background(), path, sessiondb.ForgetSpec{All: *all, Parent: *parent, Alias: *alias})
	if err != nil {
		fmt.Fprintln(stderr, "hookwire forget:", err)
		return 1
	}
	if !*all && done == (sessiondb.Forgotten{}) {
		fmt.Fprintf(stderr, "hookwire forget: %s: nothing holds %s; nothing forgotten (hookwire sessions lists what is remembered)\n",
			path, forgetWhat(*parent, *alias))
		return 1
	}
	if *all {
		// Everything the database held, each kind counted as deleted.
		fmt.Fprintf(stdout, "%s: forgot everything: %s, %s, %s, %s, %s, %s\n", path, plural(done.Parents, "parent session"),
			pluralEntries(done.Entries), plural(done.Sessions, "session agent"),
			plural(done.Cache, "prompt-cache record"), plural(done.Health, "model health record"), plural(done.Subagents, "subagent record"))
		return 0
	}
	fmt.Fprintf(stdout, "%s: forgot %s, %s, %s\n", path, plural(done.Parents, "parent session"),
		pluralEntries(done.Entries), plural(done.Sessions, "session agent"))
	return 0
}

// forgetWhat names what --parent and --alias ask to forget.
func forgetWhat(parent, alias string) string {
	switch {
	case alias != "" && parent != "":
		return fmt.Sprintf("the alias %q under the parent session %s", alias, parent)
	case alias != "":
		return fmt.Sprintf("the alias %q (under any parent session)", alias)
	}
	return "the parent session " + parent
}
