package main

// doctor's OpenCode section: which OpenCode is on PATH and what hookwire
// does on it (README's compatibility table; docs/OPENCODE.md "Every
// OpenCode version"). Kept apart from the other checks so that each can
// change without the other.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
	// v2Commit names the OpenCode 2 release whose plugin API the
	// OpenCode 2 entry is built to (docs/OPENCODE.md lists the files read).
	v2Commit = "its released 2.0.x line, @opencode/cli 2.0.17 at 04f4b0610c79"
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

// versionTimeout bounds `opencode --version` when the version cannot be
// read from a package.json. It is long: OpenCode 1.3.2 took 2.7 to 11.5 s
// to print its version on a loaded machine (issue 32), and a version not
// read is a config not judged.
var versionTimeout = 30 * time.Second

// openCodeHost is one OpenCode command found on PATH.
type openCodeHost struct {
	name    string // the command: opencode, opencode2
	path    string // as found on PATH
	version string // x.y.z; "" when it could not be told
	from    string // where version came from: its package.json's path, or "`opencode --version`"
	why     string // version "": what happened
}

// rejectsOptions: this OpenCode 1.x refuses a [name, options] plugin
// entry (its config schema takes strings only: it does not start).
func (h openCodeHost) rejectsOptions() bool {
	return h.version != "" && versionParts(h.version)[0] < 2 && compareVersion(h.version, optionsSince) < 0
}

// findOpenCodes finds the OpenCode commands on PATH and their versions.
func findOpenCodes() []openCodeHost {
	var hosts []openCodeHost
	for _, name := range openCodeBinaries {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		h := openCodeHost{name: name, path: path}
		if v, pj := npmOpenCodeVersion(path); v != "" {
			h.version, h.from = v, pj
		} else {
			h.version, h.why = runVersion(path)
			h.from = "`" + name + " --version`"
		}
		hosts = append(hosts, h)
	}
	return hosts
}

// npmOpenCodeVersion reads the version of an npm-installed OpenCode
// without running it: the command on PATH is a link to
// <node_modules>/opencode-ai/bin/opencode (or the binary of a platform
// package, opencode-<os>-<cpu>[-baseline][-musl]/bin/opencode), whose
// package's package.json holds its version. "" when path is not such.
func npmOpenCodeVersion(path string) (version, pkgJSON string) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", ""
	}
	// <pkg>/bin/opencode: the package is bin's parent.
	if filepath.Base(filepath.Dir(real)) != "bin" {
		return "", ""
	}
	pj := filepath.Join(filepath.Dir(filepath.Dir(real)), "package.json")
	name, v, err := readPackageJSON(pj)
	if err != nil || !openCodePackageRE.MatchString(name) || !versionRE.MatchString(v) {
		return "", ""
	}
	return versionRE.FindString(v), pj
}

// openCodePackageRE: the npm packages OpenCode ships its command in.
var openCodePackageRE = regexp.MustCompile(`^(opencode-ai|opencode-(linux|darwin|windows)-(x64|arm64)(-baseline)?(-musl)?)$`)

// runVersion runs `path --version` and returns the first version it prints,
// as soon as it prints it, within versionTimeout. OpenCode prints its
// version but may go on (1.3.2 tries to fetch a model catalogue for 20 s
// offline), so it is stopped once the version is read, and the catalogue
// fetch and the update check are turned off. why: what happened when no
// version came.
func runVersion(path string) (version, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	cmd := boundedCommand(ctx, path, "--version")
	defer killGroup(cmd)
	cmd.Env = append(cmd.Environ(), "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1")
	out := newLineWatch(func(l string) bool { return versionRE.MatchString(l) })
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		return "", err.Error()
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case <-out.found:
		cancel() // read: the rest of its run is not needed
		err = <-waited
	case err = <-waited:
	}
	version = versionRE.FindString(out.result())
	switch {
	case version != "":
	case ctx.Err() != nil:
		why = fmt.Sprintf("it printed none within %v", versionTimeout)
	case err != nil:
		why = "it failed: " + err.Error()
	default:
		why = "it printed none"
	}
	return version, why
}

// checkOpenCode: the OpenCode on PATH, its version, and what hookwire
// does there. A [name, options] entry an OpenCode refuses is judged with
// the config files (checkConfigs).
func (d *doctor) checkOpenCode() {
	for _, h := range d.hosts {
		if h.version == "" {
			d.add(levelWarn, "opencode", fmt.Sprintf("%s did not report a version (%s: %s): what works there is not known.", h.path, h.from, h.why),
				"check that this OpenCode runs (`"+h.name+" --version`).")
			continue
		}
		l, text, fix := hostSupport(h.version)
		d.add(l, "opencode", fmt.Sprintf("%s: %s (version from %s)", h.path, text, h.from), fix)
	}
	if len(d.hosts) == 0 {
		d.add(levelInfo, "opencode", "no opencode (or opencode2) command found: which OpenCode runs the plugin, and what works there, not checked.", "")
	}
}

// optionsVerdict judges an entry that gives options as [name, options]
// against the OpenCode commands found: a failure when one of them refuses
// such an entry (OpenCode does not start), a warning when one's version
// is unknown; ok otherwise. text ends with a full stop.
func (d *doctor) optionsVerdict(e pluginEntry, opts string) (level, string, string) {
	fix := fmt.Sprintf(`list the plugin by name only ("plugin": ["%s"]) and give the options as JSON in HOOKWIRE_OPTIONS, e.g. HOOKWIRE_OPTIONS='%s' opencode.`,
		pluginPackage, compactJSON(e.options))
	for _, h := range d.hosts {
		if h.rejectsOptions() {
			return levelFail, fmt.Sprintf("%s: gives %s %s as [name, options], which OpenCode %s (%s) refuses: it does not start (\"expected string, received array\").",
				e.config, e.spec, opts, h.version, h.path), fix
		}
	}
	for _, h := range d.hosts {
		if h.version == "" && h.name == "opencode" { // opencode2 takes options
			return levelWarn, fmt.Sprintf("%s: loads %s, %s, as [name, options]: OpenCode before %s refuses that (it does not start), and the version of %s is not known.",
				e.config, e.spec, opts, optionsSince, h.path), "on OpenCode " + optionsSince + " or later this is right; before it, " + fix
		}
	}
	return levelOK, fmt.Sprintf("%s: loads %s, %s.", e.config, e.spec, opts), ""
}

// compactJSON is raw on one line (raw itself when it is not JSON).
func compactJSON(raw []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}
