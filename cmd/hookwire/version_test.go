package main

import (
	"debug/buildinfo"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadBuildInfo(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "-compiler", Value: "gc"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-11-30T12:00:00Z"},
			{Key: "vcs.modified", Value: modified},
		}
	}
	info := func(main string, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/hookwire/hookwire", Version: main}, Settings: settings}
	}
	tests := []struct {
		name    string
		ldflags string
		bi      *debug.BuildInfo
		version string
		dev     bool
		line    string // what `hookwire version` starts with
	}{
		{
			name:    "make build: the -ldflags version wins over everything",
			ldflags: "v1.2.3-4-gabcdef0-dirty", bi: info("v0.0.0-20261130120000-0123456789ab+dirty", vcs("true")),
			version: "v1.2.3-4-gabcdef0-dirty", line: "hookwire v1.2.3-4-gabcdef0-dirty go1.26.0 ",
		},
		{
			name: "go install module@v1.4.0: the module version, no VCS settings",
			bi:   info("v1.4.0", nil), version: "v1.4.0", line: "hookwire v1.4.0 go1.26.0 ",
		},
		{
			name: "go install module@main: a pseudo-version is still what was asked for",
			bi:   info("v1.4.1-0.20261130120000-0123456789ab", nil), version: "v1.4.1-0.20261130120000-0123456789ab",
			line: "hookwire v1.4.1-0.20261130120000-0123456789ab go1.26.0 ",
		},
		{
			name: "go build in a clean checkout (Go 1.24+ stamps a pseudo-version): a development build",
			bi:   info("v0.0.0-20261130120000-0123456789ab", vcs("false")), version: "devel+0123456789ab", dev: true,
			line: "hookwire devel+0123456789ab (development build of revision " + rev + " from 2026-11-30T12:00:00Z) go1.26.0 ",
		},
		{
			name: "go build with uncommitted changes",
			bi:   info("v0.0.0-20261130120000-0123456789ab+dirty", vcs("true")), version: "devel+0123456789ab-dirty", dev: true,
			line: "hookwire devel+0123456789ab-dirty (development build of revision " + rev + " from 2026-11-30T12:00:00Z, with uncommitted changes) go1.26.0 ",
		},
		{
			name: "go build outside a checkout (or -buildvcs=false): (devel), no revision",
			bi:   info("(devel)", nil), version: "devel", dev: true,
			line: "hookwire devel (development build, no VCS revision recorded) go1.26.0 ",
		},
		{
			name: "no build info at all",
			bi:   nil, version: "devel", dev: true,
			line: "hookwire devel (development build, no VCS revision recorded) " + runtime.Version() + " ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := readBuildInfo(tt.ldflags, tt.bi)
			assert.Equal(t, tt.version, b.Version)
			assert.Equal(t, tt.dev, b.Dev)
			assert.True(t, strings.HasPrefix(b.String(), tt.line), "%q\ndoes not start with\n%q", b.String(), tt.line)
			assert.True(t, strings.HasSuffix(b.String(), runtime.GOOS+"/"+runtime.GOARCH))
			assert.NotContains(t, b.String(), "0.1.0-dev")
		})
	}
}

// TestVersionFlags: every spelling prints the same line to stdout and
// exits 0; the test binary (go build in this checkout) says it is a
// development build with its revision; a build with make's -ldflags
// reports that version.
func TestVersionFlags(t *testing.T) {
	var lines []string
	for _, arg := range []string{"version", "--version", "-v", "-version"} {
		cmd := exec.Command(binPath, arg)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, arg)
		assert.Empty(t, stderr.String(), arg)
		lines = append(lines, string(out))
	}
	for _, l := range lines[1:] {
		assert.Equal(t, lines[0], l)
	}
	assert.Contains(t, lines[0], "development build")
	assert.NotContains(t, lines[0], "0.1.0-dev")
	// What the binary's own build info says (it has a revision unless
	// built with -buildvcs=false or outside a checkout).
	bi, err := buildinfo.ReadFile(binPath)
	require.NoError(t, err)
	assert.Equal(t, readBuildInfo("", bi).String()+"\n", lines[0])
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			assert.Regexp(t, `^hookwire devel\+[0-9a-f]{12}(-dirty)? \(development build of revision [0-9a-f]{40}`, lines[0])
		}
	}

	bin := filepath.Join(t.TempDir(), "hookwire-ldflags")
	out, err := goBuild("-ldflags", "-X main.version=v9.8.7", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(out), "hookwire v9.8.7 go"), "%q", out)
	// Built as make builds (-trimpath): the build info holds no -ldflags
	// (golang/go#52372), and the version is read from the symbols.
	b, ok := hookwireBuild(bin)
	require.True(t, ok)
	assert.Equal(t, "v9.8.7", b.Version)
	assert.Equal(t, "v9.8.7", stampedVersion(bin))
	assert.Empty(t, stampedVersion(binPath), "a build without -X main.version")
}
