package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

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

func TestDoctor(t *testing.T) {
	tests := []struct {
		name  string
		setup func(e *doctorEnv)
		code  int
		want  []string // regexps, each matching one line of the report
	}{
		{
			name:  "nothing configured: warnings only",
			setup: func(e *doctorEnv) {},
			want: []string{
				`^ok +binary +\S+: hookwire `,
				`^warn +plugin +hookwire's plugin is not configured: no OpenCode config file found\. Fix: add "plugin": \["hookwire-opencode"\] .* to .*/config/opencode/opencode\.json\.$`,
				`^warn +sidecar +the shim finds no hookwire binary .* Fix: put hookwire on PATH`,
				`^ok +state file +.*/state/hookwire/proj-[0-9a-f]{16}\.json \(the project's default\): none yet`,
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
				`^ok +sidecar +the shim would run .*/bin/hookwire, from PATH: hookwire v0\.3\.0 go1\.26\.0 linux/amd64\.$`,
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
			name: "a make build some commits after the plugin's release matches it",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0-4-gabcdef0-dirty")
				e.installed("hookwire-opencode@latest", "0.3.0")
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			want: []string{`^ok +plugin version +.* matches the sidecar's v0\.3\.0-4-gabcdef0-dirty\.$`},
		},
		{
			name: "a development build is not compared",
			setup: func(e *doctorEnv) {
				e.sidecar("devel+0123456789ab")
				e.installed("hookwire-opencode@latest", "0.3.0")
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			want: []string{`^- +plugin version +hookwire-opencode 0\.3\.0 .* devel\+0123456789ab is a development build, not compared\.$`},
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
				e.write(filepath.Join(e.cache, "opencode", "packages", "hookwire-opencode@latest", "node_modules",
					"hookwire-opencode-"+plat+"-"+arch, "bin", "hookwire"),
					"#!/bin/sh\necho 'hookwire v0.3.0 go1.26.0 linux/amd64'\n", 0o755)
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			want: []string{
				`^ok +sidecar +the shim would run .*/node_modules/hookwire-opencode-[a-z0-9]+-[a-z0-9]+/bin/hookwire, from the installed platform package: hookwire v0\.3\.0 `,
				`^ok +plugin version +hookwire-opencode 0\.3\.0 .* matches the sidecar's v0\.3\.0\.$`,
				`^0 failures, 0 warnings$`,
			},
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
			name: "the project's .opencode config loads a built shim by file URL; the binary option wins over PATH",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.1.0") // on PATH, not used
				other := e.write(filepath.Join(e.root, "opt", "hookwire"), "#!/bin/sh\necho 'hookwire v0.4.0 go1.26.0 linux/amd64'\n", 0o755)
				url := e.shim(filepath.Join(e.root, "src", "hookwire", "shim"), "0.4.0")
				e.write(filepath.Join(e.project, ".opencode", "opencode.json"),
					`{"plugin":[["`+url+`",{"binary":"`+other+`"}]]}`, 0o600)
				e.write(filepath.Join(e.project, "opencode.json"), `{"model":"x/y"}`, 0o600)
			},
			want: []string{
				`^- +opencode config +.*/proj/opencode\.json: does not load hookwire\.$`,
				`^ok +opencode config +.*/proj/\.opencode/opencode\.json: loads file://.*/src/hookwire/shim/dist/index\.js, options \{"binary":".*/opt/hookwire"\}\.$`,
				`^ok +sidecar +the shim would run .*/opt/hookwire, from the plugin option binary: hookwire v0\.4\.0`,
				`^ok +plugin version +hookwire-opencode 0\.4\.0 \(.*/src/hookwire/shim/package\.json\) matches the sidecar's v0\.4\.0\.$`,
				`^0 failures, 0 warnings$`,
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
			name: "configured, but no binary to run: a failure",
			setup: func(e *doctorEnv) {
				e.installed("hookwire-opencode@latest", "0.3.0")
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			code: 1,
			want: []string{`^FAIL +sidecar +the shim finds no hookwire binary`},
		},
		{
			name: "a binary that does not run: a failure",
			setup: func(e *doctorEnv) {
				e.write(filepath.Join(e.bin, "hookwire"), "#!/bin/sh\nexit 3\n", 0o755)
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			},
			code: 1,
			want: []string{`^FAIL +sidecar +the shim would run .*/bin/hookwire \(from PATH\), which fails: exit status 3\.`},
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
			want: []string{`^FAIL +state file +.*/proj-0\.json: 9 bytes, not loadable: decoding session state: .*; not in use\. Fix: .*hookwire forget --all --state .*/proj-0\.json$`},
		},
		{
			name: "state turned off by the plugin's options",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				e.globalJSON(`{"plugin":[["hookwire-opencode",{"state":false}]]}`)
			},
			want: []string{`^- +state file +off \(the plugin option state\)`},
		},
		{
			name: "a state file with sessions, nobody holding it",
			setup: func(e *doctorEnv) {
				e.sidecar("v0.3.0")
				path := e.write(filepath.Join(e.stateHome, "hookwire", "proj-1.json"), twoParentState, 0o600)
				e.globalJSON(`{"plugin":[["hookwire-opencode",{"args":["--state","` + path + `"]}]]}`)
			},
			want: []string{`^ok +state file +.*/proj-1\.json: \d+ bytes, 4 sessions under 2 parents, 2 frozen blocks; not in use\.$`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			tt.setup(e)
			code, stdout, stderr := runCmd("doctor", "--project", e.project)
			assert.Equal(t, tt.code, code, "stderr: %s\n%s", stderr, stdout)
			assert.Empty(t, stderr)
			lines := strings.Split(stdout, "\n")
			for _, want := range tt.want {
				re := regexp.MustCompile(want)
				found := false
				for _, l := range lines {
					found = found || re.MatchString(l)
				}
				assert.True(t, found, "no line matches %s in\n%s", want, stdout)
			}
		})
	}
}

func TestVersionsMatch(t *testing.T) {
	tests := []struct {
		pkg, bin string
		want     match
	}{
		{"0.3.0", "v0.3.0", matchYes},
		{"0.3.0", "0.3.0", matchYes},
		{"0.3.0", "v0.3.0-4-gabcdef0", matchYes},
		{"0.3.0", "v0.3.0-4-gabcdef0-dirty", matchYes},
		{"0.3.0", "v0.3.0-rc1", matchNo},
		{"0.3.0", "v0.3.1", matchNo},
		{"0.3.0", "v0.30.0", matchNo},
		{"0.3.0", "devel+0123456789ab", matchUnknown},
		{"0.3.0", "abc1234", matchUnknown}, // git describe without tags
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
