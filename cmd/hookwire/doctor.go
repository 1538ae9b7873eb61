package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/internal/textsafe"
	"github.com/hookwire/hookwire/sessiondb"
)

// The outcome of one doctor check. A failure is something that breaks
// hookwire or loses state and exits 1; a warning is something to look at
// that does not (the plugin not configured, versions that differ, a plugin
// package OpenCode has not installed yet); info says what was found.
type level int

const (
	levelOK level = iota
	levelInfo
	levelWarn
	levelFail
)

func (l level) String() string {
	return [...]string{"ok", "-", "warn", "FAIL"}[l]
}

// finding is one line of doctor's report.
type finding struct {
	level level
	what  string // the check: "binary", "opencode config", ...
	text  string
	fix   string // what to do; for warnings and failures
}

// pluginPackage is the shim's npm name.
const pluginPackage = contract.PluginPackage

// pluginEntry is one `plugin` entry of an OpenCode config that loads hookwire.
type pluginEntry struct {
	config  string          // the config file
	spec    string          // as written: a package name or a file:// URL
	options json.RawMessage // the second element of a [spec, options] pair; nil without
	pkgJSON string          // file:// specs: the shim's package.json, "" when not found
	missing string          // file:// specs: the path that does not exist
}

// doctor holds what the checks found, for the checks after them.
type doctor struct {
	project  string // absolute, as given
	root     string // the project root (git top level, else project)
	findings []finding
	entries  []pluginEntry  // every config's hookwire entries, global first
	sidecar  string         // the binary the shim would run ("" none found)
	sideVer  string         // its version, "" unknown
	hosts    []openCodeHost // the OpenCode commands on PATH (doctor_host.go)
}

// A finding equal to one already made (the same plugin listed in two
// config files gets one version check) is not repeated nor counted twice.
func (d *doctor) add(l level, what, text, fix string) {
	f := finding{l, what, text, fix}
	if slices.Contains(d.findings, f) {
		return
	}
	d.findings = append(d.findings, f)
}

// doctorCmd is `hookwire doctor`: one line per check, with what to do
// when one fails; exit 1 when a check failed (warnings do not count).
func doctorCmd(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("doctor", flag.ContinueOnError)
	project := flags.String("project", ".", "check the project in `DIR`: its OpenCode config files and state file")
	if code, done := parseFlags(flags, args, "usage: hookwire doctor [--project DIR]", stdout, stderr); done {
		return code
	}
	abs, err := filepath.Abs(*project)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hookwire doctor: --project: %v\n", err)
		return 2
	}
	root, err := sessiondb.ProjectRoot(abs)
	if err != nil {
		fmt.Fprintf(stderr, "hookwire doctor: --project: %v\n", err)
		return 2
	}
	d := &doctor{project: abs, root: root, hosts: findOpenCodes()}
	d.checkBinary()
	d.checkConfigs()
	d.checkOpenCode() // doctor_host.go
	d.checkSidecar()
	d.checkStateFile()
	d.checkActivity() // doctor_activity.go
	d.checkPluginVersion()
	d.checkOptions()
	d.checkTUI() // doctor_tui.go
	return d.report(stdout)
}

// maxFindingColumns bounds a finding's text and its fix: a line long
// enough for any path and command, not for a megabyte of options.
const maxFindingColumns = 2000

func (d *doctor) report(w io.Writer) int {
	width := 0
	for _, f := range d.findings {
		width = max(width, len(f.what))
	}
	var warns, fails int
	for _, f := range d.findings {
		// A finding quotes what it found (a config's text, a binary's
		// output, a path): made safe to print and bounded, as every
		// line hookwire prints for a person (internal/textsafe).
		line := fmt.Sprintf("%-4s  %-*s  %s", f.level, width, f.what, textsafe.Fit(textsafe.Line(f.text), maxFindingColumns))
		if f.fix != "" {
			line += " Fix: " + textsafe.Fit(textsafe.Line(f.fix), maxFindingColumns)
		}
		fmt.Fprintln(w, line)
		switch f.level {
		case levelWarn:
			warns++
		case levelFail:
			fails++
		}
	}
	fmt.Fprintf(w, "\n%s, %s\n", plural(fails, "failure"), plural(warns, "warning"))
	if fails > 0 {
		return 1
	}
	return 0
}

// checkBinary: this binary and its version.
func (d *doctor) checkBinary() {
	exe, err := os.Executable()
	if err != nil {
		exe = "(path unknown: " + err.Error() + ")"
	}
	d.add(levelOK, "binary", exe+": "+thisBuild().String(), "")
}

// configDir is OpenCode's global config directory.
func configDir() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "opencode")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".config", "opencode")
}

