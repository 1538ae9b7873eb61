package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessiondb"
)

// doctor reads the state file from the plugin's args option in every
// spelling the sidecar accepts (issue 39, item 10): before, only --state X
// and --state=X were read and the others fell back to the project's file.
func TestDoctorStateFromArgsSpellings(t *testing.T) {
	tests := []struct {
		name string
		args func(e *doctorEnv, file, other string) string // the args option as JSON
		want func(e *doctorEnv, file, other string) string // the state file doctor must name
		fail string                                        // or a failure line it must print
	}{
		{"--state X", func(e *doctorEnv, f, _ string) string { return `["--state","` + f + `"]` }, chosenFile, ""},
		{"--state=X", func(e *doctorEnv, f, _ string) string { return `["--state=` + f + `"]` }, chosenFile, ""},
		{"-state X", func(e *doctorEnv, f, _ string) string { return `["-state","` + f + `"]` }, chosenFile, ""},
		{"-state=X", func(e *doctorEnv, f, _ string) string { return `["-state=` + f + `"]` }, chosenFile, ""},
		{"after a flag with a value", func(e *doctorEnv, f, _ string) string { return `["--log-level","debug","-state","` + f + `"]` }, chosenFile, ""},
		{"the last of two wins", func(e *doctorEnv, f, o string) string { return `["--state","` + o + `","--state","` + f + `"]` }, chosenFile, ""},
		{"--project DIR", func(e *doctorEnv, _, o string) string { return `["--project","` + o + `"]` }, projectFile, ""},
		{"--project=DIR", func(e *doctorEnv, _, o string) string { return `["--project=` + o + `"]` }, projectFile, ""},
		{"-project DIR", func(e *doctorEnv, _, o string) string { return `["-project","` + o + `"]` }, projectFile, ""},
		{"-project=DIR", func(e *doctorEnv, _, o string) string { return `["-project=` + o + `"]` }, projectFile, ""},
		{"both: refused as the sidecar refuses it", func(e *doctorEnv, f, o string) string { return `["--state","` + f + `","--project","` + o + `"]` }, nil,
			`^FAIL +state file +no state file path \(the plugin option args in .*\): args give both --state and --project.* Fix: correct the plugin option args`},
		{"a flag without its value", func(e *doctorEnv, _, _ string) string { return `["--log-level","debug","-state"]` }, nil,
			`^FAIL +state file +no state file path \(the plugin option args in .*\): the sidecar refuses args .*flag needs an argument`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			e.sidecar("v0.3.0")
			file := filepath.Join(e.root, "elsewhere", "chosen.db")
			other := filepath.Join(e.root, "other-project")
			require.NoError(t, mkdirs(other))
			e.globalJSON(`{"plugin":[["hookwire-opencode",{"args":` + tt.args(e, file, other) + `}]]}`)
			_, stdout, stderr := runCmd("doctor", "--project", e.project)
			assert.Empty(t, stderr)
			if tt.fail != "" {
				assert.Regexp(t, regexp.MustCompile(`(?m)`+tt.fail), stdout)
				return
			}
			want := tt.want(e, file, other)
			def, err := sessiondb.ProjectStatePath(e.project)
			require.NoError(t, err)
			require.NotEqual(t, def, want)
			line := stateFileLine(stdout)
			assert.Contains(t, line, want, stdout)
			assert.Contains(t, line, "the plugin option args", stdout)
		})
	}
}

func chosenFile(_ *doctorEnv, file, _ string) string { return file }

func projectFile(t *doctorEnv, _, other string) string {
	p, err := sessiondb.ProjectStatePath(other)
	require.NoError(t.t, err)
	return p
}

func stateFileLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " state file ") {
			return l
		}
	}
	return ""
}
