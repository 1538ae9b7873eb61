package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doctorEnv is one made-up machine: HOME and XDG_* under root, a project
// directory (a git worktree), and PATH holding only bin.
type doctorEnv struct {
	t                            *testing.T
	root, project, config, cache string
	bin, stateHome, globalConfig string
}

func newDoctorEnv(t *testing.T) *doctorEnv {
	root := t.TempDir()
	e := &doctorEnv{t: t, root: root,
		project: filepath.Join(root, "proj"), config: filepath.Join(root, "config"),
		cache: filepath.Join(root, "cache"), bin: filepath.Join(root, "bin"), stateHome: filepath.Join(root, "state")}
	e.globalConfig = filepath.Join(e.config, "opencode")
	require.NoError(t, mkdirs(filepath.Join(e.project, ".git"), e.bin, filepath.Join(root, "home")))
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_CONFIG_HOME", e.config)
	t.Setenv("XDG_CACHE_HOME", e.cache)
	t.Setenv("XDG_STATE_HOME", e.stateHome)
	t.Setenv("PATH", e.bin)
	t.Setenv("HOOKWIRE_BIN", "")
	t.Setenv("OPENCODE_CONFIG", "")
	t.Setenv("OPENCODE_CONFIG_DIR", "")
	t.Setenv("HOOKWIRE_OPTIONS", "")
	return e
}