// cacheDir is OpenCode's cache directory, where it installs by-name plugins.
func cacheDir() string {
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "opencode")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "opencode")
}

// configFiles lists the OpenCode config files that exist, in the order
// OpenCode merges them (later ones win): the global ones, $OPENCODE_CONFIG,
// then from the project root down to the project directory each
// directory's opencode.json{,c} and .opencode/opencode.json{,c}, then
// $OPENCODE_CONFIG_DIR's.
func (d *doctor) configFiles() []string {
	var l fileList
	names := []string{"opencode.json", "opencode.jsonc"}
	l.add(configDir(), "config.json", "opencode.json", "opencode.jsonc")
	if c := os.Getenv("OPENCODE_CONFIG"); c != "" {
		l.add(filepath.Dir(c), filepath.Base(c))
	}
	d.addProjectFiles(&l, names...)
	if c := os.Getenv("OPENCODE_CONFIG_DIR"); c != "" {
		l.add(c, names...)
	}
	return l.files
}

// fileList collects the files that exist, once each, in the order added.
type fileList struct {
	files []string
	seen  map[string]bool
}

// add adds dir's files named names that exist. Something there that is
// not a regular file (a directory, a FIFO, a link loop) is added too: the
// read says what it is, where skipping it hid a config OpenCode trips on.
// A link to nothing is skipped, as OpenCode skips it, and so is a name
// under a dir that is not a directory (a file named .opencode).
func (l *fileList) add(dir string, names ...string) {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) && !l.seen[p] {
			if l.seen == nil {
				l.seen = map[string]bool{}
			}
			l.seen[p] = true
			l.files = append(l.files, p)
		}
	}
}

// addProjectFiles adds the project's files named names as OpenCode layers
// them: each directory's, then its .opencode's, from the project root
// down (opencode.json and tui.json alike).
func (d *doctor) addProjectFiles(l *fileList, names ...string) {
	for _, dir := range d.projectDirs() {
		l.add(dir, names...)
		l.add(filepath.Join(dir, ".opencode"), names...)
	}
}

// projectDirs are the directories from the project root down to the
// project directory, in the order OpenCode merges their configs.
func (d *doctor) projectDirs() []string {
	var up []string
	for dir := d.project; ; dir = filepath.Dir(dir) {
		up = append(up, dir)
		if dir == d.root || filepath.Dir(dir) == dir {
			break
		}
	}
	slices.Reverse(up)
	return up
}

// checkConfigs: each OpenCode config file, whether it loads hookwire and
// with which options.
func (d *doctor) checkConfigs() {
	files := d.configFiles()
	for _, file := range files {
		entries, err := readPluginEntries(file)
		if err != nil {
			d.add(levelFail, "opencode config", file+": "+err.Error()+".",
				"correct it: OpenCode does not start with a config it cannot read.")
			continue
		}
		if len(entries) == 0 {
			d.add(levelInfo, "opencode config", file+": does not load hookwire.", "")
			continue
		}
		for _, e := range entries {
			if e.missing != "" {
				d.add(levelFail, "opencode config", fmt.Sprintf("%s: loads %s, which does not exist.", file, e.spec),
					"build the shim (cd shim && npm ci && npm run build) or correct the path.")
				continue
			}
			if e.options == nil {
				d.add(levelOK, "opencode config", fmt.Sprintf("%s: loads %s, no options.", file, e.spec), "")
				continue
			}
			l, text, fix := d.optionsVerdict(e, "options "+compactJSON(e.options)) // doctor_host.go
			d.add(l, "opencode config", text, fix)
		}
		d.entries = append(d.entries, entries...)
	}
	if len(d.entries) == 0 {
		where := "no OpenCode config file found"
		if len(files) > 0 {
			where = fmt.Sprintf("none of the %s found loads it", plural(len(files), "OpenCode config file"))
		}
		d.add(levelWarn, "plugin", "hookwire's plugin is not configured: "+where+".",
			fmt.Sprintf(`add "plugin": ["%s"] (or a file:// URL of shim/dist/index.js) to %s.`,
				pluginPackage, filepath.Join(configDir(), "opencode.json")))
	}
}

