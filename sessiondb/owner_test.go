package sessiondb

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The database has one owner: no code outside sessiondb (tests that plant
// damaged files aside) opens SQLite or speaks SQL; tools that make
// databases go through Import.
func TestSQLOnlyInSessiondb(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	var offenders []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git", "testdata", "sessiondb":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "database/sql" || strings.HasPrefix(p, "modernc.org/sqlite") {
				rel, _ := filepath.Rel(root, path)
				offenders = append(offenders, rel+" imports "+p)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, offenders)
}