func (e *doctorEnv) write(path, content string, mode os.FileMode) string {
	e.t.Helper()
	require.NoError(e.t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(e.t, os.WriteFile(path, []byte(content), mode))
	return path
}

// globalJSON writes OpenCode's global opencode.json.
func (e *doctorEnv) globalJSON(content string) {
	e.write(filepath.Join(e.globalConfig, "opencode.json"), content, 0o600)
}

// sidecar puts a fake hookwire on PATH that reports version v.
func (e *doctorEnv) sidecar(v string) string {
	return e.write(filepath.Join(e.bin, "hookwire"), "#!/bin/sh\necho 'hookwire "+v+" go1.26.0 linux/amd64'\n", 0o755)
}

// installed makes OpenCode's by-name install of the plugin at version v.
func (e *doctorEnv) installed(dir, v string) {
	e.write(filepath.Join(e.cache, "opencode", "packages", dir, "node_modules", pluginPackage, "package.json"),
		`{"name":"hookwire-opencode","version":"`+v+`"}`, 0o600)
}

// shim makes a built shim package at dir with version v; its entry's URL.
func (e *doctorEnv) shim(dir, v string) string {
	e.write(filepath.Join(dir, "package.json"), `{"name":"hookwire-opencode","version":"`+v+`","main":"./dist/index.js"}`, 0o600)
	return "file://" + e.write(filepath.Join(dir, "dist", "index.js"), "export default {}\n", 0o600)
}

// assertReport checks a doctor report: each regexp of want matches one of
// its lines, and no line matches one of absent.
func assertReport(t *testing.T, stdout string, want, absent []string) {
	t.Helper()
	lines := strings.Split(stdout, "\n")
	for _, w := range want {
		re := regexp.MustCompile(w)
		found := false
		for _, l := range lines {
			found = found || re.MatchString(l)
		}
		assert.True(t, found, "no line matches %s in\n%s", w, stdout)
	}
	for _, a := range absent {
		assert.NotRegexp(t, regexp.MustCompile(`(?m)`+a), stdout)
	}
}

func TestDoctor(t *testing.T) {
	v040 := buildVersioned(t, "v0.4.0") // before newDoctorEnv empties PATH
	tests := []struct {
		name  string
		setup func(e *doctorEnv)
		code  int
		want  []string // regexps, each matching one line of the report
		// absent: regexps no line of the report matches
		absent []string
		// notRun: a file under the env's root a binary would create if run
		notRun string
	}{
		{
			name:  "nothing configured: warnings only",
			setup: func(e *doctorEnv) {},
			want: []string{
				`^ok +binary +\S+: hookwire `,
				`^warn +plugin +hookwire's plugin is not configured: no OpenCode config file found\. Fix: add "plugin": \["hookwire-opencode"\] .* to .*/config/opencode/opencode\.json\.$`,
				`^warn +sidecar +the shim finds no hookwire binary .* Fix: add the plugin \(see above\): OpenCode installs hookwire-opencode, and npm the sidecar with it\.$`,
				`^ok +state file +.*/state/hookwire/proj-[0-9a-f]{16}\.db \(the project's default\): none yet`,
				`^- +plugin version +not checked`,
				`^0 failures, 2 warnings$`,
			},
		},
		{
			name: "global JSONC, a by-name plugin with options, installed at the sidecar's version",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				e.installed("hookwire-opencode@latest", "0.3.0")
				e.write(filepath.Join(e.globalConfig, "opencode.jsonc"), `{
  // hookwire, cache-stable
  "plugin": [
    ["hookwire-opencode", { "cacheStable": true, /* on purpose */ "timeoutMs": 300, }],
  ],
}`, 0o600)
			},
			want: []string{
				`^ok +opencode config +.*/config/opencode/opencode\.jsonc: loads hookwire-opencode, options \{"cacheStable":true,"timeoutMs":300\}\.$`,
				`^ok +sidecar +the shim would run .*/bin/hookwire, from PATH: hookwire v0\.3\.0 go1\.26\.0 linux/amd64\. Command: .*/bin/hookwire --project .*/proj$`,
				`^ok +plugin options +.*opencode\.jsonc: the options of hookwire-opencode are all known and valid\.$`,
				`^ok +plugin version +hookwire-opencode 0\.3\.0 \(.*/cache/opencode/packages/hookwire-opencode@latest/node_modules/hookwire-opencode/package\.json\) matches the sidecar's v0\.3\.0\.$`,
				`^0 failures, 0 warnings$`,
			},
		},
		{
			name: "versions differ: a warning naming both",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				e.installed("hookwire-opencode@0.2.0", "0.2.0")
				e.globalJSON(`{"plugin":["hookwire-opencode@0.2.0"]}`)
			},
			want: []string{
				`^ok +opencode config +.*opencode\.json: loads hookwire-opencode@0\.2\.0, no options\.$`,
				`^warn +plugin version +hookwire-opencode 0\.2\.0 \(.*\), but the sidecar's version is v0\.3\.0\. Fix: install the same version of both`,
				`^0 failures, 1 warning$`,
			},
		},
		{
			name: "a make build some commits after the plugin's release: a warning, as the shim gives",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0-4-gabcdef0-dirty")
				e.installed("hookwire-opencode@latest", "0.3.0")
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			want: []string{`^warn +plugin version +hookwire-opencode 0\.3\.0 .*, but the sidecar's version is v0\.3\.0-4-gabcdef0-dirty\. Fix: install the same version of both: the plugin hookwire-opencode@0\.3\.0-4-gabcdef0-dirty, or go install github\.com/hookwire/hookwire/cmd/hookwire@v0\.3\.0\.$`},
		},
		{
			name: "plugin and binary of one untagged release: no warning (npm's . for +)",
			setup: func(e *doctorEnv) {
				e.sidecar("0.0.0-dev+g0123abc")
				e.installed("hookwire-opencode@latest", "0.0.0-dev.g0123abc")
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			want: []string{
				`^ok +plugin version +hookwire-opencode 0\.0\.0-dev\.g0123abc \(.*\) matches the sidecar's 0\.0\.0-dev\+g0123abc\.$`,
				`^0 failures, 0 warnings$`,
			},
		},
		{
			name: "untagged releases that differ: a warning with no go install of a version that does not exist",
			setup: func(e *doctorEnv) {
				e.sidecar("0.0.0-dev+g0123abc")
				e.installed("hookwire-opencode@latest", "0.0.0-dev.g9999999")
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			want: []string{
				`^warn +plugin version +hookwire-opencode 0\.0\.0-dev\.g9999999 .*, but the sidecar's version is 0\.0\.0-dev\+g0123abc\. Fix: install the same version of both: the plugin hookwire-opencode@0\.0\.0-dev\.g0123abc, or a hookwire built from the same commit \(make build\)\.$`,
			},
			absent: []string{`go install`},
		},
		{
			name: "a development build is not compared",
			setup: func(e *doctorEnv) {
				e.sidecar("devel+0123456789ab")
				e.installed("hookwire-opencode@latest", "0.3.0")
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			want: []string{`^- +plugin version +hookwire-opencode 0\.3\.0 .* devel\+0123456789ab: a development build on one side, not compared \(the shim does not compare them either\)\.$`},
		},
		{
			name: "by name, nothing on PATH: the shim runs the installed platform package's sidecar",
			setup: func(e *doctorEnv) {
				e.installed("hookwire-opencode@latest", "0.3.0")
				plat, arch := runtime.GOOS, runtime.GOARCH
				if plat == "windows" {
					plat = "win32"
				}
				if arch == "amd64" {
					arch = "x64"
				}
				pkg := filepath.Join(e.cache, "opencode", "packages", "hookwire-opencode@latest", "node_modules", "hookwire-opencode-"+plat+"-"+arch)
				e.write(filepath.Join(pkg, "bin", "hookwire"), "#!/bin/sh\ntouch "+filepath.Join(e.root, "RAN")+"\necho 'hookwire v0.3.0'\n", 0o755)
				e.write(filepath.Join(pkg, "package.json"), `{"name":"hookwire-opencode-`+plat+`-`+arch+`","version":"0.3.0"}`, 0o600)
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			want: []string{
				`^ok +sidecar +the shim would run .*/node_modules/hookwire-opencode-[a-z0-9]+-[a-z0-9]+/bin/hookwire, from the installed platform package: hookwire-opencode-[a-z0-9]+-[a-z0-9]+ 0\.3\.0 \(its package\.json\)\. Command: `,
				`^ok +plugin version +hookwire-opencode 0\.3\.0 .* matches the sidecar's 0\.3\.0\.$`,
				`^0 failures, 0 warnings$`,
			},
			notRun: "RAN",
		},
		{
			name: "by name but not installed yet: a warning",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			want: []string{`^warn +plugin version +hookwire-opencode is not installed under .*/cache/opencode/packages yet\. Fix: start OpenCode once`},
		},
		{
			name: "the project's .opencode config loads a built shim by file URL; the binary option wins over PATH and is read, not run",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.1.0") // on PATH, not used
				other := filepath.Join(e.root, "opt", "hookwire")
				require.NoError(e.t, os.MkdirAll(filepath.Dir(other), 0o700))
				require.NoError(e.t, os.Link(v040, other))
				url := e.shim(filepath.Join(e.root, "src", "hookwire", "shim"), "0.4.0")
				e.write(filepath.Join(e.project, ".opencode", "opencode.json"),
					`{"plugin":[["`+url+`",{"binary":"`+other+`","args":["--log-level","debug"]}]]}`, 0o600)
				e.write(filepath.Join(e.project, "opencode.json"), `{"model":"x/y"}`, 0o600)
			},
			want: []string{
				`^- +opencode config +.*/proj/opencode\.json: does not load hookwire\.$`,
				`^ok +opencode config +.*/proj/\.opencode/opencode\.json: loads file://.*/src/hookwire/shim/dist/index\.js, options \{"binary":".*/opt/hookwire","args":\["--log-level","debug"\]\}\.$`,
				`^ok +sidecar +the shim would run .*/opt/hookwire, from the plugin option binary in .*/proj/\.opencode/opencode\.json: hookwire v0\.4\.0 go\S+ \S+ \(its build info\)\. Command: .*/opt/hookwire --log-level debug --project .*/proj$`,
				`^ok +plugin version +hookwire-opencode 0\.4\.0 \(.*/src/hookwire/shim/package\.json\) matches the sidecar's v0\.4\.0\.$`,
				`^0 failures, 0 warnings$`,
			},
		},
		{
			name: "a repository naming ./evil.sh as the binary: doctor does not run it, and says what OpenCode would run",
			setup: func(e *doctorEnv) {
				e.write(filepath.Join(e.project, "evil.sh"), "#!/bin/sh\ntouch "+filepath.Join(e.root, "RAN")+"\necho 'hookwire v1.0.0'\n", 0o755)
				e.write(filepath.Join(e.project, "opencode.json"), `{"plugin":[["hookwire-opencode",{"binary":"./evil.sh"}]]}`, 0o600)
			},
			want: []string{
				`^warn +sidecar +the shim would run .*/proj/evil\.sh, from the plugin option binary in .*/proj/opencode\.json: it is not a Go build of hookwire, so its version is unknown without running it, and doctor runs no binary a config file names\. Command: .*/proj/evil\.sh --project .*/proj Fix: make sure it is the hookwire you mean`,
			},
			notRun: "RAN",
		},
		{
			name: "a binary option naming nothing: a failure, not run",
			setup: func(e *doctorEnv) {
				e.write(filepath.Join(e.project, "opencode.json"), `{"plugin":[["hookwire-opencode",{"binary":"bin/gone"}]]}`, 0o600)
			},
			code: 1,
			want: []string{`^FAIL +sidecar +the shim would run .*/proj/bin/gone, from the plugin option binary in .*, which does not exist`},
		},
		{
			name: "a binary option naming a file that is not executable: a failure",
			setup: func(e *doctorEnv) {
				e.write(filepath.Join(e.project, "hw"), "#!/bin/sh\n", 0o644)
				e.write(filepath.Join(e.project, "opencode.json"), `{"plugin":[["hookwire-opencode",{"binary":"./hw"}]]}`, 0o600)
			},
			code: 1,
			want: []string{`^FAIL +sidecar +the shim would run .*/proj/hw, from .*, which is not executable \(mode -rw-r--r--\)\. Fix: chmod \+x it`},
		},
		{
			name: "a pinned version OpenCode never installed, beside one it did: a failure",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				e.installed("hookwire-opencode@0.3.0", "0.3.0")
				e.globalJSON(`{"plugin":["hookwire-opencode@0.0.1"]}`)
			},
			code: 1,
			want: []string{
				`^FAIL +plugin version +hookwire-opencode@0\.0\.1 is not installed under .*/cache/opencode/packages \(installed: hookwire-opencode@0\.3\.0\): OpenCode skips a plugin it cannot install without a word, so hookwire is not loaded\. Fix: start OpenCode once and run doctor again; if it is still missing, 0\.0\.1 is not a published version`,
			},
			absent: []string{`^ok +plugin version`},
		},
		{
			name: "before OpenCode's first start, by name: warnings that say start OpenCode once, exit 0, no Go",
			setup: func(e *doctorEnv) {
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			want: []string{
				`^warn +sidecar +hookwire-opencode is not installed yet, nor the sidecar that comes with it: until then every hook passes through\. Fix: start OpenCode once`,
				`^warn +plugin version +hookwire-opencode is not installed under .* yet\. Fix: start OpenCode once`,
				`^0 failures, 2 warnings$`,
			},
			absent: []string{`go install`, `on PATH`, `^FAIL`},
		},
		{
			name: "installed by name without its platform package: a failure that says reinstall",
			setup: func(e *doctorEnv) {
				e.installed("hookwire-opencode@latest", "0.3.0")
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			code: 1,
			want: []string{`^FAIL +sidecar +hookwire-opencode is installed \(.*\) without its platform package hookwire-opencode-[a-z0-9]+-[a-z0-9]+, which holds the sidecar: every hook passes through\. Fix: reinstall it: remove .*/cache/opencode/packages/hookwire-opencode@latest and start OpenCode again`},
		},
		{
			name: "a stale HOOKWIRE_BIN: named, with the fallback the shim takes",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				e.installed("hookwire-opencode@latest", "0.3.0")
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
				e.t.Setenv("HOOKWIRE_BIN", filepath.Join(e.root, "old-build", "hookwire"))
			},
			want: []string{
				`^warn +sidecar +HOOKWIRE_BIN=.*/old-build/hookwire names no file: the shim skips it, with a warning, and looks further\. Fix: unset HOOKWIRE_BIN`,
				`^ok +sidecar +the shim would run .*/bin/hookwire, from PATH: hookwire v0\.3\.0`,
			},
		},
		{
			name: "plugin options checked by the shim's and the sidecar's own rules, did-you-mean included",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				e.installed("hookwire-opencode@latest", "0.3.0")
				e.globalJSON(`{"plugin":[["hookwire-opencode",{"cacheStabel":true,"managedAgents":"build","timeotMs":300,"state":false,"transformTimeoutMs":"fast","args":["--log-level",3]}]]}`)
			},
			want: []string{
				`^warn +plugin options +.*/opencode\.json: hookwire-opencode: timeotMs: unknown option, ignored \(did you mean "timeoutMs"\?\); transformTimeoutMs must be a number of milliseconds above 0, got "fast"; the default applies; args\[1\] must be a string, got 3; left out; cacheStabel: unknown member, ignored \(did you mean "cacheStable"\?\); managedAgents must be an array, got a string; using the default\. Fix: correct them`,
				`^0 failures, 1 warning$`,
			},
		},
		{
			name: "a file URL to a shim that is not built: a failure",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				e.write(filepath.Join(e.project, "opencode.json"), `{"plugin":["file:///nowhere/hookwire/shim/dist/index.js"]}`, 0o600)
			},
			code: 1,
			want: []string{
				`^FAIL +opencode config +.*/proj/opencode\.json: loads file:///nowhere/hookwire/shim/dist/index\.js, which does not exist\. Fix: build the shim`,
				`^1 failure, 0 warnings$`,
			},
		},
		{
			name: "a config file that is not JSON: a failure",
			setup: func(e *doctorEnv) {
				e.globalJSON(`{"plugin": [}`)
			},
			code: 1,
			want: []string{`^FAIL +opencode config +.*opencode\.json: not valid JSON\(C\): invalid character '\}'.* Fix: correct it`},
		},
		{
			name: "a built shim, but no binary to run: a failure",
			setup: func(e *doctorEnv) {
				url := e.shim(filepath.Join(e.root, "src", "hookwire", "shim"), "0.4.0")
				e.globalJSON(`{"plugin":["` + url + `"]}`)
			},
			code: 1,
			want: []string{`^FAIL +sidecar +the shim finds no hookwire binary .* Fix: build it \(make build\) and set the plugin option binary`},
		},
		{
			name: "a binary that does not run: a failure",
			setup: func(e *doctorEnv) {
				e.write(filepath.Join(e.bin, "hookwire"), "#!/bin/sh\nexit 3\n", 0o755)
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
				e.installed("hookwire-opencode@latest", "0.3.0") // without its platform package: PATH's runs
			},
			code: 1,
			want: []string{`^FAIL +sidecar +the shim would run .*/bin/hookwire \(from PATH\), which fails: exit status 3\.`},
		},
		{
			// npx hookwire-opencode doctor puts npx's temporary copy on
			// PATH; before OpenCode's first start the plugin is not
			// installed, and what will run is the platform package OpenCode
			// installs with it (issue 42 item 8).
			name: "a by-name plugin not installed yet: not a hookwire found on PATH",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			want:   []string{`^warn +sidecar +hookwire-opencode is not installed yet, nor the sidecar that comes with it`},
			absent: []string{`the shim would run`},
		},
		{
			name: "a corrupt state file: a failure, with how to reset it",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				path := filepath.Join(e.stateHome, "hookwire", "proj-0.json")
				e.write(path, "{not json", 0o600)
				e.globalJSON(`{"plugin":[["hookwire-opencode",{"state":"` + path + `"}]]}`)
			},
			code: 1,
			want: []string{`^FAIL +state file +.*/proj-0\.json: 9 bytes, not loadable \(corrupt\): decoding session state: .*; shared by every sidecar on the project\. Fix: .*hookwire forget --all --state .*/proj-0\.json$`},
		},
		{
			name: "state turned off by the plugin's options",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				e.globalJSON(`{"plugin":[["hookwire-opencode",{"state":false}]]}`)
			},
			want: []string{`^- +state file +off \(the plugin option state in \S+/opencode\.json\)`},
		},
		{
			name: "an earlier release's JSON state file with sessions",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				path := e.write(filepath.Join(e.stateHome, "hookwire", "proj-1.json"), twoParentState, 0o600)
				e.globalJSON(`{"plugin":[["hookwire-opencode",{"args":["--state","` + path + `"]}]]}`)
			},
			want: []string{`^ok +state file +.*/proj-1\.json: \d+ bytes, 4 subagent sessions under 2 parent sessions, 2 saved session lists; shared by every sidecar on the project\.$`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			tt.setup(e)
			code, stdout, stderr := runCmd("doctor", "--project", e.project)
			assert.Equal(t, tt.code, code, "stderr: %s\n%s", stderr, stdout)
			assert.Empty(t, stderr)
			assertReport(t, stdout, tt.want, tt.absent)
			if tt.notRun != "" {
				assert.NoFileExists(t, filepath.Join(e.root, tt.notRun), "doctor ran a binary")
			}
		})
	}
}

