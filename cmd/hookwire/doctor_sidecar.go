package main

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/hookwire/hookwire/contract"
)

// A diagnostic must be safe to run in a checkout nobody has looked at yet
// (issue 23): doctor runs no binary a config file names. The sidecar the
// shim would run is described instead: its path, whether it is there and
// executable, its version as its Go build info or its npm package says,
// and the command line the shim would give it. Only a hookwire found
// through the user's own environment ($HOOKWIRE_BIN, PATH) whose version
// the build info does not hold is asked with `version`.

// sidecarChoice is the binary the shim would run.
type sidecarChoice struct {
	bin    string
	source string
	// named: a config file's binary option names it; it is never run.
	named bool
	// pkgJSON: the platform package's package.json, when it comes from one.
	pkgJSON string
}

// chooseSidecar looks for the sidecar as the shim does (shim/src/options.ts):
// the binary option (a bare name on PATH; a relative path from the project
// directory, where OpenCode runs), else $HOOKWIRE_BIN when it names a file,
// else the platform package beside an installed by-name plugin, else
// hookwire on PATH. A stale $HOOKWIRE_BIN is reported here: the shim skips
// it with a warning.
func (d *doctor) chooseSidecar() (sidecarChoice, bool) {
	if raw, ok := d.effectiveOptions()["binary"]; ok {
		var bin string
		if json.Unmarshal(raw, &bin) == nil && strings.TrimSpace(bin) != "" {
			bin = strings.TrimSpace(bin)
			switch {
			case !strings.ContainsAny(bin, `/\`):
				if p, err := exec.LookPath(bin); err == nil {
					bin = p
				}
			case !filepath.IsAbs(bin):
				bin = filepath.Join(d.project, bin)
			}
			return sidecarChoice{bin: bin, source: "the plugin option binary in " + d.optionsSource(), named: true}, true
		}
	}
	if env := strings.TrimSpace(os.Getenv("HOOKWIRE_BIN")); env != "" {
		bin := env
		if !strings.ContainsAny(env, `/\`) {
			bin, _ = exec.LookPath(env)
		} else if _, err := os.Stat(env); err != nil {
			bin = ""
		}
		if bin != "" {
			return sidecarChoice{bin: bin, source: "$HOOKWIRE_BIN in this shell"}, true
		}
		d.add(levelWarn, "sidecar", fmt.Sprintf("HOOKWIRE_BIN=%s names no file: the shim skips it, with a warning, and looks further.", env),
			"unset HOOKWIRE_BIN (or point it at a hookwire binary).")
	}
	if bin, pj := d.platformBinary(); bin != "" {
		return sidecarChoice{bin: bin, source: "the installed platform package", pkgJSON: pj}, true
	}
	// A plugin by name that OpenCode has not installed yet: at its first
	// start OpenCode installs it with its platform package, and that is
	// what runs, never a hookwire on PATH (under npx, PATH holds npx's
	// temporary copy: issue 42 item 8). noSidecar says "not installed yet".
	if e, ok := d.winningEntry(); ok && !strings.HasPrefix(e.spec, "file:") {
		if pj, _ := installedPackage(e.spec); pj == "" {
			return sidecarChoice{}, false
		}
	}
	if p, err := exec.LookPath("hookwire"); err == nil {
		return sidecarChoice{bin: p, source: "PATH"}, true
	}
	return sidecarChoice{}, false
}

// checkSidecar: the binary the shim would run, and what it would run.
func (d *doctor) checkSidecar() {
	lvl := levelFail
	if len(d.entries) == 0 {
		lvl = levelWarn // nothing would run it yet
	}
	c, ok := d.chooseSidecar()
	if !ok {
		d.noSidecar(lvl)
		return
	}
	cmdline := strings.Join(append([]string{c.bin}, d.sidecarArgs()...), " ")
	fi, err := os.Stat(c.bin)
	switch {
	case err != nil:
		d.add(lvl, "sidecar", fmt.Sprintf("the shim would run %s, from %s, which does not exist: every hook would pass through.", c.bin, c.source),
			"point the binary option or $HOOKWIRE_BIN at a hookwire binary, or reinstall the plugin.")
		return
	case !fi.Mode().IsRegular():
		d.add(lvl, "sidecar", fmt.Sprintf("the shim would run %s, from %s, which is not a regular file.", c.bin, c.source),
			"point the binary option or $HOOKWIRE_BIN at a hookwire binary.")
		return
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0:
		d.add(lvl, "sidecar", fmt.Sprintf("the shim would run %s, from %s, which is not executable (mode %v).", c.bin, c.source, fi.Mode().Perm()),
			"chmod +x it, or reinstall it.")
		return
	}
	same := ""
	if exe, err := os.Executable(); err == nil && sameFile(exe, c.bin) {
		same = " (this binary)"
	}
	what, ver, runErr := d.sidecarVersion(c)
	if runErr != nil {
		d.add(lvl, "sidecar", fmt.Sprintf("the shim would run %s (from %s), which fails: %v.", c.bin, c.source, runErr),
			"point the binary option or $HOOKWIRE_BIN at a working hookwire, or reinstall it.")
		return
	}
	d.sidecar, d.sideVer = c.bin, ver
	if c.named && ver == "" {
		// OpenCode will run it with the user's rights: say so, as doctor
		// cannot tell what it is.
		d.add(levelWarn, "sidecar", fmt.Sprintf("the shim would run %s, from %s: it is not a Go build of hookwire, so its version is unknown without running it, and doctor runs no binary a config file names. Command: %s",
			c.bin, c.source, cmdline),
			"make sure it is the hookwire you mean before OpenCode starts in this project (it runs it), or remove the binary option.")
		return
	}
	d.add(levelOK, "sidecar", fmt.Sprintf("the shim would run %s%s, from %s: %s. Command: %s", c.bin, same, c.source, what, cmdline), "")
}

// sidecarVersion says what c is and returns its version ("" unknown):
// from its build info, else its platform package's package.json, else, for
// a binary of the user's own environment, from `version`. runErr: that run
// failed.
func (d *doctor) sidecarVersion(c sidecarChoice) (what, version string, runErr error) {
	if b, ok := hookwireBuild(c.bin); ok && !b.Dev {
		return b.String() + " (its build info)", b.Version, nil
	}
	if c.pkgJSON != "" {
		if name, v, err := readPackageJSON(c.pkgJSON); err == nil && v != "" {
			return fmt.Sprintf("%s %s (its package.json)", name, v), v, nil
		}
	}
	if b, ok := hookwireBuild(c.bin); ok {
		return b.String() + " (its build info)", b.Version, nil
	}
	if c.named || c.pkgJSON != "" {
		return "its version is unknown without running it", "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := boundedCommand(ctx, c.bin, "version")
	defer killGroup(cmd)
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // it answered and exited; a child of it kept stdout open
	}
	if err != nil {
		return "", "", err
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if f := strings.Fields(line); len(f) >= 2 && f[0] == "hookwire" {
		version = f[1]
	}
	return line, version, nil
}

// ldflagsVersionRe finds make's -X main.version=V in a build's -ldflags.
var ldflagsVersionRe = regexp.MustCompile(`-X[= ]'?main\.version=([^\s']+)`)

// hookwireBuild reads a hookwire binary's version from its Go build info,
// without running it; false when path is not a Go build of hookwire.
func hookwireBuild(path string) (buildInfo, bool) {
	f, err := openRegularFile(path) // never blocks, as readRegularFile
	if err != nil {
		return buildInfo{}, false
	}
	defer f.Close()
	bi, err := buildinfo.Read(f)
	if err != nil || bi.Main.Path != "github.com/hookwire/hookwire" {
		return buildInfo{}, false
	}
	ldflags := ""
	for _, s := range bi.Settings {
		if s.Key == "-ldflags" {
			if m := ldflagsVersionRe.FindStringSubmatch(s.Value); m != nil {
				ldflags = m[1]
			}
		}
	}
	if ldflags == "" {
		// make builds with -trimpath, and Go then leaves -ldflags out of
		// the build info (golang/go#52372): the variable itself says.
		ldflags = stampedVersion(path)
	}
	return readBuildInfo(ldflags, bi), true
}

// noSidecar reports that the shim would find no binary, with what to do
// for the way hookwire is installed: a by-name plugin brings its sidecar
// in a platform package (nothing to build), a built shim needs a build.
func (d *doctor) noSidecar(lvl level) {
	const none = "the shim finds no hookwire binary (no binary option, no $HOOKWIRE_BIN, no installed platform package, none on PATH): every hook would pass through."
	var byName, notInstalled, installed []pluginEntry
	for _, e := range d.entries {
		if strings.HasPrefix(e.spec, "file:") {
			continue
		}
		byName = append(byName, e)
		if pj, _ := installedPackage(e.spec); pj == "" {
			notInstalled = append(notInstalled, e)
		} else {
			installed = append(installed, e)
		}
	}
	switch {
	case len(d.entries) == 0:
		d.add(lvl, "sidecar", none, fmt.Sprintf(`add the plugin (see above): OpenCode installs %s, and npm the sidecar with it.`, pluginPackage))
	case len(installed) > 0:
		pj, _ := installedPackage(installed[0].spec)
		platformPackage := "for " + runtime.GOOS + "/" + runtime.GOARCH + " (none is published)"
		if name := platformPackageName(); name != "" {
			platformPackage = name
		}
		d.add(levelFail, "sidecar", fmt.Sprintf("%s is installed (%s) without its platform package %s, which holds the sidecar: every hook passes through.",
			installed[0].spec, pj, platformPackage),
			fmt.Sprintf("reinstall it: remove %s and start OpenCode again (npm must not leave out optional dependencies).", filepath.Dir(filepath.Dir(filepath.Dir(pj)))))
	case len(byName) > 0 && len(notInstalled) == len(byName):
		d.add(levelWarn, "sidecar", fmt.Sprintf("%s is not installed yet, nor the sidecar that comes with it: until then every hook passes through.", byName[0].spec),
			"start OpenCode once: it installs the plugin, and npm the sidecar with it (it needs npm and a registry).")
	default:
		d.add(lvl, "sidecar", none, "build it (make build) and set the plugin option binary to bin/hookwire, or put a hookwire on PATH.")
	}
}

// sidecarArgs is the command line the shim gives the sidecar
// (shim/src/statefile.ts sidecarArgs): the args option, --record FILE
// --record-redact for the record option, then --state FILE or --project
// DIR unless args names one.
func (d *doctor) sidecarArgs() []string {
	opts := d.effectiveOptions()
	var args []string
	if raw, ok := opts["args"]; ok {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil {
			for _, a := range list {
				var s string
				if json.Unmarshal(a, &s) == nil {
					args = append(args, s)
				}
			}
		}
	}
	has := func(re string) bool {
		r := regexp.MustCompile(re)
		for _, a := range args {
			if r.MatchString(a) {
				return true
			}
		}
		return false
	}
	var record string
	if raw, ok := opts["record"]; ok && json.Unmarshal(raw, &record) == nil && strings.TrimSpace(record) != "" && !has(`^--?record(=|$)`) {
		args = append(args, "--record", d.fromProject(strings.TrimSpace(record)), "--record-redact")
	}
	if has(`^--?(state|project)(=|$)`) {
		return args
	}
	path, source, err := d.statePath()
	switch {
	case err != nil, path == "":
	case source == "the project's default":
		args = append(args, "--project", d.root)
	default:
		args = append(args, "--state", path)
	}
	return args
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// checkPluginVersion: the installed plugin package's version against the
// sidecar's (else this binary's), compared as the shim compares them.
func (d *doctor) checkPluginVersion() {
	if len(d.entries) == 0 {
		d.add(levelInfo, "plugin version", "not checked: the plugin is not configured.", "")
		return
	}
	bin := d.sideVer
	binWhat := "the sidecar's"
	if bin == "" && d.sidecar == "" {
		bin, binWhat = thisBuild().Version, "this binary's"
	}
	for _, e := range d.entries {
		pj := e.pkgJSON
		if pj == "" && e.missing == "" {
			var others []string
			pj, others = installedPackage(e.spec)
			if pj == "" {
				d.notInstalled(e, others)
				continue
			}
		}
		if pj == "" {
			continue // reported missing above
		}
		_, ver, err := readPackageJSON(pj)
		if err != nil {
			d.add(levelWarn, "plugin version", err.Error()+".", "reinstall the plugin.")
			continue
		}
		if bin == "" {
			d.add(levelInfo, "plugin version", fmt.Sprintf("%s %s (%s); the sidecar's version is unknown, not compared.", pluginPackage, ver, pj), "")
			continue
		}
		switch versionsMatch(ver, bin) {
		case matchYes:
			d.add(levelOK, "plugin version", fmt.Sprintf("%s %s (%s) matches %s %s.", pluginPackage, ver, pj, binWhat, bin), "")
		case matchUnknown:
			d.add(levelInfo, "plugin version", fmt.Sprintf("%s %s (%s); %s %s: a development build on one side, not compared (the shim does not compare them either).", pluginPackage, ver, pj, binWhat, bin), "")
		default:
			fix := fmt.Sprintf("install the same version of both: the plugin %s@%s", pluginPackage, npmVersion(bin))
			if isRelease(ver) {
				fix += fmt.Sprintf(", or go install github.com/hookwire/hookwire/cmd/hookwire@v%s", strings.TrimPrefix(ver, "v"))
			} else {
				fix += ", or a hookwire built from the same commit (make build)"
			}
			d.add(levelWarn, "plugin version", fmt.Sprintf("%s %s (%s), but %s version is %s.", pluginPackage, ver, pj, binWhat, bin), fix+".")
		}
	}
}

// notInstalled reports a by-name entry OpenCode has not installed. Before
// OpenCode's first start that is expected; a pinned version missing beside
// others OpenCode did install is what OpenCode does, silently, with a
// version it cannot install: the plugin is not loaded.
func (d *doctor) notInstalled(e pluginEntry, others []string) {
	where := filepath.Join(cacheDir(), "packages")
	if pinned := pinnedVersion(e.spec); pinned != "" && len(others) > 0 {
		d.add(levelFail, "plugin version", fmt.Sprintf("%s is not installed under %s (installed: %s): OpenCode skips a plugin it cannot install without a word, so hookwire is not loaded.",
			e.spec, where, strings.Join(others, ", ")),
			fmt.Sprintf("start OpenCode once and run doctor again; if it is still missing, %s is not a published version: pin one that is (npm view %s versions).", pinned, pluginPackage))
		return
	}
	d.add(levelWarn, "plugin version", fmt.Sprintf("%s is not installed under %s yet.", e.spec, where),
		"start OpenCode once: it installs by-name plugins there (it needs npm and a registry).")
}

// pinnedVersion is the version a by-name spec pins ("" for none or latest).
func pinnedVersion(spec string) string {
	v, ok := strings.CutPrefix(spec, pluginPackage+"@")
	if !ok || v == "latest" {
		return ""
	}
	return v
}

// platformPackageName is the platform package for this machine, as the
// contract lists them (the shim installs and looks for the same one); ""
// when none is published for it.
func platformPackageName() string {
	p, _ := contract.PlatformFor(runtime.GOOS, runtime.GOARCH)
	return p.Package
}

// platformBinary is the sidecar of the platform package npm installed
// beside a by-name plugin, and that package's package.json; "" when none.
func (d *doctor) platformBinary() (bin, pkgJSON string) {
	exe := "hookwire"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	for _, e := range d.entries {
		if strings.HasPrefix(e.spec, "file:") {
			continue // a built shim finds no platform package beside it
		}
		pj, _ := installedPackage(e.spec)
		if pj == "" {
			continue
		}
		name := platformPackageName()
		if name == "" {
			return "", ""
		}
		// <dir>/node_modules/hookwire-opencode/package.json -> <dir>/node_modules/<platform package>/bin/hookwire
		pkg := filepath.Join(filepath.Dir(filepath.Dir(pj)), name)
		bin := filepath.Join(pkg, "bin", exe)
		if st, err := os.Stat(bin); err == nil && !st.IsDir() {
			return bin, filepath.Join(pkg, "package.json")
		}
	}
	return "", ""
}

// installedPackage finds the package.json OpenCode installed for a
// by-name spec under <cache>/packages/<name>@<version or latest>/ (1.14
// and later), else in <cache>/node_modules/ (1.3 and older install with
// `bun add` there, docs/OPENCODE.md): a pinned spec only at its own
// version. others: the specs installed under packages/ otherwise (for a
// pinned spec that is missing).
func installedPackage(spec string) (pkgJSON string, others []string) {
	pkgJSON, others = installedPackageDir(spec)
	if pkgJSON != "" {
		return pkgJSON, others
	}
	pj := filepath.Join(cacheDir(), "node_modules", pluginPackage, "package.json")
	if st, err := os.Stat(pj); err == nil && st.Mode().IsRegular() {
		if pinned := pinnedVersion(spec); pinned == "" {
			return pj, others
		} else if _, ver, err := readPackageJSON(pj); err == nil && ver == pinned {
			return pj, others
		}
	}
	return "", others
}

// installedPackageDir is installedPackage's look under <cache>/packages/.
func installedPackageDir(spec string) (pkgJSON string, others []string) {
	base := filepath.Join(cacheDir(), "packages")
	want := spec
	if want == pluginPackage {
		want += "@latest"
	}
	at := func(dir string) string {
		pj := filepath.Join(dir, "node_modules", pluginPackage, "package.json")
		if st, err := os.Stat(pj); err == nil && st.Mode().IsRegular() {
			return pj
		}
		return ""
	}
	if pj := at(filepath.Join(base, want)); pj != "" {
		return pj, nil
	}
	more, _ := filepath.Glob(filepath.Join(base, pluginPackage+"@*"))
	for _, dir := range more {
		if at(dir) == "" {
			continue
		}
		if pinnedVersion(spec) == "" {
			return at(dir), nil // unpinned: whatever OpenCode installed
		}
		others = append(others, filepath.Base(dir))
	}
	return "", others
}

type match int

const (
	matchNo match = iota
	matchYes
	matchUnknown
)

// unstampedVersion is the version of a plugin run from a checkout
// (shim/package.json), which the shim pairs with any sidecar.
const unstampedVersion = "0.0.0-dev"

// versionsMatch compares the plugin package's version with the binary's
// exactly as the shim does (shim/src/binary.ts versionMismatch): equal
// apart from a leading "v" and npm's "." for build metadata's "+"; a plugin
// run from a checkout or a binary built outside make ("devel...") is not
// compared.
func versionsMatch(pkg, bin string) match {
	switch {
	case bin == "", pkg == unstampedVersion, strings.HasPrefix(bin, "devel"):
		return matchUnknown
	case comparableVersion(pkg) == comparableVersion(bin):
		return matchYes
	}
	return matchNo
}

// comparableVersion is shim/src/binary.ts comparableVersion: no leading
// "v", and the first "+" as npm keeps it (".").
func comparableVersion(v string) string {
	return strings.Replace(strings.TrimPrefix(strings.TrimSpace(v), "v"), "+", ".", 1)
}

// npmVersion is a binary's version as its npm package carries it.
func npmVersion(v string) string { return comparableVersion(v) }

// isRelease: v is a tagged release (`go install ...@v<v>` exists), not
// the 0.0.0-dev version of an untagged commit.
func isRelease(v string) bool {
	return releaseRe.MatchString(v) && !strings.HasPrefix(strings.TrimPrefix(v, "v"), "0.0.0-dev")
}

var releaseRe = regexp.MustCompile(`^v?\d+\.\d+\.\d+`)