// readPluginEntries reads a JSONC config file's hookwire `plugin` entries.
func readPluginEntries(file string) ([]pluginEntry, error) {
	data, err := readRegularFile(file, maxReadSize)
	if err != nil {
		return nil, err
	}
	// OpenCode 1.x's key is plugin; OpenCode 2.1+ is reported to read
	// plugins as well (docs/OPENCODE.md): both are read.
	var cfg struct {
		Plugin  json.RawMessage `json:"plugin"`
		Plugins json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(stripJSONC(data), &cfg); err != nil {
		return nil, fmt.Errorf("not valid JSON(C): %v", err)
	}
	var list []json.RawMessage
	for _, k := range []struct {
		name string
		raw  json.RawMessage
	}{{"plugin", cfg.Plugin}, {"plugins", cfg.Plugins}} {
		if len(k.raw) == 0 || string(k.raw) == "null" {
			continue
		}
		var l []json.RawMessage
		if err := json.Unmarshal(k.raw, &l); err != nil {
			return nil, fmt.Errorf("%q is not a list", k.name)
		}
		list = append(list, l...)
	}
	var out []pluginEntry
	for _, raw := range list {
		spec, opts, ok := pluginSpec(raw)
		if !ok {
			continue // not a plugin entry doctor understands; OpenCode judges it
		}
		if e, ok := hookwireEntry(file, spec); ok {
			e.options = opts
			out = append(out, e)
		}
	}
	return out, nil
}

// pluginSpec reads one entry of a plugin list in each form OpenCode takes:
// a name (or file:// URL), 1.x's [name, options] pair, and OpenCode
// 2.1+'s {"package": name, "options": {...}} (its v1 migration guide).
// opts is nil without options; ok false for an entry of none of them.
func pluginSpec(raw json.RawMessage) (spec string, opts json.RawMessage, ok bool) {
	if json.Unmarshal(raw, &spec) == nil {
		return spec, nil, true
	}
	var pair []json.RawMessage
	if json.Unmarshal(raw, &pair) == nil {
		if len(pair) == 0 || json.Unmarshal(pair[0], &spec) != nil {
			return "", nil, false
		}
		if len(pair) > 1 {
			opts = pair[1]
		}
		return spec, opts, true
	}
	var obj struct {
		Package *string         `json:"package"`
		Options json.RawMessage `json:"options"`
	}
	if json.Unmarshal(raw, &obj) != nil || obj.Package == nil {
		return "", nil, false
	}
	return *obj.Package, obj.Options, true
}

// hookwireEntry says whether spec loads hookwire's plugin: its npm name
// (with or without @version), or a file:// URL of a file in the shim
// package (found by its package.json), or one that does not exist whose
// path names hookwire.
func hookwireEntry(config, spec string) (pluginEntry, bool) {
	e := pluginEntry{config: config, spec: spec}
	if spec == pluginPackage || strings.HasPrefix(spec, pluginPackage+"@") {
		return e, true
	}
	if !strings.HasPrefix(spec, "file:") {
		return e, false
	}
	u, err := url.Parse(spec)
	if err != nil {
		return e, false
	}
	path := u.Path
	if path == "" {
		path = u.Opaque
	}
	path = filepath.FromSlash(path)
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(config), path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		e.missing = path
		return e, strings.Contains(strings.ToLower(path), "hookwire")
	}
	start := filepath.Dir(path)
	if fi.IsDir() {
		start = path // OpenCode 2 takes a local plugin as its package's directory
	}
	for dir, i := start, 0; i < 5; dir, i = filepath.Dir(dir), i+1 {
		pj := filepath.Join(dir, "package.json")
		if name, _, err := readPackageJSON(pj); err == nil {
			if name == pluginPackage {
				e.pkgJSON = pj
				return e, true
			}
			break // the file belongs to another package
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return e, false
}

func readPackageJSON(path string) (name, version string, err error) {
	data, err := readRegularFile(path, maxReadSize)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", path, err)
	}
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", "", fmt.Errorf("%s: %v", path, err)
	}
	return pkg.Name, pkg.Version, nil
}

// winningEntry is the hookwire entry OpenCode's merge lets win: the last
// one listed (project configs come after global ones).
func (d *doctor) winningEntry() (pluginEntry, bool) {
	if len(d.entries) == 0 {
		return pluginEntry{}, false
	}
	return d.entries[len(d.entries)-1], true
}

// effectiveOptions are the options the shim gets: the winning entry's,
// else (OpenCode passed none) HOOKWIRE_OPTIONS's object, as the shim's
// optionsFromEnv decides.
func (d *doctor) effectiveOptions() map[string]json.RawMessage {
	raw := json.RawMessage(nil)
	if e, ok := d.winningEntry(); ok && hasOptions(e.options) {
		raw = e.options
	} else if env, set := envOptions(); set {
		raw = json.RawMessage(env)
	}
	var opts map[string]json.RawMessage
	if json.Unmarshal(raw, &opts) != nil {
		return nil
	}
	return opts
}

