package main

import (
	"os"
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
	tests := []struct {
		name    string
		version string // "" no opencode on PATH; "broken": one that fails
		config  string
		code    int
		want    []string
	}{
		{name: "none on PATH", want: []string{`^- +opencode +no opencode \(or opencode2\) command found`}},
		{name: "the newest verified", version: "1.18.33", config: `{"plugin":[["hookwire-opencode",{"cacheStable":false}]]}`,
			want: []string{`^ok +opencode +\S+/bin/opencode: OpenCode 1\.18\.33: everything works`}},
		{name: "an old one with a by-name entry", version: "1.3.2", config: `{"plugin":["hookwire-opencode"]}`,
			want: []string{`^ok +opencode +\S+/bin/opencode: OpenCode 1\.3\.2: .*HOOKWIRE_OPTIONS`}},
		{name: "an old one given options it rejects", version: "1.3.2", config: `{"plugin":[["hookwire-opencode",{"cacheStable":false}]]}`, code: 1,
			want: []string{`^FAIL +opencode +.*opencode\.json gives hookwire options as \[name, options\], which OpenCode 1\.3\.2 rejects .* Fix: .*HOOKWIRE_OPTIONS='\{"cacheStable":false\}'`}},
		{name: "too old", version: "1.1.16", config: `{"plugin":["hookwire-opencode"]}`,
			want: []string{`^warn +opencode +.*OpenCode 1\.1\.16 is older than 1\.1\.53.* Fix: update OpenCode`}},
		{name: "one that prints its version, then hangs", version: "slow",
			want: []string{`^ok +opencode +\S+/bin/opencode: OpenCode 1\.15\.13: everything works`}},
		{name: "one that gives no version", version: "broken",
			want: []string{`^warn +opencode +\S+/bin/opencode did not report a version`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			e.sidecar("v0.3.0")
			switch tt.version {
			case "":
			case "broken":
				e.write(filepath.Join(e.bin, "opencode"), "#!/bin/sh\nexit 3\n", 0o755)
			case "slow":
				versionTimeout = 300 * time.Millisecond
				t.Cleanup(func() { versionTimeout = 5 * time.Second })
				e.write(filepath.Join(e.bin, "opencode"), "#!/bin/sh\necho 1.15.13\nexec sleep 30\n", 0o755)
			default:
				e.write(filepath.Join(e.bin, "opencode"), "#!/bin/sh\necho "+tt.version+"\n", 0o755)
			}
			if tt.config != "" {
				e.globalJSON(tt.config)
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
		})
	}
}
