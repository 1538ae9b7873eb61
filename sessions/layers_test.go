package sessions

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The domain does no IO (issue 30, two layers): the sessions package, as
// built (its tests aside), reaches no database, file system, process,
// network or logger; the SQLite persistence is package sessiondb.
//
// The standard library's fmt and time import os and syscall themselves, so
// the standard packages are checked against what sessions and the
// module's packages it depends on (core, internal/lru) import directly;
// the packages outside the standard library (modernc.org's SQLite,
// zerolog) are checked against every package sessions depends on, however
// indirectly.
func TestDomainDoesNoIO(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f",
		"{{if not .Standard}}{{.ImportPath}}\t{{join .Imports \" \"}}{{end}}", ".").CombinedOutput()
	require.NoError(t, err, "go list:\n%s", out)
	forbidden := func(pkg string) bool {
		switch pkg {
		case "database/sql", "os", "os/exec", "io/fs", "path/filepath", "net", "syscall":
			return true
		}
		return strings.HasPrefix(pkg, "net/") || strings.HasPrefix(pkg, "database/") ||
			pkg == "modernc.org" || strings.HasPrefix(pkg, "modernc.org/") ||
			pkg == "github.com/rs/zerolog" || strings.HasPrefix(pkg, "github.com/rs/zerolog/")
	}
	var checked []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, "\t")
		checked = append(checked, pkg)
		require.False(t, forbidden(pkg), "sessions depends on %s", pkg)
		for imp := range strings.FieldsSeq(imports) {
			require.False(t, forbidden(imp), "%s imports %s", pkg, imp)
		}
	}
	require.Contains(t, checked, "github.com/hookwire/hookwire/sessions")
	t.Logf("checked %s", strings.Join(checked, ", "))
}

// The domain package names its files for what they hold, not for the
// database (issue 43): no db*.go here; persistence is sessiondb's.
func TestNoDatabaseFilesInTheDomain(t *testing.T) {
	files, err := filepath.Glob("db*.go")
	require.NoError(t, err)
	assert.Empty(t, files)
}