// buildVersioned builds hookwire as make does, with -X main.version=v,
// once per version per test binary.
func buildVersioned(t *testing.T, v string) string {
	t.Helper()
	versioned.Lock()
	defer versioned.Unlock()
	if p, ok := versioned.bins[v]; ok {
		return p
	}
	bin := filepath.Join(testDir, "hookwire-"+v)
	out, err := goBuild("-ldflags", "-X main.version="+v, "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	if versioned.bins == nil {
		versioned.bins = map[string]string{}
	}
	versioned.bins[v] = bin
	return bin
}

var versioned struct {
	sync.Mutex
	bins map[string]string
}

func TestVersionsMatch(t *testing.T) {
	tests := []struct {
		pkg, bin string
		want     match
	}{
		{"0.3.0", "v0.3.0", matchYes},
		{"0.3.0", "0.3.0", matchYes},
		{"0.0.0-dev.g0123abc", "0.0.0-dev+g0123abc", matchYes}, // one release: npm has . for +
		{"0.0.0-dev.g0123abc", "0.0.0-dev+g0123abd", matchNo},
		{"0.3.0", "v0.3.0-4-gabcdef0", matchNo}, // the shim warns: so does doctor
		{"0.3.0", "v0.3.0-rc1", matchNo},
		{"0.3.0", "v0.3.1", matchNo},
		{"0.3.0", "v0.30.0", matchNo},
		{"0.3.0", "devel+0123456789ab", matchUnknown},
		{"0.0.0-dev", "v0.3.0", matchUnknown}, // a plugin run from a checkout
		{"0.3.0", "", matchUnknown},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, versionsMatch(tt.pkg, tt.bin), "%s vs %s", tt.pkg, tt.bin)
	}
}

