package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set by `make build` with -ldflags "-X main.version=...";
// empty otherwise, and then the build info decides (buildVersion).
var version string

// buildInfo is what this binary knows about how it was built.
type buildInfo struct {
	// Version is what initialize and status report: the -ldflags version,
	// else the module version of `go install <module>/cmd/hookwire@v`,
	// else "devel" (with "+<revision>" and "-dirty" when known).
	Version string
	// Dev: a local build outside make (go build, go install from a
	// checkout, go run), not a release.
	Dev      bool
	Revision string // vcs.revision, when the build info has one
	Time     string // vcs.time
	Modified bool   // vcs.modified: built with uncommitted changes
	Go       string // the Go version that built it
}

// readBuildInfo decides the version from the -ldflags value and the
// binary's build info (nil when it has none).
//
// A build from a checkout records vcs.* settings, and since Go 1.24 also a
// pseudo-version as Main.Version; `go install module@version` builds from
// the module cache, with no vcs.* settings and Main.Version the version
// asked for. So vcs.revision, not Main.Version, tells a local build.
func readBuildInfo(ldflags string, bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Go: runtime.Version()}
	if bi != nil {
		if bi.GoVersion != "" {
			b.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	switch {
	case ldflags != "":
		b.Version = ldflags
	case b.Revision == "" && bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)":
		b.Version = bi.Main.Version
	default:
		b.Dev = true
		b.Version = "devel"
		if b.Revision != "" {
			b.Version += "+" + shortRevision(b.Revision)
		}
		if b.Modified {
			b.Version += "-dirty"
		}
	}
	return b
}

// String is the line `hookwire version` prints.
func (b buildInfo) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "hookwire %s", b.Version)
	if b.Dev {
		s.WriteString(" (development build")
		switch {
		case b.Revision == "":
			s.WriteString(", no VCS revision recorded")
		default:
			fmt.Fprintf(&s, " of revision %s", b.Revision)
			if b.Time != "" {
				fmt.Fprintf(&s, " from %s", b.Time)
			}
			if b.Modified {
				s.WriteString(", with uncommitted changes")
			}
		}
		s.WriteString(")")
	}
	fmt.Fprintf(&s, " %s %s/%s", b.Go, runtime.GOOS, runtime.GOARCH)
	return s.String()
}

func shortRevision(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// thisBuild is this binary's buildInfo.
func thisBuild() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return readBuildInfo(version, bi)
}
