package main

// doctor's OpenCode section: which OpenCode is on PATH and what hookwire
// does on it (README's compatibility table; docs/OPENCODE.md "Every
// OpenCode version"). Kept apart from the other checks so that each can
// change without the other.

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const (
	// minOpenCode is the oldest OpenCode 1.x hookwire runs on; the shim
	// (shim/src/host.ts MIN_OPENCODE) turns itself off below it.
	minOpenCode = "1.1.53"
	// newestVerified is the newest OpenCode the end-to-end tests ran.
	newestVerified = "1.18.33"
	// optionsSince: the first served OpenCode that takes [name, options]
	// plugin entries and has the dispose hook.
	optionsSince = "1.14.0"
	// v2Commit is the OpenCode repository commit whose plugin API the
	// OpenCode 2 entry is built to.
	v2Commit = "ee2e318ec718"
)

// openCodeBinaries are the commands doctor asks for a version, in order:
// OpenCode 1.x's and OpenCode 2's.
var openCodeBinaries = []string{"opencode", "opencode2"}

var versionRE = regexp.MustCompile(`\b(\d+)\.(\d+)\.(\d+)\b`)

// compareVersion compares two x.y.z versions numerically (-1, 0, 1).
func compareVersion(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := range 3 {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionParts(v string) [3]int {
	var p [3]int
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return p
	}
	for i := range 3 {
		p[i], _ = strconv.Atoi(m[i+1])
	}
	return p
}

// hostSupport is what hookwire does on one OpenCode version: the level of
// doctor's line, its text and what to do.
func hostSupport(version string) (level, string, string) {
	switch {
	case versionParts(version)[0] >= 2:
		return levelInfo, fmt.Sprintf("OpenCode %s: the plugin's ./server entry (setup) is built to OpenCode 2's plugin API at %s; not yet run against a real OpenCode 2. "+
			"Off there: toasts, and the model choice (agentModels) as OpenCode 2 offers no hook that may change a request's model.", version, v2Commit), ""
	case compareVersion(version, minOpenCode) < 0:
		return levelWarn, fmt.Sprintf("OpenCode %s is older than %s, the oldest hookwire runs on: the plugin turns itself off there (and says so).", version, minOpenCode),
			"update OpenCode (npm install -g opencode-ai@latest, or opencode upgrade)."
	case compareVersion(version, optionsSince) < 0:
		return levelOK, fmt.Sprintf("OpenCode %s: aliases, the Resumable Sessions block, the reminder and retry guidance work (verified on %s). "+
			"Plugin options: only through HOOKWIRE_OPTIONS (this OpenCode takes no [name, options] entries); "+
			"off: model variants in agentModels (it keeps a message's variant beside its model); "+
			"a session deleted by `opencode session delete` is not seen (no dispose hook), one deleted in the TUI is.", version, minOpenCode+" and 1.3.2"), ""
	case compareVersion(version, newestVerified) <= 0:
		return levelOK, fmt.Sprintf("OpenCode %s: everything works (verified on 1.15.13 and %s).", version, newestVerified), ""
	default:
		return levelInfo, fmt.Sprintf("OpenCode %s is newer than %s, the newest verified: expected to work; the plugin names anything it finds missing.", version, newestVerified), ""
	}
}

// versionTimeout bounds `opencode --version` (tests shorten it).
var versionTimeout = 5 * time.Second

// openCodeVersion runs `<name> --version` from PATH, within versionTimeout;
// ok false when the command is not on PATH or prints no version. OpenCode
// prints its version at once but may go on (1.3.2 tries to fetch a model
// catalogue for 20 s offline), so what it printed before it was stopped
// counts, and the catalogue fetch is turned off.
func openCodeVersion(name string) (path, version string, ok bool) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = append(cmd.Environ(), "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1")
	cmd.WaitDelay = time.Second
	out, _ := cmd.Output()
	m := versionRE.FindString(strings.TrimSpace(string(out)))
	return path, m, m != ""
}

// checkOpenCode: the OpenCode on PATH, its version, and what hookwire
// does there; a [name, options] entry on an OpenCode that rejects it is a
// failure (OpenCode refuses the whole config).
func (d *doctor) checkOpenCode() {
	found := false
	for _, name := range openCodeBinaries {
		path, version, ok := openCodeVersion(name)
		if path == "" {
			continue
		}
		found = true
		if !ok {
			d.add(levelWarn, "opencode", fmt.Sprintf("%s did not report a version (`%s --version`).", path, name), "check that this OpenCode runs.")
			continue
		}
		l, text, fix := hostSupport(version)
		d.add(l, "opencode", path+": "+text, fix)
		if versionParts(version)[0] < 2 && compareVersion(version, optionsSince) < 0 {
			for _, e := range d.entries {
				if e.options != nil {
					d.add(levelFail, "opencode", fmt.Sprintf("%s gives hookwire options as [name, options], which OpenCode %s rejects (\"expected string, received array\").", e.config, version),
						fmt.Sprintf(`list the plugin by name only and set the options as JSON in HOOKWIRE_OPTIONS, e.g. HOOKWIRE_OPTIONS='%s'.`, string(e.options)))
				}
			}
		}
	}
	if !found {
		d.add(levelInfo, "opencode", "no opencode (or opencode2) command found: which OpenCode runs the plugin, and what works there, not checked.", "")
	}
}
