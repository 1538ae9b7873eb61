package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostSupport(t *testing.T) {
	tests := []struct {
		version string
		level   level
		want    string // a regexp the text matches
	}{
		{"1.1.16", levelWarn, `older than 1\.1\.53.*turns itself off`},
		{"1.1.52", levelWarn, `older than 1\.1\.53`},
		{"1.1.53", levelOK, `verified on 1\.1\.53 and 1\.3\.2`},
		{"1.3.2", levelOK, `HOOKWIRE_OPTIONS.*model variants.*opencode session delete`},
		{"1.13.9", levelOK, `HOOKWIRE_OPTIONS`},
		{"1.14.0", levelOK, `everything works`},
		{"1.15.13", levelOK, `everything works`},
		{"1.18.33", levelOK, `everything works`},
		{"1.18.34", levelInfo, `newer than 1\.18\.33`},
		{"1.20.0", levelInfo, `newer than 1\.18\.33`},
		{"2.0.3", levelInfo, `OpenCode 2's plugin API at ` + v2Commit + `; not yet run against a real OpenCode 2`},
	}
	for _, tt := range tests {
		l, text, _ := hostSupport(tt.version)
		assert.Equal(t, tt.level, l, tt.version)
		assert.Regexp(t, tt.want, text, tt.version)
	}
}

// The shim refuses to start below the same version doctor names.
func TestMinOpenCodeMatchesShim(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "shim", "src", "host.ts"))
	require.NoError(t, err)
	m := regexp.MustCompile(`export const MIN_OPENCODE = "([^"]+)"`).FindSubmatch(src)
	require.NotNil(t, m, "MIN_OPENCODE in shim/src/host.ts")
	assert.Equal(t, minOpenCode, string(m[1]))
}

func TestDoctorOpenCode(t *testing.T) {
	sleep, err := exec.LookPath("sleep") // before newDoctorEnv empties PATH
	require.NoError(t, err)
	const withOptions = `{"plugin":[["hookwire-opencode",{"cacheStable":false}]]}`
	tests := []struct {
		name    string
		version string // "" no opencode on PATH; "broken": one that fails; "slow", "late", "mute", "npm": see below
		timeout time.Duration
		config  string // the global opencode.json
		project string // the project's opencode.json
		code    int
		want    []string
		absent  []string
	}{
		{name: "none on PATH", want: []string{`^- +opencode +no opencode \(or opencode2\) command found`}},
		{name: "the newest verified", version: "1.18.33", config: withOptions,
			want: []string{`^ok +opencode +\S+/bin/opencode: OpenCode 1\.18\.33: everything works.* \(version from ` + "`opencode --version`" + `\)$`,
				`^ok +opencode config +.*opencode\.json: loads hookwire-opencode, options \{"cacheStable":false\}\.$`}},
		{name: "an old one with a by-name entry", version: "1.3.2", config: `{"plugin":["hookwire-opencode"]}`,
			want: []string{`^ok +opencode +\S+/bin/opencode: OpenCode 1\.3\.2: .*HOOKWIRE_OPTIONS`}},
		{name: "an old one given options it rejects", version: "1.3.2", config: withOptions, code: 1,
			want:   []string{`^FAIL +opencode config +.*opencode\.json: gives hookwire-opencode options \{"cacheStable":false\} as \[name, options\], which OpenCode 1\.3\.2 \(\S+/bin/opencode\) refuses: it does not start .* Fix: .*HOOKWIRE_OPTIONS='\{"cacheStable":false\}'`},
			absent: []string{`^ok +opencode config`}},
		{name: "too old", version: "1.1.16", config: `{"plugin":["hookwire-opencode"]}`,
			want: []string{`^warn +opencode +.*OpenCode 1\.1\.16 is older than 1\.1\.53.* Fix: update OpenCode`}},
		{name: "one that prints its version, then hangs", version: "slow", timeout: 20 * time.Second,
			want: []string{`^ok +opencode +\S+/bin/opencode: OpenCode 1\.15\.13: everything works`}},
		{name: "one that gives no version", version: "broken",
			want: []string{`^warn +opencode +\S+/bin/opencode did not report a version \(` + "`opencode --version`" + `: it failed: exit status 3\)`}},
		{name: "one that prints nothing within the time it gets", version: "mute", timeout: 200 * time.Millisecond, config: withOptions,
			want: []string{`^warn +opencode +\S+/bin/opencode did not report a version \(.*it printed none within 200ms\)`,
				`^warn +opencode config +.*: loads hookwire-opencode, options \{"cacheStable":false\}, as \[name, options\]: OpenCode before 1\.14\.0 refuses that .*the version of \S+/bin/opencode is not known\. Fix: on OpenCode 1\.14\.0 or later this is right; before it, .*HOOKWIRE_OPTIONS=`},
			absent: []string{`^ok +opencode config`}},
		// issue 32: 1.3.2's --version took up to 6.3 s (11.5 s here under
		// load); doctor waited 5 s, said ok to a config 1.3.2 refuses and
		// exited 0.
		{name: "1.3.2 whose --version takes 8 s, options in the project config", version: "late", config: `{"plugin":["hookwire-opencode"]}`,
			project: withOptions, code: 1,
			want: []string{`^ok +opencode +\S+/bin/opencode: OpenCode 1\.3\.2: `,
				`^FAIL +opencode config +.*/proj/opencode\.json: gives hookwire-opencode options \{"cacheStable":false\} as \[name, options\], which OpenCode 1\.3\.2 .* refuses`},
			absent: []string{`did not report a version`}},
		{name: "an npm install: the version from its package.json, not run", version: "npm", project: withOptions, code: 1,
			want: []string{`^ok +opencode +\S+/bin/opencode: OpenCode 1\.3\.2: .*\(version from \S+/node_modules/opencode-ai/package\.json\)$`,
				`^FAIL +opencode config +.*refuses`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			e.sidecar("v0.3.0")
			if tt.timeout != 0 {
				old := versionTimeout
				versionTimeout = tt.timeout
				t.Cleanup(func() { versionTimeout = old })
			}
			oc := filepath.Join(e.bin, "opencode")
			switch tt.version {
			case "":
			case "broken":
				e.write(oc, "#!/bin/sh\nexit 3\n", 0o755)
			case "slow": // at once, then 30 s more: doctor does not wait for the end
				e.write(oc, "#!/bin/sh\necho 1.15.13\nexec "+sleep+" 30\n", 0o755)
			case "mute":
				e.write(oc, "#!/bin/sh\nexec "+sleep+" 30\n", 0o755)
			case "late": // what the Done-when of issue 32 runs; no package.json beside it
				e.write(oc, "#!/bin/sh\n"+sleep+" 8\necho 1.3.2\n", 0o755)
			case "npm": // the layout of npm install opencode-ai: .bin/opencode -> ../opencode-ai/bin/opencode
				nm := filepath.Join(e.root, "lib", "node_modules")
				e.write(filepath.Join(nm, "opencode-ai", "package.json"), `{"name":"opencode-ai","version":"1.3.2","bin":{"opencode":"./bin/opencode"}}`, 0o600)
				e.write(filepath.Join(nm, "opencode-ai", "bin", "opencode"), "#!/bin/sh\nexit 3\n", 0o755) // doctor does not run it
				require.NoError(t, os.Symlink(filepath.Join(nm, "opencode-ai", "bin", "opencode"), oc))
			default:
				e.write(oc, "#!/bin/sh\necho "+tt.version+"\n", 0o755)
			}
			if tt.config != "" {
				e.globalJSON(tt.config)
			}
			if tt.project != "" {
				e.write(filepath.Join(e.project, "opencode.json"), tt.project, 0o600)
			}
			code, stdout, stderr := runCmd("doctor", "--project", e.project)
			assert.Equal(t, tt.code, code, "stderr: %s\n%s", stderr, stdout)
			lines := strings.Split(stdout, "\n")
			for _, want := range tt.want {
				re := regexp.MustCompile(want)
				found := false
				for _, l := range lines {
					found = found || re.MatchString(l)
				}
				assert.True(t, found, "no line matches %s in\n%s", want, stdout)
			}
			for _, absent := range tt.absent {
				assert.NotRegexp(t, "(?m)"+absent, stdout)
			}
		})
	}
}