func TestStripJSONC(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"line comment", "{\"a\": 1 // one\n}", "{\"a\": 1       \n}"},
		{"block comment", `{/* x */"a":1}`, `{       "a":1}`},
		{"trailing commas", `{"a":[1,2,],}`, `{"a":[1,2 ] }`},
		{"comment markers inside strings stay", `{"u":"http://x/*y*/","c":","}`, `{"u":"http://x/*y*/","c":","}`},
		{"escaped quote in a string", `{"a":"\"//"}`, `{"a":"\"//"}`},
		{"a comma before a comment before a brace", "[1, // last\n]", "[1         \n]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(stripJSONC([]byte(tt.in))))
		})
	}
}

// TestShimOptionProblem: doctor judges the shim's own options' values as
// the shim does (a bad one keeps its default there).
func TestShimOptionProblem(t *testing.T) {
	tests := []struct {
		name, value string
		bad         bool
	}{
		{"timeoutMs", `300`, false}, {"timeoutMs", `0`, true}, {"timeoutMs", `"300"`, true},
		{"transformTimeoutMs", `-1`, true}, {"maxInFlightBytes", `1024`, false}, {"maxReplyBytes", `"16MB"`, true},
		{"hungAfterMisses", `0`, false}, {"hungAfterMisses", `1.5`, true}, {"hungAfterMisses", `-1`, true},
		{"binary", `"/opt/hookwire"`, false}, {"binary", `""`, true}, {"binary", `5`, true},
		{"args", `["--log-level","debug"]`, false}, {"args", `null`, false}, {"args", `"--x"`, true}, {"args", `[1]`, true},
		{"state", `false`, false}, {"state", `null`, false}, {"state", `"a.json"`, false}, {"state", `true`, true},
		{"logFile", `""`, false}, {"trace", `7`, true}, {"record", `"bug.json"`, false},
	}
	for _, tt := range tests {
		got := shimOptionProblem(tt.name, jsontext.Value(tt.value))
		assert.Equal(t, tt.bad, got != "", "%s=%s: %q", tt.name, tt.value, got)
	}
}

