package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// doctor says whether the TUI part (the sidebar section) is configured,
// and warns when a bare `.opencode/opencode.json` entry (what `opencode
// plugin` writes) overrides an entry that gives the plugin options.
func TestDoctorTUI(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(e *doctorEnv)
		want   []string
		absent []string
	}{
		{"the server part only: the section is off, and how to turn it on",
			func(e *doctorEnv) { e.globalJSON(`{"plugin":["hookwire-opencode"]}`) },
			[]string{`^- +tui +the sidebar section is off: no tui\.json loads hookwire-opencode \(OpenCode loads the server part only\)\. Fix: run opencode plugin hookwire-opencode in the project, or add "plugin": \["hookwire-opencode"\] to .*/config/opencode/tui\.json\.$`},
			nil},
		{"a global tui.json names it",
			func(e *doctorEnv) {
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
				e.write(filepath.Join(e.globalConfig, "tui.json"), `{"plugin":["hookwire-opencode"]}`, 0o600)
			},
			[]string{`^ok +tui +the sidebar section is on: .*/config/opencode/tui\.json loads hookwire-opencode\.$`},
			[]string{`^warn +(tui|opencode config)`}},
		{"opencode plugin's project files: .opencode/tui.json (JSONC) and a bare .opencode/opencode.json over the project's options",
			func(e *doctorEnv) {
				e.write(filepath.Join(e.project, "opencode.json"), `{"plugin":[["hookwire-opencode",{"cacheStable":false}]]}`, 0o600)
				e.write(filepath.Join(e.project, ".opencode", "opencode.json"), `{"plugin":["hookwire-opencode"]}`, 0o600)
				e.write(filepath.Join(e.project, ".opencode", "tui.jsonc"), "// written by opencode plugin\n{\"plugin\":[\"hookwire-opencode\"]}", 0o600)
			},
			[]string{
				`^ok +tui +the sidebar section is on: .*/proj/\.opencode/tui\.jsonc loads hookwire-opencode\.$`,
				`^warn +opencode config +.*/proj/\.opencode/opencode\.json names hookwire-opencode without options and overrides the entry in .*/proj/opencode\.json, whose options are not used\. Fix: give the options in .*/proj/\.opencode/opencode\.json too, or remove the bare entry there\.$`,
			},
			nil},
		{"the options in .opencode/opencode.json itself: no override",
			func(e *doctorEnv) {
				e.write(filepath.Join(e.project, "opencode.json"), `{"plugin":[["hookwire-opencode",{"cacheStable":false}]]}`, 0o600)
				e.write(filepath.Join(e.project, ".opencode", "opencode.json"), `{"plugin":[["hookwire-opencode",{"cacheStable":false}]]}`, 0o600)
			},
			nil,
			[]string{`overrides the entry`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			tt.setup(e)
			_, stdout, stderr := runCmd("doctor", "--project", e.project)
			assert.Empty(t, stderr)
			assertReport(t, stdout, tt.want, tt.absent)
		})
	}
}

// OpenCode 2.1+ configurations are reported to list plugins under
// "plugins": doctor reads that key as well as 1.x's "plugin".
func TestDoctorReadsThePluginsKey(t *testing.T) {
	e := newDoctorEnv(t)
	e.globalJSON(`{"plugins":[["hookwire-opencode",{"cacheStable":false}]]}`)
	_, stdout, _ := runCmd("doctor", "--project", e.project)
	assertReport(t, stdout, []string{`^\S+ +opencode config +.*/opencode\.json: loads hookwire-opencode, options \{"cacheStable":false\}`}, []string{`plugin is not configured`})
}