// TestNpmOpenCodeVersion: which layouts give a version without running
// OpenCode: npm's opencode-ai (linked from .bin or a global bin), a
// platform package's binary; not a package.json of another package, nor a
// command outside a bin directory.
func TestNpmOpenCodeVersion(t *testing.T) {
	root := t.TempDir()
	write := func(path, content string) string {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o755))
		return path
	}
	link := func(target, name string) string {
		p := filepath.Join(root, "links", name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.Symlink(target, p))
		return p
	}
	pkg := func(dir, name, version string) string {
		write(filepath.Join(root, dir, "package.json"), `{"name":"`+name+`","version":"`+version+`"}`)
		return write(filepath.Join(root, dir, "bin", "opencode"), "#!/bin/sh\n")
	}
	tests := []struct {
		name, path, want string
	}{
		{"opencode-ai through a link", link(pkg("g/opencode-ai", "opencode-ai", "1.3.2"), "a"), "1.3.2"},
		{"opencode-ai itself", pkg("h/opencode-ai", "opencode-ai", "1.18.33"), "1.18.33"},
		{"a platform package", link(pkg("p/opencode-linux-x64-baseline", "opencode-linux-x64-baseline", "1.15.13"), "b"), "1.15.13"},
		{"another package", link(pkg("o/other", "some-wrapper", "9.9.9"), "c"), ""},
		{"not in a bin directory", write(filepath.Join(root, "x", "opencode"), "#!/bin/sh\n"), ""},
		{"a version that is not one", pkg("v/opencode-ai", "opencode-ai", "latest"), ""},
		{"a dangling link", link(filepath.Join(root, "nowhere"), "d"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pj := npmOpenCodeVersion(tt.path)
			assert.Equal(t, tt.want, got)
			if tt.want != "" {
				assert.FileExists(t, pj)
			}
		})
	}
}
