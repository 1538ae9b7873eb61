package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDoctorEnvOptions: doctor reads HOOKWIRE_OPTIONS as the shim does
// (issue 32: a typo in it and text that is not JSON both gave "no
// options, 0 warnings"): the same checks as a config entry's options when
// OpenCode passes none, a warning when it does (the variable is then
// ignored), and the options it gives are the ones the rest of doctor uses.
func TestDoctorEnvOptions(t *testing.T) {
	tests := []struct {
		name   string
		env    string
		config string // the global opencode.json; default: the plugin by name
		code   int
		want   []string
		absent []string
	}{
		{name: "a typo, with did-you-mean", env: `{"cacheStabel":false}`,
			want: []string{`^warn +plugin options +HOOKWIRE_OPTIONS: cacheStabel: unknown member, ignored \(did you mean "cacheStable"\?\)\. Fix: correct them`,
				`^0 failures, 1 warning$`}},
		{name: "a misspelt shim option", env: `{"timeotMs":300}`,
			want: []string{`^warn +plugin options +HOOKWIRE_OPTIONS: timeotMs: unknown option, ignored \(did you mean "timeoutMs"\?\)\.`}},
		{name: "not JSON", env: `{cacheStable:false}`,
			want: []string{`^warn +plugin options +HOOKWIRE_OPTIONS is not JSON \(\{cacheStable:false\}\): the shim uses its defaults \(and says so in the TUI's hookwire section and a toast, and on stderr under opencode run\)\. Fix: write a JSON object`}},
		{name: "JSON but not an object", env: `["cacheStable"]`,
			want: []string{`^warn +plugin options +HOOKWIRE_OPTIONS must be a JSON object, got \["cacheStable"\]: the shim uses its defaults\.`}},
		{name: "valid", env: ` {"cacheStable":false,"timeoutMs":300} `,
			want:   []string{`^ok +plugin options +the options in HOOKWIRE_OPTIONS \(in this shell\) are all known and valid\.$`, `^0 failures, 0 warnings$`},
			absent: []string{`^warn`}},
		{name: "a value the sidecar does not take", env: `{"maxMessageBytes":"big"}`,
			want: []string{`^warn +plugin options +HOOKWIRE_OPTIONS: maxMessageBytes must be an integer, got a string; using the default \d+\.`}},
		{name: "OpenCode got options itself: the variable is ignored", env: `{"cacheStable":false}`,
			config: `{"plugin":[["hookwire-opencode",{"cacheStable":true}]]}`,
			want: []string{`^warn +plugin options +HOOKWIRE_OPTIONS is set in this shell, but \S+/opencode\.json gives hookwire-opencode options itself, so the shim ignores the variable\.`,
				`^ok +plugin options +\S+/opencode\.json: the options of hookwire-opencode are all known and valid\.$`}},
		{name: "an entry with empty options: the variable applies", env: `{"cacheStabel":false}`,
			config: `{"plugin":[["hookwire-opencode",{}]]}`,
			want:   []string{`^warn +plugin options +HOOKWIRE_OPTIONS: cacheStabel: unknown member`},
			absent: []string{`ignores the variable`}},
		{name: "its state option is the one doctor follows", env: `{"state":false}`,
			want: []string{`^- +state file +off \(the plugin option state in HOOKWIRE_OPTIONS\)`}},
		{name: "its binary option, with no config file", env: `{"binary":"/opt/hookwire/bin/hookwire"}`, config: "-", code: 0,
			want: []string{`^warn +sidecar +the shim would run /opt/hookwire/bin/hookwire, from the plugin option binary in HOOKWIRE_OPTIONS, which does not exist`}},
		{name: "blank: as unset", env: "  ",
			absent: []string{`HOOKWIRE_OPTIONS`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			e.sidecar("v0.3.0")
			e.installed("hookwire-opencode@latest", "0.3.0")
			switch tt.config {
			case "":
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			case "-":
			default:
				e.globalJSON(tt.config)
			}
			t.Setenv("HOOKWIRE_OPTIONS", tt.env)
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
