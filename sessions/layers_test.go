package sessions

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
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

// Each feature's state is a type of its own, coordinated by a thin store
// (issue 43): no type of the package (tests aside) has more than 40
// methods, and no interface more than 12 (the Backend is asked for by
// kind of state, backend.go). An interface's embedded interfaces of this package
// count with their methods.
func TestTypesStaySmall(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	require.NoError(t, err)
	methods := map[string]int{}
	ifaces := map[string]*ast.InterfaceType{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						continue
					}
					typ := d.Recv.List[0].Type
					if star, ok := typ.(*ast.StarExpr); ok {
						typ = star.X
					}
					if id, ok := typ.(*ast.Ident); ok {
						methods[id.Name]++
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						if ts, ok := spec.(*ast.TypeSpec); ok {
							if it, ok := ts.Type.(*ast.InterfaceType); ok {
								ifaces[ts.Name.Name] = it
							}
						}
					}
				}
			}
		}
	}
	require.Contains(t, methods, "Store", "the Store's methods are counted")
	for typ, n := range methods {
		assert.LessOrEqual(t, n, 40, "type %s has %d methods", typ, n)
	}
	var count func(it *ast.InterfaceType) int
	count = func(it *ast.InterfaceType) int {
		n := 0
		for _, m := range it.Methods.List {
			if _, ok := m.Type.(*ast.FuncType); ok {
				n += len(m.Names)
			} else if id, ok := m.Type.(*ast.Ident); ok && ifaces[id.Name] != nil {
				n += count(ifaces[id.Name])
			} else {
				n++ // an interface from elsewhere: at least one method
			}
		}
		return n
	}
	require.Contains(t, ifaces, "ParentRows", "the Backend's parts are counted")
	for name, it := range ifaces {
		assert.LessOrEqual(t, count(it), 12, "interface %s has %d methods", name, count(it))
	}
	t.Logf("Store: %d methods; %d types with methods, %d interfaces", methods["Store"], len(methods), len(ifaces))
}

// Files a reader can hold in mind (issue 50): no file of the domain, its
// persistence, its subagents or the handlers, tests and generated code
// aside, is over 500 lines.
func TestFilesStayShort(t *testing.T) {
	const maxLines = 500
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range []string{".", "../sessiondb", "../handlers", "../subagents"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, "no Go files in %s", dir)
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(name)
			require.NoError(t, err)
			f, err := parser.ParseFile(fset, name, src, parser.PackageClauseOnly|parser.ParseComments)
			require.NoError(t, err)
			if ast.IsGenerated(f) {
				continue
			}
			checked++
			lines := bytes.Count(src, []byte("\n"))
			if len(src) > 0 && src[len(src)-1] != '\n' {
				lines++
			}
			assert.LessOrEqual(t, lines, maxLines, "%s has %d lines", name, lines)
		}
	}
	t.Logf("%d files checked", checked)
}

// The domain drives no transaction (issue 50): sessiondb begins and ends
// each one, so no file of sessions (tests aside) names BeginWrite,
// Commit(, Rollback( or ReadTx, not even in a comment.
func TestNoTransactionsInTheDomain(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		for i, line := range strings.Split(string(src), "\n") {
			for _, word := range []string{"BeginWrite", "Commit(", "Rollback(", "ReadTx"} {
				assert.False(t, strings.Contains(line, word), "%s:%d names %s: %s", name, i+1, word, strings.TrimSpace(line))
			}
		}
	}
}