// optionsSource names where effectiveOptions come from: a config file, or
// HOOKWIRE_OPTIONS.
func (d *doctor) optionsSource() string {
	if e, ok := d.winningEntry(); ok && hasOptions(e.options) {
		return e.config
	}
	return "HOOKWIRE_OPTIONS"
}

// statePath is the state file the shim would give the sidecar, following
// its `state` and `args` options; "" with a reason when state is off.
func (d *doctor) statePath() (path, source string, err error) {
	opts := d.effectiveOptions()
	var args []string
	if raw, ok := opts["args"]; ok && json.Unmarshal(raw, &args) == nil {
		from := "the plugin option args in " + d.optionsSource()
		state, project, err := stateArgs(args)
		switch {
		case err != nil:
			return "", from, err
		case state != "" && project != "":
			return "", from, fmt.Errorf("args give both --state and --project, which the sidecar refuses (%v)", errBothTargets)
		case state != "":
			return d.fromProject(state), from, nil
		case project != "":
			p, err := sessiondb.ProjectStatePath(d.fromProject(project))
			return p, from, err
		}
	}
	if raw, ok := opts["state"]; ok {
		var s *string
		if json.Unmarshal(raw, &s) == nil && (s == nil || strings.TrimSpace(*s) == "") {
			return "", "the plugin option state in " + d.optionsSource(), nil
		}
		var b bool
		if json.Unmarshal(raw, &b) == nil && !b {
			return "", "the plugin option state in " + d.optionsSource(), nil
		}
		if s != nil {
			return d.fromProject(strings.TrimSpace(*s)), "the plugin option state in " + d.optionsSource(), nil
		}
	}
	p, err := sessiondb.ProjectStatePath(d.project)
	return p, "the project's default", err
}

// stateArgs reads the state file's flags from the plugin's args option
// with serve's own flag set, so every spelling the sidecar accepts (one or
// two dashes, the value after '=' or as the next argument, the last of a
// flag given twice) is read as it reads it. err: args the sidecar refuses.
func stateArgs(args []string) (state, project string, err error) {
	fs, _, _, target := serveFlags()
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return "", "", fmt.Errorf("the sidecar refuses args %q: %w", args, err)
	}
	return *target.state, *target.project, nil
}

func (d *doctor) fromProject(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(d.root, p)
}

// checkStateFile: the project's state file: path, size, what it holds,
// and whether others could plant files beside it.
func (d *doctor) checkStateFile() {
	path, source, err := d.statePath()
	switch {
	case err != nil:
		fix := "set XDG_STATE_HOME or HOME."
		if strings.HasPrefix(source, "the plugin option args") {
			fix = "correct the plugin option args in " + d.optionsSource() + "."
		}
		d.add(levelFail, "state file", "no state file path ("+source+"): "+err.Error()+".", fix)
		return
	case path == "":
		d.add(levelInfo, "state file", "off ("+source+"): aliases last only as long as the sidecar.", "")
		return
	}
	// A state the sidecar cannot write is read-only for it: every OpenCode
	// start says so (a toast; `opencode run` prints it), so doctor does too
	// (issue 42 item 6: it said ok).
	if why := stateUnwritable(path); why != "" {
		d.add(levelWarn, "state file", fmt.Sprintf("%s (%s): %s: the sidecar opens it read-only; its aliases resolve, new ones last only until OpenCode exits (OpenCode shows this at start: a toast in the TUI, a line under opencode run).", path, source, why),
			"make it writable by you, or give the plugin option state a path you can write.")
		return
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		d.add(levelOK, "state file", fmt.Sprintf("%s (%s): none yet; the sidecar creates it on first use.", path, source), "")
		return
	}
	if err != nil {
		d.add(levelFail, "state file", fmt.Sprintf("%s: %v.", path, err), "make it readable and writable by you, or remove it.")
		return
	}
	use := "shared by every sidecar on the project"
	if w := sessiondb.DirWarning(path); w != "" {
		d.add(levelWarn, "state directory", w+".", "chmod 700 "+filepath.Dir(path))
	}
	got, err := sessiondb.ReadState(path)
	if err != nil {
		what := "not loadable"
		if sessiondb.IsCorrupt(err) {
			what = "not loadable (corrupt)"
		}
		d.add(levelFail, "state file", fmt.Sprintf("%s: %s, %s: %v; %s.", path, plural(int(fi.Size()), "byte"), what, err, use),
			sessiondb.Advice(err, path))
		return
	}
	d.add(levelOK, "state file", fmt.Sprintf("%s: %s, %s under %s, %s; %s.", path, plural(int(fi.Size()), "byte"),
		plural(len(got.Sessions), "subagent session"), plural(got.Parents, "parent session"), plural(got.FrozenBlocks, "saved session list"), use), "")
}
