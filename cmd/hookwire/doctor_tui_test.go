package main

import (
	"path/filepath"
	"regexp"
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
			[]string{`^- +tui +the sidebar section is off: no tui\.json \(cli\.json on OpenCode 2\) loads hookwire-opencode \(OpenCode loads the server part only\)\. Fix: run opencode plugin hookwire-opencode in the project, or add "plugin": \["hookwire-opencode"\] to .*/config/opencode/tui\.json \(OpenCode 2: "plugins": \["hookwire-opencode"\] in .*/config/opencode/cli\.json\)\.$`},
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

// Every plugin list doctor reads takes each form OpenCode takes (issue
// 51): a name, 1.x's [name, options] pair and OpenCode 2.1+'s
// {"package": name, "options": {...}} object, under "plugin" or "plugins";
// in opencode.json (the server part), tui.json (the TUI part on 1.x) and
// cli.json (the TUI part on OpenCode 2, its list of TUI-only plugins),
// global, in the project and in its .opencode.
func TestDoctorPluginListForms(t *testing.T) {
	forms := []struct {
		name, list string
		options    string // as doctor quotes them; "" none
	}{
		{"a name", `{"plugins":["hookwire-opencode"]}`, ""},
		{"a [name, options] pair", `{"plugin":[["hookwire-opencode",{"cacheStable":false}]]}`, `{"cacheStable":false}`},
		{"a {package, options} object", `{"plugins":["other",{"package":"hookwire-opencode","options":{"cacheStable":false}}]}`, `{"cacheStable":false}`},
		{"a {package} object without options", `{"plugins":[{"package":"hookwire-opencode@0.3.0"}]}`, ""},
	}
	type place struct {
		name string
		path func(e *doctorEnv) string
	}
	dirs := []place{
		{"global", func(e *doctorEnv) string { return e.globalConfig }},
		{"project", func(e *doctorEnv) string { return e.project }},
		{".opencode", func(e *doctorEnv) string { return filepath.Join(e.project, ".opencode") }},
	}
	for _, f := range forms {
		for _, d := range dirs {
			t.Run("opencode.json "+d.name+": "+f.name, func(t *testing.T) {
				e := newDoctorEnv(t)
				file := e.write(filepath.Join(d.path(e), "opencode.json"), f.list, 0o600)
				_, stdout, _ := runCmd("doctor", "--project", e.project)
				want := `^\S+ +opencode config +` + regexp.QuoteMeta(file) + `: loads hookwire-opencode(@0\.3\.0)?, `
				if f.options == "" {
					want += `no options\.$`
				} else {
					want += `options ` + regexp.QuoteMeta(f.options)
				}
				assertReport(t, stdout, []string{want}, []string{`plugin is not configured`})
			})
			for _, tui := range []string{"tui.json", "cli.json"} {
				t.Run(tui+" "+d.name+": "+f.name, func(t *testing.T) {
					e := newDoctorEnv(t)
					e.globalJSON(`{"plugins":["hookwire-opencode"]}`)
					file := e.write(filepath.Join(d.path(e), tui), f.list, 0o600)
					_, stdout, _ := runCmd("doctor", "--project", e.project)
					assertReport(t, stdout, []string{`^ok +tui +the sidebar section is on: ` + regexp.QuoteMeta(file) + ` loads hookwire-opencode\.$`},
						[]string{`section is off`})
				})
			}
		}
	}
}

// An object entry that names another package, or no package, does not
// load hookwire; OpenCode 2's local plugin, a package's directory, does.
func TestDoctorPluginObjectEntries(t *testing.T) {
	tests := []struct {
		name  string
		entry func(e *doctorEnv) string
		want  string
	}{
		{"another package", func(*doctorEnv) string { return `{"package":"other","options":{"x":1}}` }, `: does not load hookwire\.$`},
		{"options without a package", func(*doctorEnv) string { return `{"options":{"cacheStable":false}}` }, `: does not load hookwire\.$`},
		{"a package that is not a string", func(*doctorEnv) string { return `{"package":5}` }, `: does not load hookwire\.$`},
		{"a local plugin: the shim's directory", func(e *doctorEnv) string {
			dir := filepath.Join(e.root, "shim")
			e.shim(dir, "0.3.0")
			return `{"package":"file://` + dir + `"}`
		}, `: loads file://.*/shim, no options\.$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			e.globalJSON(`{"plugins":[` + tt.entry(e) + `]}`)
			_, stdout, _ := runCmd("doctor", "--project", e.project)
			assertReport(t, stdout, []string{`^\S+ +opencode config +.*/config/opencode/opencode\.json` + tt.want}, nil)
		})
	}
}