// TestDoctorSamePluginInTwoConfigs: the plugin listed by name in the global
// config and in the project's, one install: one version line, not two
// identical ones (seen on a by-name install that added the project line).
func TestDoctorSamePluginInTwoConfigs(t *testing.T) {
	e := newDoctorEnv(t)
	e.sidecar("v0.3.0")
	e.installed("hookwire-opencode@latest", "0.3.0")
	e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
	e.write(filepath.Join(e.project, "opencode.json"), `{"plugin":[["hookwire-opencode",{"managedAgent":["build"]}]]}`, 0o600)
	code, stdout, stderr := runCmd("doctor", "--project", e.project)
	assert.Equal(t, 0, code, "stderr: %s\n%s", stderr, stdout)
	assert.Len(t, regexp.MustCompile(`(?m)^ok +opencode config `).FindAllString(stdout, -1), 2, "each config file has its line:\n%s", stdout)
	assert.Len(t, regexp.MustCompile(`(?m)^ok +plugin version +hookwire-opencode 0\.3\.0 .* matches`).FindAllString(stdout, -1), 1, "one version line:\n%s", stdout)
	assert.Regexp(t, `(?m)^0 failures, 1 warning$`, stdout, "the option typo counted once")
}

// TestDoctorBunInstallLayout: OpenCode 1.1 to 1.3 install a by-name plugin
// with `bun add` into <cache>/opencode/node_modules/, not packages/. After
// their first start doctor once said the plugin was "not installed yet"
// while its sidecar ran; it finds the plugin and its sidecar there.
func TestDoctorBunInstallLayout(t *testing.T) {
	platform := platformPackageName()
	if platform == "" {
		t.Skip("no platform package for this machine")
	}
	tests := []struct {
		name, spec, installed string
		want, absent          []string
	}{
		{
			name: "unpinned", spec: "hookwire-opencode", installed: "0.3.0",
			want: []string{
				`^ok +sidecar +the shim would run .*/cache/opencode/node_modules/` + platform + `/bin/hookwire, from the installed platform package`,
				`^ok +plugin version +hookwire-opencode 0\.3\.0 \(.*/cache/opencode/node_modules/hookwire-opencode/package\.json\)`,
			},
			absent: []string{`not installed`},
		},
		{
			name: "pinned to the installed version", spec: "hookwire-opencode@0.3.0", installed: "0.3.0",
			want:   []string{`^ok +plugin version +hookwire-opencode 0\.3\.0 `},
			absent: []string{`not installed`},
		},
		{
			name: "pinned to another version", spec: "hookwire-opencode@0.2.0", installed: "0.3.0",
			want: []string{`^warn +plugin version +hookwire-opencode@0\.2\.0 is not installed`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			nm := filepath.Join(e.cache, "opencode", "node_modules")
			e.write(filepath.Join(nm, pluginPackage, "package.json"), `{"name":"hookwire-opencode","version":"`+tt.installed+`"}`, 0o600)
			e.write(filepath.Join(nm, platform, "package.json"), `{"name":"`+platform+`","version":"`+tt.installed+`"}`, 0o600)
			e.write(filepath.Join(nm, platform, "bin", "hookwire"), "#!/bin/sh\nexit 0\n", 0o755)
			e.globalJSON(`{"plugin":["` + tt.spec + `"]}`)
			_, stdout, stderr := runCmd("doctor", "--project", e.project)
			assert.Empty(t, stderr)
			for _, want := range tt.want {
				assert.Regexp(t, regexp.MustCompile(`(?m)`+want), stdout)
			}
			for _, absent := range tt.absent {
				assert.NotRegexp(t, regexp.MustCompile(`(?m)`+absent), stdout)
			}
		})
	}
}
